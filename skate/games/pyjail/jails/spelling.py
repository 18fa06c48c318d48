"""The base of PyJail's jail writer (:class:`~skate.games.pyjail.jails.writer._Writer`):
:class:`_Spelling` holds the writer's choices, drawn from an rng, and how it spells each part of
a jail: the names it takes, literals, messages and signatures, the constants that state the rules
and every input check (the text checks and the walk over the syntax tree), each in one of several
equivalent forms. The words themselves come from :mod:`~skate.games.pyjail.jails.wording`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from skate.games.pyjail.jails.model import Rules
from skate.games.pyjail.jails.wording import (
    _CHAR_VARS,
    _CHARS_CONST,
    _CODE_VARS,
    _ERR_VARS,
    _FILENAMES,
    _HELPERS,
    _HITS_VARS,
    _LEN_CONST,
    _LOWER_VARS,
    _MSG_ASCII,
    _MSG_CHAR,
    _MSG_CHAR_PREFIX,
    _MSG_LONG,
    _MSG_LONG_PREFIX,
    _MSG_NAME_PREFIX,
    _MSG_NODE_PREFIX,
    _MSG_STR,
    _MSG_SYNTAX,
    _MSG_WORD,
    _MSG_WORD_PREFIX,
    _NAMES_CONST,
    _NODE_VARS,
    _NODES_CONST,
    _OUT_VARS,
    _REFUSE_FUNCS,
    _RES_VARS,
    _SAFE_CONST,
    _SIZE_VARS,
    _STRS_CONST,
    _THEMES,
    _TREE_VARS,
    _WORD_VARS,
    _WORDS_CONST,
)


def _indent(lines: Iterable[str], depth: int = 1) -> list[str]:
    pad = "    " * depth
    return [pad + line if line else line for line in lines]


class _Spelling:
    """The writer's choices and spellings: every name, literal, message, constant and input check
    of a jail, each drawn from the rng; :class:`~skate.games.pyjail.jails.writer._Writer` puts
    them together in one of its shapes."""

    def __init__(self, kind: str, rules: Rules, rng: np.random.Generator) -> None:
        self.kind, self.rules, self.rng = kind, rules, rng
        self.taken: set[str] = {"jail", "user_input", "os", "ast", "io", "contextlib", "builtins"}
        fresh = self.fresh
        self.names = {
            "words": fresh(_WORDS_CONST),
            "chars": fresh(_CHARS_CONST),
            "len": fresh(_LEN_CONST),
            "nodes": fresh(_NODES_CONST),
            "bnames": fresh(_NAMES_CONST),
            "strs": fresh(_STRS_CONST),
            "safe": fresh(_SAFE_CONST),
            "helper": fresh(_HELPERS),
            "code": fresh(_CODE_VARS),
            "out": fresh(_OUT_VARS),
            "err": fresh(_ERR_VARS),
            "res": fresh(_RES_VARS),
        }
        self.q = self.pick(("'", '"'))  # the quote the jail's string literals prefer
        self.fmt = self.pick(("f", "pct", "format", "plus"))  # how a message embeds a value
        self.typed = self.coin(0.65)  # annotations on the functions
        place, guard, tag = _THEMES[int(rng.integers(len(_THEMES)))]
        self.theme = {
            "place": place,
            "Place": place[0].upper() + place[1:],
            "guard": guard,
            "Guard": guard[0].upper() + guard[1:],
            "tag": tag,
        }
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
            value = repr(r.banned_chars) if form == "str" else self._items(list(r.banned_chars), (form,))
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
            options = [
                f"any({w} in {t} for {w} in {words})",
                f"any(map({t}.__contains__, {words}))",
                f"not all({w} not in {t} for {w} in {words})",
                f"any({t}.find({w}) != -1 for {w} in {words})",
            ]
            if not boolean:
                options.append(f"[{w} for {w} in {words} if {w} in {t}]")
            return self.pick(options)
        chars, c = n["chars"], self.local(_CHAR_VARS)
        options = [
            f"any({c} in {chars} for {c} in {v})",
            f"any({c} in {v} for {c} in {chars})",
            f"not set({v}).isdisjoint({chars})",
        ]
        if not boolean:
            options.append(f"set({v}) & set({chars})")
        return self.pick(options)

    def check_block(self, check: str, v: str, emit: Callable[[str], str]) -> list[str]:
        """Statements that end with ``emit(message)`` when the text ``v`` fails ``check``."""
        n = self.names
        if check == "len":
            if self.coin(0.3):
                size = self.fresh(_SIZE_VARS)
                return [
                    f"{size} = len({v})",
                    f"if {size} > {n['len']}:",
                    "    " + emit(self.fmessage(_MSG_LONG_PREFIX, size, "s")),
                ]
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
                return lines + [
                    f"for {w} in {words}:",
                    f"    if {test}:",
                    "        " + emit(self.fmessage(_MSG_WORD_PREFIX, w)),
                ]
            if form == "any":
                return lines + [f"if {self.bad('words', v, target=t)}:", "    " + emit(self.message(_MSG_WORD))]
            hits = self.fresh(_HITS_VARS)
            return lines + [
                f"{hits} = [{w} for {w} in {words} if {w} in {t}]",
                f"if {hits}:",
                "    " + emit(self.fmessage(_MSG_WORD_PREFIX, hits, "s")),
            ]
        chars, c = n["chars"], self.local(_CHAR_VARS)
        form = self.choose("chars", ("loop_in", "loop_set", "any", "found"))
        if form == "loop_in":
            return [
                f"for {c} in {v}:",
                f"    if {c} in {chars}:",
                "        " + emit(self.fmessage(_MSG_CHAR_PREFIX, c)),
            ]
        if form == "loop_set":
            return [
                f"for {c} in {chars}:",
                f"    if {c} in {v}:",
                "        " + emit(self.fmessage(_MSG_CHAR_PREFIX, c)),
            ]
        if form == "any":
            return [f"if {self.bad('chars', v)}:", "    " + emit(self.message(_MSG_CHAR))]
        found = self.fresh(_HITS_VARS)
        return [
            f"{found} = set({v}) & set({chars})",
            f"if {found}:",
            "    " + emit(self.fmessage(_MSG_CHAR_PREFIX, f"sorted({found})", "s")),
        ]

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
                cond = pick((f"type({node}).__name__ in {nodes}", f"{node}.__class__.__name__ in {nodes}"))
            out.append((cond, self.fmessage(_MSG_NODE_PREFIX, f"type({node}).__name__", "s")))
        if r.banned_names:
            names = n["bnames"]
            cond = pick(
                (
                    f"isinstance({node}, ast.Name) and {node}.id in {names}",
                    f"type({node}) is ast.Name and {node}.id in {names}",
                    f"getattr({node}, {self.lit('id')}, None) in {names}",
                )
            )
            out.append((cond, self.fmessage(_MSG_NAME_PREFIX, f"{node}.id", "s")))
        if r.no_strings:
            off, const = f"not {n['strs']}", f"isinstance({node}, ast.Constant)"
            exact, text = f"type({node}) is ast.Constant", f"isinstance({node}.value, str)"
            cond = pick(
                (
                    f"{off} and {const} and {text}",
                    f"{const} and type({node}.value) is str and {off}",
                    f"{off} and {exact} and {text}",
                )
            )
            out.append((cond, self.message(_MSG_STR)))
        return out

    def parse_lines(self, v: str, tree: str, on_error: Callable[[str], list[str]]) -> list[str]:
        mode = self.lit(self.rules.mode)
        name = self.lit(self.pick(_FILENAMES))
        call = self.pick(
            (
                f"ast.parse({v}, mode={mode})",
                f"ast.parse({v}, {name}, {mode})",
                f"ast.parse({v}, filename={name}, mode={mode})",
            )
        )
        return ["try:", f"    {tree} = {call}", "except SyntaxError:"] + _indent(on_error(self.message(_MSG_SYNTAX)))

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

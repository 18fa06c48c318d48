"""The writer of PyJail jail source: :class:`_Writer` renders some rules as a jail.

The rules fix what the jail does; the writer picks how the source says it, drawing every name,
message and piece of flavour text from :mod:`~skate.games.pyjail.jails.wording`.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from skate.games.pyjail.jails.model import Rules
from skate.games.pyjail.jails.wording import (
    _BANNERS, _BANNER_FUNCS, _CHARS_CONST, _CHAR_VARS, _CHECK_DOCS, _CHECK_FUNCS, _CLASS_DOCS,
    _CODE_VARS, _DONE, _ENV_VARS, _ERR_VARS, _EXC_CLASSES, _EXC_DOCS, _EXC_VARS, _FILENAMES,
    _FOOTERS, _GUARD_CLASSES, _GUARD_VARS, _HANDLES, _HELPERS, _HELPER_DOCS, _HITS_VARS,
    _JAIL_DOCS, _LEN_CONST, _LOWER_VARS, _MASKS, _MSG_ASCII, _MSG_CHAR, _MSG_CHAR_PREFIX,
    _MSG_GENERIC, _MSG_LONG, _MSG_LONG_PREFIX, _MSG_NAME_PREFIX, _MSG_NODE_PREFIX, _MSG_STR,
    _MSG_SYNTAX, _MSG_WORD, _MSG_WORD_PREFIX, _NAMES_CONST, _NODES_CONST, _NODE_VARS, _OUT_VARS,
    _PARAM_VARS, _PRINTED_VARS, _PROMPTS, _REFUSE_FUNCS, _RES_VARS, _RULE_HEADS, _RULE_TEXT,
    _RULE_VARS, _RUN_DOCS, _RUN_FUNCS, _SAFE_CONST, _SECRET_VARS, _SHOWN_VARS, _SIZE_VARS, _STORY,
    _STRS_CONST, _THEMES, _TITLES, _TREE_VARS, _VALIDATORS, _WHY_VARS, _WORDS_CONST, _WORD_VARS,
    _sample,
)


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

"""The writer of PyJail jail source: :class:`_Writer` renders some rules as a jail.

The rules fix what the jail does; the writer picks how the source says it, drawing every name,
message and piece of flavour text from :mod:`~skate.games.pyjail.jails.wording`.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from skate.games.pyjail.jails.spelling import _indent, _Spelling
from skate.games.pyjail.jails.wording import (
    _BANNER_FUNCS,
    _BANNERS,
    _CHAR_VARS,
    _CHECK_DOCS,
    _CHECK_FUNCS,
    _CLASS_DOCS,
    _DONE,
    _ENV_VARS,
    _EXC_CLASSES,
    _EXC_DOCS,
    _EXC_VARS,
    _FILENAMES,
    _FOOTERS,
    _GUARD_CLASSES,
    _GUARD_VARS,
    _HANDLES,
    _HELPER_DOCS,
    _JAIL_DOCS,
    _MASKS,
    _MSG_ASCII,
    _MSG_CHAR,
    _MSG_GENERIC,
    _MSG_LONG,
    _MSG_WORD,
    _PARAM_VARS,
    _PRINTED_VARS,
    _PROMPTS,
    _RULE_HEADS,
    _RULE_TEXT,
    _RULE_VARS,
    _RUN_DOCS,
    _RUN_FUNCS,
    _SECRET_VARS,
    _SHOWN_VARS,
    _STORY,
    _TITLES,
    _TREE_VARS,
    _VALIDATORS,
    _WHY_VARS,
    _WORD_VARS,
    _sample,
)

_MESSAGES = {"len": _MSG_LONG, "ascii": _MSG_ASCII, "words": _MSG_WORD, "chars": _MSG_CHAR}


class _Writer(_Spelling):
    """Renders rules as jail source, with every surface detail drawn from an rng.

    The rules fix what the jail does; the writer only picks how the source says it: an overall
    shape (checks inline in ``jail``, in predicate or reason functions, in one validator that
    returns or raises, in a guard class, or in one combined condition), one of several
    equivalent spellings of every check, of the run block and of the censoring helper, how the
    constants are written, the names of everything, the wording of the messages and the flavour
    text (docstring, refusal prefix, banner, a ``__main__`` block that the sandbox never runs).
    """

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

    def _guard_class(self, attr: str, init_extra: list[str], method: str, body: list[str]) -> str:
        cls, p = self.fresh(_GUARD_CLASSES), self._param()
        init = [self.sig("__init__", [("self", None), (p, "str")], "None"), f"    self.{attr} = {p}"] + [
            "    " + x for x in init_extra
        ]
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
        shape = self.choose(
            "checks", ("inline", "inline", "predicates", "reasons", "validator", "raises", "guard", "gate")
        )
        if shape == "inline":
            return [line for c in checks for line in self.check_block(c, code, self.refusal)]
        if shape == "gate":
            cond = " or ".join(self.bad(c, code) for c in checks)
            if self.coin(0.5):
                return [f"if {cond}:", "    " + self.refusal(self.message(_MSG_GENERIC))]
            ok = self.fresh(("allowed", "acceptable", "ok", "clean", "passes"))
            return [f"{ok} = not ({cond})", f"if not {ok}:", "    " + self.refusal(self.message(_MSG_GENERIC))]
        if shape == "predicates":
            lines = []
            for c in checks:
                fn, p = self.fresh(_CHECK_FUNCS[c]), self._param()
                if c == "words" and self.coin(0.4):
                    t = f"{p}.lower()" if self.rules.ignore_case else p
                    w = self.local(_WORD_VARS)
                    body = [
                        f"for {w} in {self.names['words']}:",
                        f"    if {w} in {t}:",
                        "        return True",
                        "return False",
                    ]
                elif c == "chars" and self.coin(0.4):
                    ch = self.local(_CHAR_VARS)
                    body = [
                        f"for {ch} in {p}:",
                        f"    if {ch} in {self.names['chars']}:",
                        "        return True",
                        "return False",
                    ]
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
                self.defs.append([self.sig(fn, [(p, "str")], "str" if empty else "str | None")] + _indent(body))
                fns.append(fn)
            if len(fns) > 1 and self.coin(0.6):
                rule, why = self.fresh(_RULE_VARS), self.fresh(_WHY_VARS)
                return [
                    f"for {rule} in ({', '.join(fns)}):",
                    f"    {why} = {rule}({code})",
                    f"    if {why}:",
                    "        " + self.refusal(why),
                ]
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
            return ["try:", f"    {fn}({code})", f"except {exc} as {e}:", "    " + self.refusal(f"str({e})")]
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
        return [f"{why} = next({cls}({code}).{method}(), None)", f"if {why} is not None:", "    " + self.refusal(why)]

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
            body = (
                self.doc(("Parse the attempt; return its tree if every node is allowed.",), 0.5)
                + self.parse_lines(p, inner, lambda m: [f"raise {exc}({m}) from None"])
                + self.walk_lines(inner, lambda m: f"raise {exc}({m})")
                + [f"return {inner}"]
            )
            self.defs.append([self.sig(fn, [(p, "str")], "ast.AST")] + _indent(body))
            e = self.fresh(_EXC_VARS)
            return [
                "try:",
                f"    {tree} = {fn}({code})",
                f"except {exc} as {e}:",
                "    " + self.refusal(f"str({e})"),
            ], tree
        attr = self.pick(("text", "source", "attempt", "raw"))
        method = self.pick(("problems", "violations", "complaints", "reasons"))
        body = self.parse_lines(f"self.{attr}", "self.tree", lambda m: [f"yield {m}", "return"]) + self.walk_lines(
            "self.tree", lambda m: f"yield {m}"
        )
        cls = self._guard_class(attr, ["self.tree = None"], method, body)
        guard, why = self.fresh(_GUARD_VARS), self.fresh(_WHY_VARS)
        if self.coin(0.5):
            check = [f"for {why} in {guard}.{method}():", "    " + self.refusal(why)]
        else:
            check = [f"{why} = next({guard}.{method}(), None)", f"if {why} is not None:", "    " + self.refusal(why)]
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
        value = self.pick((f"getattr(builtins, {k})", f"vars(builtins)[{k}]", f"builtins.__dict__[{k}]"))
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
            return lines + self.pick(([f"return {helper}(str(eval({args})))"], [run, f"return {helper}(str({res}))"]))
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
        shown_exc = self.pick(
            (f"f{q}{{type({e}).__name__}}: {{{e}}}{q}", f"{q}{{}}: {{}}{q}.format(type({e}).__name__, {e})")
        )
        if r.censor == 3:
            head = [f"{out} = {sio}"]
            body = [f"with {rso}({out}):", "    " + run]
            caught = "Exception"
        else:
            head = self.pick(([f"{out}, {err} = {sio}, {sio}"], [f"{out} = {sio}", f"{err} = {sio}"]))
            form = self.choose("with", ("one", "nested", "parens"))
            if form == "one":
                body = [f"with {rso}({out}), {rse}({err}):", "    " + run]
            elif form == "nested":
                body = [f"with {rso}({out}):", f"    with {rse}({err}):", "        " + run]
            else:
                body = ["with (", f"    {rso}({out}),", f"    {rse}({err}),", "):", "    " + run]
            caught = "BaseException"
        lines += head + ["try:"] + _indent(body) + [f"except {caught} as {e}:", f"    return {helper}({shown_exc})"]
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
        getter = pick(
            (
                f"os.environ.get({flag}, {empty})",
                f"os.getenv({flag}, {empty})",
                f"os.getenv({flag})",
                f"os.environ.get({flag}) or {empty}",
            )
        )
        word = pick(_MASKS)
        mask = f"{lit(word)} * len({secret})" if len(word) == 1 else lit(word)
        form = self.choose("helper", ("ternary", "guard", "split", "assign"))
        if form == "ternary":
            body = [f"return {p}.replace({secret}, {mask}) if {secret} else {p}"]
        elif form == "guard":
            body = [f"if not {secret}:", f"    return {p}", f"return {p}.replace({secret}, {mask})"]
        elif form == "split":
            joiner = f"({mask})" if "*" in mask else mask
            body = [f"if not {secret}:", f"    return {p}", f"return {joiner}.join({p}.split({secret}))"]
        else:
            body = [f"if {secret}:", f"    {p} = {p}.replace({secret}, {mask})", f"return {p}"]
        return [self.sig(n["helper"], [(p, "str")], "str")] + _indent(
            self.doc(_HELPER_DOCS, 0.7) + ([] if top_os else ["import os"]) + [f"{secret} = {getter}"] + body
        )

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
            parts.append(
                "\n".join(f.format(handle=pick(_HANDLES), points=points) for f in _sample(self.rng, _FOOTERS, k))
            )
        if not parts:
            return [f'"""{title}"""']
        return [f'"""{title}', ""] + "\n\n".join(parts).split("\n") + ['"""']

    def refuse_def(self) -> list[str]:
        assert self.refuse is not None, "refuse_def is written only once a refusal has called it"
        p, q, t = self.pick(("reason", "why_text", "what", "detail")), self.q, self.theme
        body = self.pick(
            (
                f"return f{q}[{t['tag']}] {{{p}}}{q}",
                f"return {self.lit(t['tag'] + ': ')} + {p}",
                f"return f{q}{{{p}}} ({t['guard']} says no){q}",
                f"return {self.lit('Refused - ')} + {p}",
            )
        )
        return [self.sig(self.refuse, [(p, "str")], "str")] + _indent(
            self.doc(("Every refusal goes out through here.", "Format a refusal."), 0.4) + [body]
        )

    def main_block(self) -> list[str]:
        lines = [f"if __name__ == {self.lit('__main__')}:"]
        if self.coin(0.5):
            name = self.fresh(_BANNER_FUNCS)
            self.defs.append(
                [self.sig(name, [], "str"), f"    return {self.lit(self.pick(_BANNERS).format(**self.theme))}"]
            )
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
            body.append(self.pick((f"{code} = user_input[:{n['len']}]", f"{code} = user_input[0:{n['len']}]")))
        elif self.coin(0.2):
            code = "user_input"
        else:
            body.append(self.pick((f"{code} = user_input", f"{code} = user_input", f"{code} = str(user_input)")))
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
            self.defs.append(
                [self.sig(fn, [(p, "object" if tree else "str")], "str")] + _indent(self.doc(_RUN_DOCS, 0.4) + run)
            )
            body.append(f"return {fn}({target})")
        else:
            body += self.run_lines(target, ns)
        # os at the top only where the input cannot see the jail's globals, or is meant to
        top_os = "os" in r.scope or (ns not in (None, "globals()") and r.censor >= 1 and self.coin(0.4))
        main = self.main_block() if self.coin(0.4) else []
        self.traits |= {
            f"censor:{r.censor}",
            f"from_imports:{self.from_imports and r.censor >= 2}",
            f"refuse:{self.refuse_used}",
            f"main:{bool(main)}",
            f"top_os:{top_os}",
        }
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

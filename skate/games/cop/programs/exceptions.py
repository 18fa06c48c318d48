"""Templates for ``exceptions`` programs: the variants registered for this kind, and their helpers.

Variants, in registration order (the order the drafting loop draws from):

- order of try, except, else and finally clauses
- different built-in exception types caught by type
- custom exceptions raised from functions
- finally blocks that run while returning
"""

from __future__ import annotations

from skate.games.cop.programs.kit import _FUNCS, _SEQS, _WORDS, _Ctx, _variant, _Writer


@_variant("exceptions", "order of try, except, else and finally clauses")
def _exceptions_flow(ctx: _Ctx, w: _Writer) -> str:
    log = ctx.name(("log", "trace", "events", "steps"))
    x = ctx.name(("x", "d", "div", "v"))
    items = ctx.name(_SEQS)
    data = ctx.ints(ctx.scaled(1, 5), 0, 4)
    if 0 not in data:
        data[ctx.randint(0, len(data) - 1)] = 0
    num = ctx.randint(6, 60)
    w(f"{log} = []")
    raises = False
    if ctx.d < 0.25:
        risky, caught = ctx.pick(
            (
                (f"{num} // {data[0]}", ctx.pick(("ZeroDivisionError", "ArithmeticError"))),
                (f"int({ctx.pick(_WORDS)!r})", "ValueError"),
                (f"[{num}, {num + 1}][{ctx.randint(1, 3)}]", ctx.pick(("IndexError", "LookupError"))),
                (f"{{{ctx.pick(_WORDS)!r}: {num}}}[{ctx.pick(_WORDS)!r}]", ctx.pick(("KeyError", "LookupError"))),
            )
        )
        with w.block("try:"):
            w(f"{log}.append({risky})")
        with w.block(f"except {caught}:"):
            w(f"{log}.append({ctx.pick(('oops', 'zero', 'missing', 'failed', 'caught'))!r})")
        if ctx.chance(0.5):
            with w.block("else:"):
                w(f"{log}.append({ctx.pick(('ok', 'fine', 'done'))!r})")
        return log
    w(f"{items} = {data!r}")
    with w.block(f"for {x} in {items}:"):
        with w.block("try:"):
            w(f"{log}.append({num} // {x})")
            if ctx.hard(0.5):
                with w.block(f"if {x} == {ctx.randint(1, 4)}:"):
                    jump = ctx.pick(("break", "continue", f"raise ValueError({x})"))
                    raises = jump.startswith("raise")
                    w(jump)
        with w.block("except ZeroDivisionError:"):
            w(f"{log}.append({ctx.pick(_WORDS)!r})")
        if raises:
            with w.block("except ValueError as err:"):
                w(f"{log}.append(-err.args[0])")
        if ctx.chance(0.5):
            with w.block("else:"):
                w(f"{log}.append({ctx.pick(('ok', '+', 'fine', 'yes'))!r})")
        if ctx.hard(0.8):
            with w.block("finally:"):
                w(f"{log}.append({ctx.pick(('.', 'end', 'f', '|'))!r})")
    return log


@_variant("exceptions", "different built-in exception types caught by type")
def _exceptions_types(ctx: _Ctx, w: _Writer) -> str:
    results = ctx.name(("results", "outcomes", "caught", "report"))
    op = ctx.name(("op", "task", "job", "probe"))
    table = ctx.name(("table", "lookup", "prices"))
    known = ctx.pick(_WORDS)
    w(f"{table} = {{{known!r}: {ctx.randint(1, 9)}}}")
    cases = [
        (f"int({str(ctx.randint(1, 99))!r})", None),
        (f"int({ctx.pick(_WORDS)!r})", "ValueError"),
        (f"{table}[{known!r}]", None),
        (f"{table}[{ctx.pick([x for x in _WORDS if x != known])!r}]", "KeyError"),
        (f"[1, 2, 3][{ctx.randint(3, 6)}]", "IndexError"),
        (f"{ctx.randint(1, 9)} // 0", "ZeroDivisionError"),
        (f"'{ctx.pick(_WORDS)}' + {ctx.randint(1, 9)}", "TypeError"),
        (f"len({ctx.pick(_WORDS)!r}) * {ctx.randint(2, 4)}", None),
    ]
    chosen = ctx.sample(cases, ctx.scaled(1, 5))
    if ctx.d < 0.25:
        expr, _ = chosen[0]
        with w.block("try:"):
            w(f"{results} = {expr}")
        with w.block("except Exception as e:"):
            w(f"{results} = type(e).__name__")
        return results
    ops = ctx.name(("ops", "tasks", "jobs", "probes", "thunks"))
    w(f"{results} = []")
    w(f"{ops} = [{', '.join(f'lambda: {expr}' for expr, _ in chosen)}]")
    with w.block(f"for {op} in {ops}:"):
        with w.block("try:"):
            w(f"{results}.append({op}())")
        if ctx.hard(0.7):
            with w.block("except (KeyError, IndexError) as e:"):
                w(f"{results}.append('lookup:' + type(e).__name__[0])")
        with w.block("except ArithmeticError:"):
            w(f"{results}.append('math')")
        with w.block("except Exception as e:"):
            w(f"{results}.append(type(e).__name__)")
    return results


@_variant("exceptions", "custom exceptions raised from functions")
def _exceptions_custom(ctx: _Ctx, w: _Writer) -> str:
    base = ctx.name(("AppError", "GameError", "BadInput", "Fault"))
    child = ctx.name(("TooSmall", "TooBig", "Overflow", "Drained"))
    if ctx.d < 0.3:
        with w.block(f"class {child}(Exception):"):
            w("pass")
        check = ctx.name(("check", "validate", "guard"))
        v = ctx.name(("v", "value", "n"))
        out = ctx.name(("out", "seen", "log"))
        with w.block(f"def {check}({v}):"):
            with w.block(f"if {v} < {ctx.randint(2, 5)}:"):
                w(f"raise {child}()")
            w(f"return {v} - 1")
        with w.block("try:"):
            w(f"{out} = {check}({ctx.randint(0, 8)})")
        with w.block(f"except {child}:"):
            w(f"{out} = {ctx.pick(('low', 'small', 'nope'))!r}")
        return out
    with w.block(f"class {base}(Exception):"):
        w("pass")
    with w.block(f"class {child}({base}):"):
        w("pass")
    check, v = ctx.name(("check", "validate", "guard", "inspect")), ctx.name(("v", "value", "n"))
    lo, hi = ctx.randint(1, 4), ctx.randint(6, 12)
    with w.block(f"def {check}({v}):"):
        with w.block(f"if {v} < {lo}:"):
            w(f"raise {child}({v})")
        if ctx.d >= 0.3:
            with w.block(f"if {v} > {hi}:"):
                w(f"raise {base}({v} * {ctx.randint(2, 3)})")
        w(f"return {v} * {ctx.randint(2, 5)}")
    out, x = ctx.name(("out", "seen", "log")), ctx.name(("x", "val", "item"))
    data = ctx.ints(ctx.scaled(2, 6), 0, 14)
    w(f"{out} = []")
    with w.block(f"for {x} in {data!r}:"):
        with w.block("try:"):
            w(f"{out}.append({check}({x}))")
        order = [child, base] if ctx.chance(0.6) else [base, child]
        for idx, exc in enumerate(order):
            with w.block(f"except {exc} as err:"):
                w(f"{out}.append({('small', 'low', 'tiny')[idx] if exc == child else 'bad'!r} + str(err.args[0]))")
        if ctx.hard(0.6):
            with w.block("finally:"):
                w(f"{out}.append({x})" if ctx.chance(0.3) else f"{out}.append('.')")
    if ctx.hard(0.5):
        outer = ctx.name(_FUNCS)
        with w.block(f"def {outer}({v}):"):
            with w.block("try:"):
                w(f"return {check}({v})")
            with w.block(f"except {base}:"):
                w(f"raise ValueError({v}) from None")
        with w.block("try:"):
            w(f"{outer}({ctx.pick((0, 99))})")
        with w.block("except ValueError as e:"):
            w(f"{out}.append(type(e).__name__)")
    return out


@_variant("exceptions", "finally blocks that run while returning")
def _exceptions_finally(ctx: _Ctx, w: _Writer) -> str:
    f, x, log = ctx.name(_FUNCS), ctx.name(("x", "n", "v")), ctx.name(("log", "trace", "events"))
    w(f"{log} = []")
    with w.block(f"def {f}({x}):"):
        with w.block("try:"):
            if ctx.d >= 0.3:
                with w.block(f"if {x} % {ctx.randint(2, 3)} == 0:"):
                    w(f"raise ValueError({x})")
            w(f"{log}.append('try')", f"return {x} * {ctx.randint(2, 5)}")
        if ctx.d >= 0.3:
            with w.block("except ValueError:"):
                w(f"{log}.append('except')", f"return -{x}")
        with w.block("finally:"):
            w(f"{log}.append('finally')")
            if ctx.hard(0.5):
                with w.block(f"if {x} > {ctx.randint(3, 7)}:"):
                    w(f"{x} = 0")
    calls = [f"{f}({ctx.randint(1, 9)})" for _ in range(ctx.scaled(1, 4))]
    res = ctx.name(("res", "got", "outs"))
    w(f"{res} = [{', '.join(calls)}]")
    return f"{res}, {log}[-{ctx.randint(2, 4)}:]" if ctx.hard(0.5) else f"{res}, len({log})"

"""Templates for ``closures`` programs: the variants registered for this kind, and their helpers.

Variants, in registration order (the order the drafting loop draws from):

- counter factories sharing state through nonlocal
- late binding of loop variables in lambdas
- function factories and composition
- decorators and mutable default arguments keeping state
"""

from __future__ import annotations

from skate.games.cop.programs.kit import _FUNCS, _LOOPS, _SCALARS, _SHORT, _Ctx, _one_of, _variant, _Writer


@_variant("closures", "counter factories sharing state through nonlocal")
def _closures_counter(ctx: _Ctx, w: _Writer) -> str:
    make = ctx.name(("make_counter", "counter", "tracker", "make_meter", "make_tally"))
    state = ctx.name(_SCALARS)
    inner = ctx.name(_FUNCS)
    start = ctx.name(("start", "first", "init", "begin"))
    if ctx.d < 0.25:
        outer, y = ctx.name(_FUNCS), ctx.name(_SHORT)
        with w.block(f"def {outer}({y}):"):
            with w.block(f"def {inner}():"):
                w(f"return {y} * {ctx.randint(2, 5)}")
            w(f"return {inner}")
        return f"{outer}({ctx.randint(1, 9)})()"
    step = ctx.name(("step", "by", "inc", "amt"))
    with w.block(f"def {make}({start}):"):
        w(f"{state} = {start}")
        with w.block(f"def {inner}({step}={ctx.randint(1, 3)}):"):
            w(f"nonlocal {state}")
            if ctx.hard(0.5):
                with w.block(f"if {state} > {ctx.randint(8, 20)}:"):
                    w(f"{state} = {state} % {ctx.randint(3, 7)}")
            w(f"{state} += {step}", f"return {state}")
        w(f"return {inner}")
    counters = ctx.names(("c1", "c2", "tick", "tock", "alpha", "beta", "left", "right"), ctx.scaled(1, 3))
    for c in counters:
        w(f"{c} = {make}({ctx.randint(0, 10)})")
    calls = []
    for _ in range(ctx.scaled(2, 6)):
        c = ctx.pick(counters)
        calls.append(f"{c}({ctx.randint(1, 5)})" if ctx.chance(0.5) else f"{c}()")
    if ctx.hard(0.6):
        k, log = ctx.name(_LOOPS), ctx.name(("log", "seen", "trace"))
        w(f"{log} = []")
        with w.block(f"for {k} in range({ctx.randint(2, 4)}):"):
            w(f"{log}.append({ctx.pick(counters)}({k}))")
        calls.append(log)
    return ", ".join(calls)


@_variant("closures", "late binding of loop variables in lambdas")
def _closures_late(ctx: _Ctx, w: _Writer) -> str:
    fs = ctx.name(("fs", "funcs", "ops", "makers", "handlers"))
    i = ctx.name(_LOOPS)
    x = ctx.name(("x", "arg", "val"))
    fn = ctx.name(("fn", "op", "h", "fx"))
    n = ctx.scaled(2, 5)
    body = ctx.pick((f"{x} + {i}", f"{x} * {i}", f"{x} - {i} * 2", f"{i} ** 2 + {x}"))
    capture = ctx.hard(0.6)
    arg = ctx.randint(1, 9)
    if ctx.d < 0.25:
        w(f"{fs} = []")
        with w.block(f"for {i} in range({n}):"):
            w(f"{fs}.append({i} * {ctx.randint(2, 4)})")
        return f"[{fn} + {arg} for {fn} in {fs}]"
    if ctx.chance(0.5):
        w(f"{fs} = [lambda {x}: {body} for {i} in range({n})]")
    else:
        w(f"{fs} = []")
        with w.block(f"for {i} in range({n}):"):
            w(f"{fs}.append(lambda {x}: {body})")
    results = [f"[{fn}({arg}) for {fn} in {fs}]"]
    if capture:
        gs = ctx.name(("gs", "fixed", "bound", "pinned"))
        w(f"{gs} = [lambda {x}, {i}={i}: {body} for {i} in range({n})]")
        results.append(f"[{fn}({arg}) for {fn} in {gs}]")
    if ctx.hard(0.5):
        k = ctx.name(("k", "factor", "mult"))
        h = ctx.name(_FUNCS)
        w(f"{k} = {ctx.randint(2, 5)}")
        w(f"{h} = lambda {x}: {x} * {k}")
        w(f"{k} = {ctx.randint(6, 9)}")
        results.append(f"{h}({arg})")
    return ", ".join(results)


@_variant("closures", "function factories and composition")
def _closures_compose(ctx: _Ctx, w: _Writer) -> str:
    adder = ctx.name(("make_adder", "plus", "adder", "add_by"))
    mult = ctx.name(("make_mult", "times", "scaler", "mul_by"))
    n = ctx.name(("n", "k", "amount"))
    x = ctx.name(("x", "v", "arg"))
    with w.block(f"def {adder}({n}):"):
        w(f"return lambda {x}: {x} + {n}")
    fns = [f"{adder}({ctx.randint(-5, 9)})"]
    if ctx.d >= 0.25:
        with w.block(f"def {mult}({n}):"):
            with w.block(f"def inner({x}):"):
                w(f"return {x} * {n}")
            w("return inner")
        fns.append(f"{mult}({ctx.randint(2, 4)})")
    for _ in range(ctx.scaled(0, 3)):
        fns.append(f"{ctx.pick([adder] + ([mult] if ctx.d >= 0.25 else []))}({ctx.randint(-3, 5)})")
    start = ctx.randint(0, 9)
    if ctx.hard(0.7):
        compose = ctx.name(("compose", "chain", "pipe", "then"))
        f = ctx.name(("f", "first", "stage"))
        stages = ctx.name(("fns", "stages", "steps"))
        with w.block(f"def {compose}(*{stages}):"):
            with w.block(f"def run({x}):"):
                with w.block(f"for {f} in {stages}:"):
                    w(f"{x} = {f}({x})")
                w(f"return {x}")
            w("return run")
        pipe = ctx.name(("pipeline", "combo", "flow"))
        w(f"{pipe} = {compose}({', '.join(fns)})")
        return _one_of(ctx, f"{pipe}({start})", f"{pipe}({start}), {pipe}({pipe}({start}))")
    else:
        expr = str(start)
        for fn in fns:
            expr = f"{fn}({expr})"
        return expr


@_variant("closures", "decorators and mutable default arguments keeping state")
def _closures_state(ctx: _Ctx, w: _Writer) -> str:
    fn, x = ctx.name(_FUNCS), ctx.name(("x", "item", "v"))
    if ctx.d < 0.3 or ctx.chance(0.5):
        bucket = ctx.name(("bucket", "seen", "store", "acc", "box"))
        with w.block(f"def {fn}({x}, {bucket}=[]):"):
            w(f"{bucket}.append({x})")
            w(ctx.pick((f"return len({bucket})", f"return sum({bucket})", f"return list({bucket})")))
        calls = [f"{fn}({ctx.randint(1, 9)})" for _ in range(ctx.scaled(2, 4))]
        if ctx.hard(0.7):
            calls.insert(ctx.randint(0, len(calls)), f"{fn}({ctx.randint(1, 9)}, [])")
        return ", ".join(calls)
    deco = ctx.name(("counted", "traced", "logged", "noisy"))
    calls_var = ctx.name(("calls", "hits", "uses"))
    wrapper = ctx.name(("wrapper", "inner", "shim"))
    args = ctx.name(("args", "params"))
    with w.block(f"def {deco}(func):"):
        w(f"{calls_var} = 0")
        with w.block(f"def {wrapper}(*{args}):"):
            w(f"nonlocal {calls_var}", f"{calls_var} += 1")
            returns_pair = ctx.chance(0.3)
            if returns_pair:
                w(f"return (func(*{args}), {calls_var})")
            else:
                w(f"return func(*{args}) {ctx.pick(('+', '*'))} {calls_var}")
        w(f"return {wrapper}")
    w(f"@{deco}")
    with w.block(f"def {fn}({x}):"):
        w(f"return {x} * {ctx.randint(2, 5)} - {ctx.randint(0, 3)}")
    if ctx.hard(0.5):
        g = ctx.name(_FUNCS)
        w(f"@{deco}")
        with w.block(f"def {g}({x}):"):
            w(f"return {fn}({x})[0] + 1" if returns_pair else f"return {fn}({x}) + 1")
        calls = [f"{ctx.pick([fn, g])}({ctx.randint(1, 6)})" for _ in range(ctx.scaled(2, 4))]
    else:
        calls = [f"{fn}({ctx.randint(1, 6)})" for _ in range(ctx.scaled(2, 4))]
    return ", ".join(calls)

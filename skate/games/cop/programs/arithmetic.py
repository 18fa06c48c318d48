"""Templates for ``arithmetic`` programs: the variants registered for this kind, and their helpers.

Variants, in registration order (the order the drafting loop draws from):

- operator precedence and floor division in a chain of assignments
- an accumulator updated by conditional rules inside a loop
- digit extraction with divmod and a while loop
- small number-theory computations combined
"""

from __future__ import annotations

from collections.abc import Sequence

from skate.games.cop.programs.kit import _LOOPS, _SCALARS, _SEQS, _SHORT, _Ctx, _one_of, _variant, _Writer


def _leaf(ctx: _Ctx, names: Sequence[str]) -> str:
    if names and ctx.chance(0.7):
        return ctx.pick(names)
    return str(ctx.randint(2, 9))


def _wrap(text: str, atomic: bool) -> str:
    return text if atomic else f"({text})"


def _arith_expr(ctx: _Ctx, names: Sequence[str], depth: int, ops: Sequence[str]) -> tuple[str, bool]:
    """A random integer expression over ``names``; returns (text, is_atomic)."""
    if depth <= 0:
        return _leaf(ctx, names), True
    op = ctx.pick(ops)
    if op == "call":
        fn = ctx.pick(("abs", "min", "max"))
        a = _arith_expr(ctx, names, depth - 1, ops)[0]
        if fn == "abs":
            return f"abs({a})", True
        b = _arith_expr(ctx, names, depth - 1, ops)[0]
        return f"{fn}({a}, {b})", True
    if op == "**":
        return f"{_leaf(ctx, names)} ** {ctx.randint(2, 3)}", False
    left = _arith_expr(ctx, names, depth - 1, ops)
    if op in ("//", "%"):
        k = ctx.randint(2, 9) * (-1 if ctx.hard(0.4) else 1)
        right = (str(k), True)
    else:
        right = _arith_expr(ctx, names, depth - 1, ops)
    return f"{_wrap(*left)} {op} {_wrap(*right)}", False


_SAFE_BUILTINS = {"abs": abs, "min": min, "max": max}


@_variant("arithmetic", "operator precedence and floor division in a chain of assignments")
def _arith_chain(ctx: _Ctx, w: _Writer) -> str:
    ops = ["+", "-", "*"]
    if ctx.d >= 0.3:
        ops += ["//", "%"]
    if ctx.d >= 0.6:
        ops += ["**", "call"]
    env: dict[str, int] = {}
    for _ in range(2 + ctx.hard(0.6)):
        name = ctx.name(_SHORT)
        env[name] = ctx.randint(2, 40) * (-1 if ctx.hard(0.4) else 1)
        w(f"{name} = {env[name]}")
    for _ in range(ctx.scaled(1, 6)):
        expr = _arith_expr(ctx, list(env), ctx.scaled(1, 3), ops)[0]
        value = eval(expr, {"__builtins__": _SAFE_BUILTINS}, dict(env))  # our own expression
        if abs(value) > 10_000:
            m = ctx.randint(11, 97)
            expr, value = f"({expr}) % {m}", value % m
        name = ctx.name(_SHORT)
        w(f"{name} = {expr}")
        env[name] = value
    names = list(env)
    last, other = names[-1], ctx.pick(names[:-1])
    return _one_of(ctx, last, f"{other}, {last}", f"[{other}, {last}]", f"{last} - {other}")


def _acc_update(ctx: _Ctx, acc: str, i: str, m: int) -> str:
    k = ctx.randint(2, 7)
    return ctx.pick(
        (
            f"{acc} += {i}",
            f"{acc} += {i} * {k}",
            f"{acc} -= {i} // {k}",
            f"{acc} = ({acc} * {k} + {i}) % {m}",
            f"{acc} = {acc} // {k} + {i}",
            f"{acc} -= {k}",
            f"{acc} += {i} % {k}",
            f"{acc} = {acc} * {k} % {m}",
        )
    )


def _acc_cond(ctx: _Ctx, acc: str, i: str) -> str:
    k = ctx.randint(2, 6)
    options = [
        f"{i} % {k} == {ctx.randint(0, k - 1)}",
        f"{i} > {ctx.randint(2, 12)}",
        f"{acc} % {k} == 0",
        f"{acc} > {ctx.randint(5, 60)}",
    ]
    if ctx.hard():
        lo = ctx.randint(1, 6)
        options += [
            f"{lo} < {i} <= {lo + ctx.randint(2, 8)}",
            f"{i} % {k} and {acc} % 2",
            f"not {i} % {k}",
            f"{acc} < {i} * {k}",
        ]
    return ctx.pick(options)


@_variant("arithmetic", "an accumulator updated by conditional rules inside a loop")
def _arith_loop(ctx: _Ctx, w: _Writer) -> str:
    acc, i = ctx.name(_SCALARS), ctx.name(_LOOPS)
    start = ctx.randint(0, 3)
    stop = start + ctx.scaled(3, 30)
    step = ctx.randint(2, 3) if ctx.hard(0.4) else 1
    if step > 1:
        bounds = f"{start}, {stop}, {step}"
    elif start == 0 and ctx.chance(0.5):
        bounds = f"{stop}"
    else:
        bounds = f"{start}, {stop}"
    m = ctx.randint(50, 997)
    w(f"{acc} = {ctx.randint(0, 9)}")
    with w.block(f"for {i} in range({bounds}):"):
        branches = ctx.scaled(0, 3)
        if branches == 0:
            w(_acc_update(ctx, acc, i, m))
        for b in range(branches):
            with w.block(f"{'if' if b == 0 else 'elif'} {_acc_cond(ctx, acc, i)}:"):
                w(_acc_update(ctx, acc, i, m))
        if branches and ctx.chance(0.6):
            with w.block("else:"):
                w(_acc_update(ctx, acc, i, m))
        if ctx.hard(0.8):
            j = ctx.name(_LOOPS)
            inner = ctx.pick((f"range({i} % {ctx.randint(2, 4)} + 1)", f"range({ctx.randint(2, 4)})"))
            with w.block(f"for {j} in {inner}:"):
                if ctx.chance(0.5):
                    with w.block(f"if {j} % 2 == {ctx.randint(0, 1)}:"):
                        w(f"{acc} += {j} * {ctx.randint(1, 5)}")
                else:
                    w(f"{acc} -= {j} + {ctx.randint(0, 3)}")
        if ctx.hard(0.5):
            w(f"{acc} %= {m}")
    return _one_of(ctx, acc, f"{acc}, {i}", f"{acc} % {ctx.randint(7, 20)}")


@_variant("arithmetic", "digit extraction with divmod and a while loop")
def _arith_digits(ctx: _Ctx, w: _Writer) -> str:
    n = ctx.name(("n", "num", "number", "big", "val"))
    acc = ctx.name(_SCALARS)
    digit = ctx.name(("d", "digit", "rem", "low", "last"))
    base = ctx.pick((2, 3, 5, 7, 8, 16)) if ctx.hard(0.5) else 10
    low_digits = ctx.scaled(1, 4)
    number = ctx.randint(10**low_digits, 10 ** max(low_digits + 1, ctx.scaled(2, 6)))
    w(f"{n} = {number}")
    rounds = ctx.scaled(1, 3) if ctx.hard(0.8) else 1
    sign = ctx.name(("sign", "flip", "polarity")) if ctx.hard(0.6) else None
    combine = ctx.pick(
        (
            f"{acc} += {digit}",
            f"{acc} += {digit} * {digit}",
            f"{acc} = {acc} * {ctx.randint(2, 10)} + {digit}",
            f"{acc} += {digit} * {ctx.randint(2, 5)}",
        )
    )
    if sign:
        combine = f"{acc} += {sign} * {digit}" if ctx.chance(0.5) else f"{acc} += {sign} * {digit} * {digit}"

    def digit_loop() -> None:
        w(f"{acc} = 0")
        if sign:
            w(f"{sign} = 1")
        with w.block(f"while {n} > 0:"):
            if ctx.chance(0.5):
                w(f"{n}, {digit} = divmod({n}, {base})")
            else:
                w(f"{digit} = {n} % {base}", f"{n} //= {base}")
            w(combine)
            if sign:
                w(f"{sign} = -{sign}")

    if rounds == 1:
        digit_loop()
        return _one_of(ctx, acc, f"{acc}, {n}")
    else:
        lap = ctx.name(_LOOPS)
        with w.block(f"for {lap} in range({rounds}):"):
            digit_loop()
            w(f"{n} = abs({acc}) % {ctx.randint(10**3, 10**5)} + {lap}")
        return _one_of(ctx, n, f"{n}, {acc}")


def _task_multiples(ctx: _Ctx, w: _Writer) -> str:
    out, x = ctx.name(_SCALARS), ctx.name(_LOOPS)
    a, b = ctx.sample(range(2, 10), 2)
    hi = ctx.scaled(10, 60)
    w(f"{out} = 0")
    with w.block(f"for {x} in range(1, {hi}):"):
        cond = ctx.pick(
            (
                f"{x} % {a} == 0 or {x} % {b} == 0",
                f"{x} % {a} == 0 and {x} % {b} != 0",
                f"{x} % {a} == {ctx.randint(0, a - 1)}",
            )
        )
        with w.block(f"if {cond}:"):
            w(ctx.pick((f"{out} += {x}", f"{out} += 1", f"{out} += {x} % {ctx.randint(3, 9)}")))
    return out


def _task_gcd(ctx: _Ctx, w: _Writer) -> str:
    a, b = ctx.names(_SHORT, 2)
    x, y = ctx.randint(12, 400), ctx.randint(12, 400)
    w(f"{a}, {b} = {x}, {y}")
    with w.block(f"while {b}:"):
        w(f"{a}, {b} = {b}, {a} % {b}")
    return a


def _task_divisors(ctx: _Ctx, w: _Writer) -> str:
    found = ctx.name(_SEQS)
    n = ctx.name(_LOOPS)
    p = ctx.name(_LOOPS)
    cnt = ctx.name(("divs", "hits", "factors", "cnt"))
    lo = ctx.randint(2, 30)
    hi = lo + ctx.scaled(6, 25)
    target = ctx.pick(("== 2", "% 2 == 1", f"> {ctx.randint(3, 5)}", "== 4"))
    w(f"{found} = []")
    with w.block(f"for {n} in range({lo}, {hi}):"):
        w(f"{cnt} = 0")
        with w.block(f"for {p} in range(1, {n} + 1):"):
            with w.block(f"if {n} % {p} == 0:"):
                w(f"{cnt} += 1")
        with w.block(f"if {cnt} {target}:"):
            w(f"{found}.append({n})")
    return f"len({found})" if ctx.chance(0.5) else found


def _task_collatz(ctx: _Ctx, w: _Writer) -> str:
    n, steps = ctx.name(("n", "num", "hail", "cur")), ctx.name(("steps", "moves", "hops", "count"))
    w(f"{n}, {steps} = {ctx.randint(3, 40)}, 0")
    with w.block(f"while {n} != 1:"):
        w(f"{n} = {n} // 2 if {n} % 2 == 0 else 3 * {n} + 1", f"{steps} += 1")
    return steps


@_variant("arithmetic", "small number-theory computations combined")
def _arith_number_theory(ctx: _Ctx, w: _Writer) -> str:
    tasks = [_task_multiples, _task_gcd, _task_divisors, _task_collatz]
    if ctx.d < 0.3:
        tasks = [_task_multiples, _task_gcd]
    chosen = ctx.sample(tasks, ctx.scaled(1, 3))
    results = [task(ctx, w) for task in chosen]
    joined = ", ".join(results)
    return _one_of(ctx, joined, f"[{joined}]")

"""Templates for ``generators`` programs: the variants registered for this kind, and their helpers.

Variants, in registration order (the order the drafting loop draws from):

- a generator function consumed with next and list
- lazy pipelines of generator expressions and yield from
- a coroutine driven with send
- infinite generators cut short with break and zip
"""

from __future__ import annotations

from skate.games.cop.programs.kit import _LOOPS, _SCALARS, _SEQS, _Ctx, _one_of, _variant, _Writer


@_variant("generators", "a generator function consumed with next and list")
def _generators_basic(ctx: _Ctx, w: _Writer) -> str:
    gen = ctx.name(("gen", "produce", "emit", "stream", "source"))
    n = ctx.name(("n", "limit", "upto"))
    i = ctx.name(_LOOPS)
    g = ctx.name(("g", "it", "feed", "pipe"))
    with w.block(f"def {gen}({n}):"):
        with w.block(f"for {i} in range({n}):"):
            if ctx.d >= 0.25:
                with w.block(f"if {i} % {ctx.randint(2, 4)} {ctx.pick(('==', '!='))} {ctx.randint(0, 1)}:"):
                    w(f"yield {ctx.pick((f'{i} * {i}', f'{i} + {ctx.randint(1, 9)}', f'{i} * {ctx.randint(2, 5)}'))}")
                if ctx.hard(0.5):
                    with w.block(f"elif {i} > {ctx.randint(5, 9)}:"):
                        w("return")
            else:
                w(f"yield {i} * {ctx.randint(2, 5)}")
        if ctx.hard(0.4):
            w(f"yield -{ctx.randint(1, 9)}")
    size = ctx.scaled(4, 16)
    if ctx.d < 0.25:
        return f"list({gen}({size}))"
    w(f"{g} = {gen}({size})")
    parts = []
    for _ in range(ctx.scaled(0, 2)):
        parts.append(f"next({g})")
    if ctx.hard(0.5):
        parts.append(f"next({g}, None)")
    parts.append(f"list({g})")
    if ctx.hard(0.5):
        parts.append(f"list({g})")
    first = ctx.name(("first", "head", "a"))
    w(f"{first} = [{', '.join(parts[:-1])}]" if len(parts) > 1 else f"{first} = []")
    return f"{first}, {parts[-1]}"


@_variant("generators", "lazy pipelines of generator expressions and yield from")
def _generators_pipeline(ctx: _Ctx, w: _Writer) -> str:
    src, x = ctx.name(_SEQS), ctx.name(("x", "v", "el", "n"))
    w(f"{src} = {ctx.ints(ctx.scaled(4, 10), -5, 20)!r}")
    stages = [
        lambda p: f"({x} * {x} for {x} in {p})",
        lambda p: f"({x} for {x} in {p} if {x} % {ctx.randint(2, 3)} == {ctx.randint(0, 1)})",
        lambda p: f"({x} + {ctx.randint(1, 9)} for {x} in {p})",
        lambda p: f"(abs({x}) for {x} in {p} if {x} != {ctx.randint(0, 5)})",
        lambda p: f"({x} // {ctx.randint(2, 4)} for {x} in {p} if {x} > {ctx.randint(-2, 6)})",
    ]
    prev = src
    for _ in range(ctx.scaled(1, 4)):
        name = ctx.name(("stage", "flow", "piped", "layer", "feed", "stream", "lazy", "pass_on"))
        w(f"{name} = {ctx.pick(stages)(prev)}")
        prev = name
    if ctx.hard(0.6):
        chain = ctx.name(("chain", "join_all", "concat"))
        part = ctx.name(("part", "p", "chunk"))
        parts = ctx.name(("parts", "sources", "pieces"))
        with w.block(f"def {chain}(*{parts}):"):
            with w.block(f"for {part} in {parts}:"):
                w(f"yield from {part}")
        w(f"{prev} = {chain}({prev}, range({ctx.randint(1, 3)}))")
    if ctx.hard(0.5):
        return f"sum({prev}), list({prev})"  # the second consumer sees an exhausted generator
    else:
        return _one_of(ctx, f"list({prev})", f"sum({prev})", f"max({prev}, default=-1)")


@_variant("generators", "a coroutine driven with send")
def _generators_send(ctx: _Ctx, w: _Writer) -> str:
    co = ctx.name(("averager", "running", "accumulate", "collector", "meter"))
    total = ctx.name(_SCALARS)
    got = ctx.name(("got", "incoming", "msg", "val"))
    c = ctx.name(("co", "g", "sink", "worker"))
    if ctx.d < 0.3:
        with w.block(f"def {co}():"):
            w(f"yield {ctx.randint(1, 9)}", f"yield {ctx.randint(1, 9)}")
        w(f"{c} = {co}()")
        return f"next({c}) + next({c})"
    with w.block(f"def {co}({total}={ctx.randint(0, 5)}):"):
        with w.block("while True:"):
            w(f"{got} = yield {total}")
            handles_none = ctx.hard(0.7)
            if handles_none:
                with w.block(f"if {got} is None:"):
                    w(ctx.pick((f"{total} -= 1", f"{total} //= 2", f"{total} = 0")))
                with w.block(f"elif {got} < 0:"):
                    w("return")
                with w.block("else:"):
                    w(f"{total} += {got}")
            else:
                w(f"{total} += {got}" if ctx.chance(0.5) else f"{total} = {total} * 2 + {got}")
    w(f"{c} = {co}()")
    seen = ctx.name(("seen", "log", "outs"))
    w(f"{seen} = [next({c})]")
    sends: list[int | None] = [*ctx.ints(ctx.scaled(2, 5), 1, 9)]
    if handles_none:
        sends = [s if ctx.chance(0.7) else None for s in sends]
    v = ctx.name(("v", "x", "item"))
    with w.block(f"for {v} in {sends!r}:"):
        w(f"{seen}.append({c}.send({v}))")
    return seen


@_variant("generators", "infinite generators cut short with break and zip")
def _generators_infinite(ctx: _Ctx, w: _Writer) -> str:
    gen = ctx.name(("naturals", "counter", "ticker", "forever", "spiral"))
    cur = ctx.name(("cur", "n", "val"))
    step = ctx.name(("step", "stride", "d"))
    with w.block(f"def {gen}({cur}, {step}):"):
        with w.block("while True:"):
            w(f"yield {cur}")
            modulus = ctx.randint(7, 19)
            update = ctx.pick(
                (
                    f"{cur} += {step}",
                    f"{cur} = {cur} * 2 + {step}",
                    f"{cur} = ({cur} + {step}) % {modulus}",
                )
            )
            w(update)
    x, out = ctx.name(("x", "v", "item")), ctx.name(_SEQS)
    start, stride = ctx.randint(0, 5), ctx.randint(1, 4)
    if ctx.d < 0.3:
        return f"list(zip(range({ctx.randint(2, 5)}), {gen}({start}, {stride})))"
    w(f"{out} = []")
    seen = ctx.name(("seen", "taken", "pulled", "tries"))
    with w.block(f"for {seen}, {x} in enumerate({gen}({start}, {stride})):"):
        limit = ctx.randint(3, modulus - 2) if "%" in update else ctx.randint(20, 60)
        with w.block(f"if {x} > {limit} or {seen} >= {ctx.randint(5, 12)}:"):
            w("break")
        if ctx.hard(0.6):
            with w.block(f"if {x} % {ctx.randint(2, 3)} == 0:"):
                w("continue")
        w(f"{out}.append({x})")
    if ctx.hard(0.5):
        it = ctx.name(("it", "src", "shared"))
        w(f"{it} = {gen}({ctx.randint(0, 5)}, {ctx.randint(1, 3)})")
        return f"{out}, list(zip({it}, {it}, range({ctx.randint(2, 4)})))"
    else:
        return out

"""Templates for ``bitwise`` programs: the variants registered for this kind, and their helpers.

Variants, in registration order (the order the drafting loop draws from):

- chains of and, or, xor and shifts
- counting set bits with bit tricks
- enumerating subsets with bit masks
- binary formatting, gray codes and bit reversal
"""

from __future__ import annotations

from skate.games.cop.programs.kit import _FUNCS, _LOOPS, _SCALARS, _SEQS, _SHORT, _Ctx, _one_of, _variant, _Writer


@_variant("bitwise", "chains of and, or, xor and shifts")
def _bitwise_chain(ctx: _Ctx, w: _Writer) -> str:
    ops = ["&", "|", "^"] + (["<<", ">>"] if ctx.d >= 0.3 else [])
    env: dict[str, int] = {}
    for _ in range(2):
        name = ctx.name(_SHORT)
        env[name] = ctx.randint(1, 255)
        w(f"{name} = {bin(env[name]) if ctx.hard(0.6) else env[name]}")
    for _ in range(ctx.scaled(1, 5)):
        a, b = ctx.sample(list(env), 2)
        op = ctx.pick(ops)
        if op in ("<<", ">>"):
            expr = f"{a} {op} {ctx.randint(1, 3)}"
        elif ctx.hard(0.5):
            mask = ctx.pick((hex(ctx.randint(1, 255)), str(ctx.randint(1, 63))))
            expr = f"({a} {op} {b}) {ctx.pick(('&', '|', '^'))} {mask}"
        else:
            expr = f"{a} {op} {b}"
        if ctx.hard(0.3):
            expr = f"~({expr}) & {ctx.pick(('0xFF', '255', '0x3F'))}"
        value = eval(expr, {"__builtins__": {}}, dict(env))  # our own expression
        if abs(value) > 10**6:
            continue
        name = ctx.name(_SHORT)
        w(f"{name} = {expr}")
        env[name] = value
    last = list(env)[-1]
    return _one_of(ctx, last, f"{last}, bin({last})" if ctx.d >= 0.5 else last, f"{list(env)[0]}, {last}")


@_variant("bitwise", "counting set bits with bit tricks")
def _bitwise_popcount(ctx: _Ctx, w: _Writer) -> str:
    n, count = ctx.name(("n", "bits", "mask", "word")), ctx.name(("count", "ones", "pop", "set_bits"))
    if ctx.d < 0.25:
        w(f"{n} = {ctx.randint(5, 255)}")
        w(
            f"{count} = "
            + ctx.pick(
                (
                    f"bin({n}).count('1')",
                    f"{n}.bit_count()",
                    f"{n}.bit_length()",
                    f"{n} & ({n} - 1)",
                    f"{n} & -{n}",
                    f"bin({n})[2:].count('0')",
                )
            )
        )
        return _one_of(ctx, count, f"{n}, {count}")
    total, k = ctx.name(_SCALARS), ctx.name(_LOOPS)
    style = ctx.pick(("kernighan", "shift"))
    hi = ctx.scaled(4, 20)
    listy = ctx.chance(0.5)
    w(f"{total} = []" if listy else f"{total} = 0")
    with w.block(f"for {k} in range({ctx.randint(0, 3)}, {hi}):"):
        w(f"{n} = {k} * {ctx.randint(3, 17)}" if ctx.hard(0.6) else f"{n} = {k}", f"{count} = 0")
        if style == "kernighan":
            with w.block(f"while {n}:"):
                w(f"{n} &= {n} - 1", f"{count} += 1")
        else:
            with w.block(f"while {n} > 0:"):
                w(f"{count} += {n} & 1", f"{n} >>= 1")
        cond = ctx.pick((f"{count} % 2 == 0", f"{count} == {ctx.randint(1, 3)}", f"{count} > {ctx.randint(1, 3)}"))
        with w.block(f"if {cond}:"):
            w(f"{total}.append({k})" if listy else f"{total} += {k}")
    return total


@_variant("bitwise", "enumerating subsets with bit masks")
def _bitwise_masks(ctx: _Ctx, w: _Writer) -> str:
    items, mask, i = ctx.name(_SEQS), ctx.name(("mask", "m", "bits", "pick")), ctx.name(_LOOPS)
    if ctx.d < 0.25:
        flags = ctx.name(("flags", "perms", "state", "switches", "reg"))
        bits = ctx.sample(range(0, 7), ctx.randint(1, 3))
        w(f"{flags} = {ctx.pick((0, 0, 1, 8, 255))}")
        for bit in bits:
            w(ctx.pick((f"{flags} |= 1 << {bit}", f"{flags} ^= 1 << {bit}", f"{flags} += 2 ** {bit}")))
        return _one_of(ctx, flags, f"{flags} & (1 << {bits[0]}) != 0, {flags}", f"bin({flags})", f"{flags} >> 1")
    data = ctx.ints(ctx.scaled(3, 6), 1, 12)
    target = ctx.randint(5, sum(data))
    w(f"{items} = {data!r}")
    hits, chosen = ctx.name(("hits", "found", "ways", "matches")), ctx.name(("chosen", "subset", "picked"))
    w(f"{hits} = []")
    with w.block(f"for {mask} in range(1 << len({items})):"):
        w(f"{chosen} = [{items}[{i}] for {i} in range(len({items})) if {mask} >> {i} & 1]")
        cond = ctx.pick(
            (
                f"sum({chosen}) == {target}",
                f"len({chosen}) == {ctx.randint(2, 3)} and sum({chosen}) % {ctx.randint(2, 5)} == 0",
                f"sum({chosen}) > {target} and len({chosen}) < 3",
            )
        )
        with w.block(f"if {cond}:"):
            w(f"{hits}.append({mask})" if ctx.chance(0.5) else f"{hits}.append(bin({mask}))")
    if ctx.hard(0.6):
        flags = ctx.name(("flags", "state", "reg"))
        w(f"{flags} = 0")
        for _ in range(ctx.scaled(1, 3)):
            bit = ctx.randint(0, 6)
            w(ctx.pick((f"{flags} |= 1 << {bit}", f"{flags} ^= 1 << {bit}", f"{flags} &= ~(1 << {bit})")))
        return _one_of(ctx, f"{hits}, {flags}", f"len({hits}), {flags}")
    else:
        return _one_of(ctx, hits, f"len({hits}), {hits}[:3]")


@_variant("bitwise", "binary formatting, gray codes and bit reversal")
def _bitwise_format(ctx: _Ctx, w: _Writer) -> str:
    i = ctx.name(_LOOPS)
    if ctx.d < 0.25:
        x = ctx.name(_SHORT)
        w(f"{x} = {ctx.randint(5, 200)}")
        return _one_of(ctx, f"bin({x})", f"format({x}, '08b')", f"int('{bin(ctx.randint(5, 60))[2:]}', 2) + {x}")
    parts = []
    if ctx.chance(0.6):
        gray = ctx.name(("gray", "codes", "seq"))
        w(f"{gray} = [{i} ^ ({i} >> 1) for {i} in range({ctx.scaled(4, 10)})]")
        parts.append(gray if ctx.chance(0.5) else f"[format(g, '0{ctx.randint(3, 4)}b') for g in {gray}]")
    if ctx.d >= 0.5 or not parts:
        rev, x, out = ctx.name(_FUNCS), ctx.name(("x", "n", "v")), ctx.name(("out", "res", "acc"))
        width = ctx.randint(4, 8)
        with w.block(f"def {rev}({x}):"):
            w(f"{out} = 0")
            with w.block(f"for _ in range({width}):"):
                w(f"{out} = ({out} << 1) | ({x} & 1)", f"{x} >>= 1")
            w(f"return {out}")
        parts.append(
            ctx.pick(
                (
                    f"{rev}({ctx.randint(1, 2**width - 1)})",
                    f"[{rev}({i}) for {i} in range({ctx.randint(3, 6)})]",
                )
            )
        )
    if ctx.hard(0.6):
        parts.append(
            ctx.pick(
                (
                    f"int('{bin(ctx.randint(8, 200))[2:]}', 2) ^ {ctx.randint(1, 31)}",
                    f"format({ctx.randint(10, 255)}, '#x'), {hex(ctx.randint(16, 255))} >> 2",
                )
            )
        )
    return ", ".join(parts)

"""Templates for ``slicing`` programs: the variants registered for this kind, and their helpers.

Variants, in registration order (the order the drafting loop draws from):

- list slices with negative indices and steps
- slice assignment and deletion that reshape a list
- string rotation and stepping through text
- row and column slices of a small grid
"""

from __future__ import annotations

from collections.abc import Callable

from skate.games.cop.programs.kit import _LOOPS, _SCALARS, _SEQS, _TEXTS, _Ctx, _one_of, _variant, _Writer


def _slice_spec(ctx: _Ctx, length: int) -> str:
    a, b = sorted(ctx.sample(range(0, max(length, 2) + 1), 2))
    k = ctx.randint(2, 3)
    simple = [f"{a}:{b}", f"{a}:", f":{b}", f"-{max(a, 1)}:", "::-1"]
    tricky = [
        f"::{k}",
        f"{a}::{k}",
        f"::-{k}",
        f"-{max(a, 1)}::-1",
        f"{b}:{a}:-1",
        f"{a}:-{k}",
        f"-{b + 1}:-1:{k}",
        f"{a}:{b}:{k}",
    ]
    pool = simple + (tricky if ctx.hard(0.9) else [])
    return ctx.pick(pool)


@_variant("slicing", "list slices with negative indices and steps")
def _slicing_lists(ctx: _Ctx, w: _Writer) -> str:
    src = ctx.name(_SEQS)
    if ctx.chance(0.5):
        start, step = ctx.randint(0, 9), ctx.randint(1, 4)
        count = ctx.scaled(5, 12)
        if step > 1:
            w(f"{src} = list(range({start}, {start + step * count}, {step}))")
        else:
            w(f"{src} = list(range({start}, {start + count}))")
        values = list(range(start, start + step * count, step))
    else:
        values = ctx.ints(ctx.scaled(5, 12), 0, 60)
        w(f"{src} = {values!r}")
    env: dict[str, list[int]] = {src: values}
    for _ in range(ctx.scaled(1, 5)):
        base = ctx.pick(list(env))
        spec = _slice_spec(ctx, len(env[base]))
        name = ctx.name(_SEQS)
        expr = f"{base}[{spec}]"
        if ctx.hard(0.4) and len(env) > 1:
            other = ctx.pick([n for n in env if n != base])
            expr = f"{expr} + {other}[{_slice_spec(ctx, len(env[other]))}]"
        value = eval(expr, {"__builtins__": {}}, dict(env))  # our own expression
        if not value or len(value) > 20:
            continue
        w(f"{name} = {expr}")
        env[name] = value
    names = list(env)
    last = names[-1]
    return _one_of(ctx, last, f"{last}, {names[0]}[-1]", f"{last}, len({last})")


@_variant("slicing", "slice assignment and deletion that reshape a list")
def _slicing_assign(ctx: _Ctx, w: _Writer) -> str:
    xs = ctx.name(_SEQS)
    n = ctx.scaled(6, 12)
    if ctx.chance(0.5):
        value = list(range(n))
        w(f"{xs} = list(range({n}))")
    else:
        value = ctx.ints(n, 0, 9)
        w(f"{xs} = {value!r}")
    v = ctx.name(("v", "e", "el", "it"))

    def ops(cur: list[int]) -> list[tuple[str, Callable[[list[int]], None]]]:
        ln = len(cur)
        a = ctx.randint(0, max(ln - 2, 0))
        b = min(ln, a + ctx.randint(1, 3))
        k = ctx.randint(2, 3)
        new = ctx.ints(ctx.randint(0, 3), 0, 9)

        def assign(lst: list[int]) -> None:
            lst[a:b] = new

        def insert(lst: list[int]) -> None:
            lst[a:a] = new

        def delete(lst: list[int]) -> None:
            del lst[a:b]

        def del_step(lst: list[int]) -> None:
            del lst[::k]

        def double_step(lst: list[int]) -> None:
            lst[::k] = [e * 2 for e in lst[::k]]

        def rev_tail(lst: list[int]) -> None:
            lst[a:] = lst[a:][::-1]

        def clear_head(lst: list[int]) -> None:
            lst[:a] = []

        table: list[tuple[str, Callable[[list[int]], None]]] = [
            (f"{xs}[{a}:{b}] = {new!r}", assign),
            (f"{xs}[{a}:{a}] = {new!r}", insert),
            (f"del {xs}[{a}:{b}]", delete),
        ]
        if ctx.d >= 0.4:
            table += [
                (f"del {xs}[::{k}]", del_step),
                (f"{xs}[::{k}] = [{v} * 2 for {v} in {xs}[::{k}]]", double_step),
                (f"{xs}[{a}:] = {xs}[{a}:][::-1]", rev_tail),
                (f"{xs}[:{a}] = []", clear_head),
            ]
        return table

    for _ in range(ctx.scaled(1, 5)):
        for _attempt in range(10):
            line, fn = ctx.pick(ops(value))
            trial = list(value)
            fn(trial)
            if 3 <= len(trial) <= 16:
                break
        else:
            continue
        w(line)
        value = trial
    if ctx.hard(0.6):
        j = ctx.name(_LOOPS)
        with w.block(f"for {j} in range({ctx.randint(2, 3)}):"):
            w(
                ctx.pick(
                    (
                        f"{xs}[{j}::3] = {xs}[{j}::3][::-1]",
                        f"{xs}[{j}] += {xs}[-1 - {j}]",
                        f"{xs}[-1:] = [{xs}[-1] + {j}]",
                    )
                )
            )
    return _one_of(ctx, xs, f"{xs}, len({xs})", f"{xs}[::-1]")


@_variant("slicing", "string rotation and stepping through text")
def _slicing_strings(ctx: _Ctx, w: _Writer) -> str:
    s = ctx.name(_TEXTS)
    text = "".join(ctx.words(ctx.scaled(1, 3)))[:14]
    w(f"{s} = {text!r}")
    pieces = []
    if ctx.hard(0.8):
        k = ctx.name(_LOOPS)
        with w.block(f"for {k} in range(1, {ctx.randint(2, 5)}):"):
            w(
                ctx.pick(
                    (
                        f"{s} = {s}[{k}:] + {s}[:{k}]",
                        f"{s} = {s}[-{k}:] + {s}[:-{k}]",
                        f"{s} = {s}[::-1][{k}:] + {s}[:{k}]",
                    )
                )
            )
    for _ in range(ctx.scaled(1, 4)):
        a = ctx.randint(0, 4)
        b = a + ctx.randint(2, 6)
        step = ctx.randint(2, 3)
        simple = [f"{s}[{a}:{b}]", f"{s}[::-1]", f"{s}[-{a + 1}:]", f"{s}[:{b}].upper()"]
        tricky = [f"{s}[::{step}]", f"{s}[{a}::{step}]", f"{s}[::-{step}]", f"{s}[{b}:{a}:-1]", f"{s}[-1:-{b}:-{step}]"]
        pieces.append(ctx.pick(simple + (tricky if ctx.hard() else [])))
    if ctx.hard(0.4):
        pieces.append(f"{s} == {s}[::-1]")
    out = ctx.name(("out", "res", "view", "cut", "snip"))
    if len(pieces) == 1:
        w(f"{out} = {pieces[0]}")
    else:
        w(f"{out} = ({', '.join(pieces)})" if ctx.chance(0.5) else f"{out} = [{', '.join(pieces)}]")
    return out


@_variant("slicing", "row and column slices of a small grid")
def _slicing_grid(ctx: _Ctx, w: _Writer) -> str:
    grid = ctx.name(("grid", "board", "matrix", "table", "field"))
    r = ctx.name(("r", "row_i", "y"))
    c = ctx.name(("c", "col", "x"))
    height, width = ctx.scaled(2, 5), ctx.scaled(3, 5)
    w(f"{grid} = [[{r} * {width} + {c} for {c} in range({width})] for {r} in range({height})]")
    row = ctx.name(("row", "line", "band", "strip"))
    k = ctx.randint(2, 3)
    a = ctx.randint(0, 1)
    options = [
        f"{grid}[{ctx.randint(0, height - 1)}][{a}:]",
        f"[{row}[{a}] for {row} in {grid}]",
        f"{grid}[-1][::-1]",
        f"[{row}[-1] for {row} in {grid}[::-1]]",
    ]
    if ctx.d >= 0.4:
        options += [
            f"[{row}[{a}::{k}] for {row} in {grid}[::{k}]]",
            f"[{row}[::-1] for {row} in {grid}[{a}:]]",
            f"sum(sum({row}[{a}:-1]) for {row} in {grid}[1:])",
            f"[{grid}[{r}][{r}] for {r} in range({min(height, width)})]",
            f"[{row}[{a}:{a + 2}] for {row} in {grid}[-2:]]",
        ]
    picks = ctx.sample(options, ctx.scaled(1, 3))
    if ctx.hard(0.6):
        cell = ctx.name(_SCALARS)
        with w.block(f"for {row} in {grid}[::{k}]:"):
            w(f"{row}[{a}::{k}] = [{cell} * -1 for {cell} in {row}[{a}::{k}]]")
    out = ctx.name(("out", "view", "cut", "pick", "region"))
    w(f"{out} = {picks[0]}" if len(picks) == 1 else f"{out} = [{', '.join(picks)}]")
    return out

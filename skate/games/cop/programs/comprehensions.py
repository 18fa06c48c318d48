"""Templates for ``comprehensions`` programs: the variants registered for this kind, and their helpers.

Variants, in registration order (the order the drafting loop draws from):

- list comprehensions with filters and conditional expressions
- dict and set comprehensions
- nested comprehensions over a matrix
- generator expressions inside sum, any, all and max
"""

from __future__ import annotations

from skate.games.cop.programs.kit import _LOOPS, _SEQS, _WORDS, _Ctx, _one_of, _variant, _Writer


def _filter_cond(ctx: _Ctx, x: str) -> str:
    k = ctx.randint(2, 5)
    return ctx.pick(
        (
            f"{x} % {k} == {ctx.randint(0, k - 1)}",
            f"{x} > {ctx.randint(1, 8)}",
            f"{x} % {k}",
            f"not {x} % {k}",
            f"{x} * {x} < {ctx.randint(20, 90)}",
        )
    )


def _map_expr(ctx: _Ctx, x: str) -> str:
    return ctx.pick(
        (
            f"{x} * {x}",
            f"{x} + {ctx.randint(1, 9)}",
            f"{x} * {ctx.randint(2, 5)}",
            f"{x} // {ctx.randint(2, 3)}",
            f"-{x}",
            f"{x} % {ctx.randint(3, 7)}",
            x,
        )
    )


@_variant("comprehensions", "list comprehensions with filters and conditional expressions")
def _comp_list(ctx: _Ctx, w: _Writer) -> str:
    out, x = ctx.name(_SEQS), ctx.name(("x", "n", "v", "el"))
    lo, hi = ctx.randint(0, 5), ctx.randint(6, 6 + ctx.scaled(4, 12))
    source = f"range({lo}, {hi})"
    expr = _map_expr(ctx, x)
    if ctx.hard(0.6):
        expr = f"{expr} if {_filter_cond(ctx, x)} else {_map_expr(ctx, x)}"
    conds = [_filter_cond(ctx, x) for _ in range(ctx.scaled(0, 2))]
    tail = "".join(f" if {c}" for c in conds)
    w(f"{out} = [{expr} for {x} in {source}{tail}]")
    if ctx.hard(0.7):
        nxt, y = ctx.name(_SEQS), ctx.name(("y", "m", "w"))
        if ctx.chance(0.5):
            w(f"{nxt} = [{y} for {y} in {out} if {_filter_cond(ctx, y)}]")
        else:
            w(f"{nxt} = [{out}[{y}] - {out}[{y} - 1] for {y} in range(1, len({out}))]")
        out = nxt
    return _one_of(ctx, out, f"{out}, len({out})", f"sum({out}), {out}[-2:]")


@_variant("comprehensions", "dict and set comprehensions")
def _comp_dict(ctx: _Ctx, w: _Writer) -> str:
    k = ctx.name(("k", "key", "w", "word"))
    words = ctx.name(("words", "names", "tokens"))
    w(f"{words} = {ctx.sample(_WORDS, ctx.scaled(3, 7))!r}")
    m = ctx.randint(2, 5)
    options = [
        f"{{{k}: len({k}) for {k} in {words}}}",
        f"{{{k}[0]: {k} for {k} in {words}}}",
        f"{{len({k}) % {m}: {k} for {k} in {words}}}",
    ]
    if ctx.d >= 0.4:
        options += [
            f"{{{k}: {k}.count('a') + {k}.count('e') for {k} in {words} if len({k}) > {ctx.randint(2, 4)}}}",
            f"{{{k}[-1]: i for i, {k} in enumerate({words})}}",
        ]
    out = ctx.name(("table", "index", "lookup", "by_key"))
    w(f"{out} = {ctx.pick(options)}")
    parts = [out]
    if ctx.hard(0.8):
        s = ctx.name(("uniq", "seen", "kinds", "sizes"))
        w(f"{s} = {{len({k}) % {m} for {k} in {words}}}")
        parts.append(f"sorted({s})")
    if ctx.hard(0.6):
        inv, a, b = ctx.name(("inv", "back", "flip")), ctx.name(("a", "key")), ctx.name(("b", "val"))
        w(f"{inv} = {{{b}: {a} for {a}, {b} in {out}.items()}}")
        parts.append(inv)
    return ", ".join(parts)


@_variant("comprehensions", "nested comprehensions over a matrix")
def _comp_matrix(ctx: _Ctx, w: _Writer) -> str:
    grid = ctx.name(("grid", "matrix", "board", "table"))
    row = ctx.name(("row", "line", "r"))
    v = ctx.name(("v", "cell", "x"))
    i = ctx.name(_LOOPS)
    h, wd = ctx.scaled(2, 4), ctx.scaled(2, 4)
    w(f"{grid} = {[[ctx.randint(0, 9) for _ in range(wd)] for _ in range(h)]!r}")
    options = [
        f"[{v} for {row} in {grid} for {v} in {row}]",
        f"[sum({row}) for {row} in {grid}]",
        f"[max({row}) for {row} in {grid}]",
    ]
    if ctx.d >= 0.35:
        options += [
            f"[[{row}[{i}] for {row} in {grid}] for {i} in range({wd})]",
            f"[{v} for {row} in {grid} if sum({row}) > {ctx.randint(5, 15)} for {v} in {row} if {v} % 2]",
            f"[[{v} * {i} for {v} in {row}] for {i}, {row} in enumerate({grid})]",
            f"[({i}, {v}) for {i}, {row} in enumerate({grid}) for {v} in {row} if {v} > {ctx.randint(5, 8)}]",
        ]
    picks = ctx.sample(options, ctx.scaled(1, 3))
    names = []
    for p in picks:
        name = ctx.name(("flat", "sums", "tops", "cols", "picked", "scaled", "spots"))
        w(f"{name} = {p}")
        names.append(name)
    return ", ".join(names)


@_variant("comprehensions", "generator expressions inside sum, any, all and max")
def _comp_aggregates(ctx: _Ctx, w: _Writer) -> str:
    xs, x = ctx.name(_SEQS), ctx.name(("x", "v", "n", "el"))
    data = ctx.ints(ctx.scaled(3, 9), -5, 15)
    w(f"{xs} = {data!r}")
    options = [
        f"sum({_map_expr(ctx, x)} for {x} in {xs})",
        f"any({x} > {ctx.randint(5, 14)} for {x} in {xs})",
        f"max({xs})",
    ]
    if ctx.d >= 0.35:
        options += [
            f"all({x} % 2 == 0 for {x} in {xs} if {x} > {ctx.randint(0, 6)})",
            f"max(({x} % {ctx.randint(3, 7)}, {x}) for {x} in {xs})",
            f"sum(1 for {x} in {xs} if {_filter_cond(ctx, x)})",
            f"min({xs}, key=lambda {x}: abs({x} - {ctx.randint(0, 10)}))",
            f"sorted({x} * {x} for {x} in set({xs}))[:{ctx.randint(2, 4)}]",
        ]
    parts = ctx.sample(options, ctx.scaled(1, 4))
    if ctx.hard(0.5):
        y, big = ctx.name(("y", "sq", "t")), ctx.name(("big", "kept", "large"))
        w(f"{big} = [{y} for {x} in {xs} if ({y} := {x} * {ctx.randint(2, 3)}) > {ctx.randint(5, 20)}]")
        parts.append(big)
    return ", ".join(parts)

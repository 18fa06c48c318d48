"""Templates for ``recursion`` programs: the variants registered for this kind, and their helpers.

Variants, in registration order (the order the drafting loop draws from):

- numeric recursive functions and their call results
- walking a nested list recursively
- recursive string building: reversal, subsets and permutations
- mutual recursion between two functions
"""

from __future__ import annotations

from typing import Any

from skate.games.cop.programs.kit import _FUNCS, _LOOPS, _SEQS, _SHORT, _WORDS, _Ctx, _one_of, _variant, _Writer


def _rec_linear(ctx: _Ctx, w: _Writer) -> str:
    f, n = ctx.name(_FUNCS), ctx.name(("n", "k", "m", "depth"))
    base = ctx.randint(0, 2)
    a, s = ctx.pick((1, 1, 2)), ctx.pick((1, 1, 2))
    combine = ctx.pick(
        (
            f"{n} + {f}({n} - {s})",
            f"{n} * {f}({n} - {s})",
            f"{a} * {f}({n} - {s}) + {n}",
            f"{f}({n} - {s}) - {n} % {ctx.randint(2, 4)}",
        )
    )
    with w.block(f"def {f}({n}):"):
        with w.block(f"if {n} <= {base}:"):
            w(f"return {ctx.randint(1, 3)}")
        w(f"return {combine}")
    return f"{f}({ctx.randint(3, 9)})"


def _rec_tree(ctx: _Ctx, w: _Writer) -> str:
    f, n = ctx.name(_FUNCS), ctx.name(("n", "k", "m"))
    memo = ctx.hard(0.5)
    a, b = ctx.pick(((1, 2), (1, 3), (2, 3)))
    if memo:
        cache = ctx.name(("memo", "cache", "seen", "known"))
        header = f"def {f}({n}, {cache}={{}}):"
    else:
        header = f"def {f}({n}):"
    with w.block(header):
        with w.block(f"if {n} < {b}:"):
            w(f"return {n}" if ctx.chance(0.5) else "return 1")
        if memo:
            with w.block(f"if {n} not in {cache}:"):
                w(f"{cache}[{n}] = {f}({n} - {a}) + {f}({n} - {b})")
            w(f"return {cache}[{n}]")
        else:
            w(f"return {f}({n} - {a}) + {f}({n} - {b})")
    return f"{f}({ctx.randint(5, 14)})"


def _rec_gcd(ctx: _Ctx, w: _Writer) -> str:
    f, a, b = ctx.name(_FUNCS), *ctx.names(_SHORT, 2)
    with w.block(f"def {f}({a}, {b}):"):
        w(f"return {a} if {b} == 0 else {f}({b}, {a} % {b})")
    return f"{f}({ctx.randint(20, 300)}, {ctx.randint(20, 300)})"


def _rec_power(ctx: _Ctx, w: _Writer) -> str:
    f, x, e = ctx.name(_FUNCS), ctx.name(("x", "base", "b")), ctx.name(("e", "exp", "k"))
    half = ctx.name(("half", "sq", "part"))
    m = ctx.randint(11, 999)
    with w.block(f"def {f}({x}, {e}):"):
        with w.block(f"if {e} == 0:"):
            w("return 1")
        w(f"{half} = {f}({x}, {e} // 2)")
        with w.block(f"if {e} % 2:"):
            w(f"return {half} * {half} * {x} % {m}")
        w(f"return {half} * {half} % {m}")
    return f"{f}({ctx.randint(2, 9)}, {ctx.randint(5, 40)})"


def _rec_paths(ctx: _Ctx, w: _Writer) -> str:
    f, r, c = ctx.name(_FUNCS), ctx.name(("r", "row", "y")), ctx.name(("c", "col", "x"))
    with w.block(f"def {f}({r}, {c}):"):
        with w.block(f"if {r} == 0 or {c} == 0:"):
            w("return 1")
        if ctx.chance(0.5):
            w(f"return {f}({r} - 1, {c}) + {f}({r}, {c} - 1)")
        else:
            w(f"return {f}({r} - 1, {c}) + {f}({r}, {c} - 1) + {f}({r} - 1, {c} - 1)")
    return f"{f}({ctx.randint(1, 4)}, {ctx.randint(2, 4)})"


@_variant("recursion", "numeric recursive functions and their call results")
def _recursion_numeric(ctx: _Ctx, w: _Writer) -> str:
    easy = [_rec_linear, _rec_gcd]
    hard = [_rec_tree, _rec_power, _rec_paths]
    pool = easy + (hard if ctx.d >= 0.3 else [])
    calls = [fn(ctx, w) for fn in ctx.sample(pool, ctx.scaled(1, 3))]
    if ctx.hard(0.5) and len(calls) > 1:
        return " + ".join(calls)
    else:
        return ", ".join(calls)


def _nested_list(ctx: _Ctx, depth: int, width: int) -> list[Any]:
    items: list[Any] = []
    for _ in range(width):
        if depth > 0 and ctx.chance(0.45):
            items.append(_nested_list(ctx, depth - 1, max(1, width - 1)))
        else:
            items.append(ctx.randint(0, 9))
    return items


@_variant("recursion", "walking a nested list recursively")
def _recursion_nested(ctx: _Ctx, w: _Writer) -> str:
    data, x = ctx.name(("data", "tree", "nest", "layers", "pack")), ctx.name(("x", "el", "part", "node"))
    f = ctx.name(("flatten", "unroll", "spread", "gather", "walk", "weigh", "dig", "probe"))
    xs = ctx.name(("xs", "lst", "items", "group"))
    if ctx.d < 0.25:
        w(f"{data} = {ctx.ints(ctx.randint(3, 6), 0, 9)!r}")
        with w.block(f"def {f}({xs}):"):
            with w.block(f"if not {xs}:"):
                w("return 0")
            w(
                ctx.pick(
                    (
                        f"return {xs}[0] + {f}({xs}[1:])",
                        f"return max({xs}[0], {f}({xs}[1:]))",
                        f"return {xs}[-1] * 2 + {f}({xs}[:-1])",
                    )
                )
            )
        return f"{f}({data})"
    value = _nested_list(ctx, ctx.scaled(1, 4), ctx.scaled(3, 5))
    w(f"{data} = {value!r}")
    style = ctx.pick(("flatten", "weighted", "depth", "count"))
    out = ctx.name(("out", "acc", "total", "res"))
    with w.block(f"def {f}({xs}" + (", level=1):" if style == "weighted" else "):")):
        if style == "flatten":
            w(f"{out} = []")
            with w.block(f"for {x} in {xs}:"):
                with w.block(f"if isinstance({x}, list):"):
                    w(ctx.pick((f"{out}.extend({f}({x}))", f"{out} += {f}({x})")))
                with w.block("else:"):
                    w(ctx.pick((f"{out}.append({x})", f"{out}.append({x} * {ctx.randint(2, 3)})")))
            w(f"return {out}")
        elif style == "weighted":
            w(f"{out} = 0")
            with w.block(f"for {x} in {xs}:"):
                with w.block(f"if isinstance({x}, list):"):
                    w(f"{out} += {f}({x}, level + 1)")
                with w.block("else:"):
                    w(f"{out} += {x} * level")
            w(f"return {out}")
        elif style == "depth":
            with w.block(f"if not isinstance({xs}, list):"):
                w("return 0")
            w(f"return 1 + max(({f}({x}) for {x} in {xs}), default=0)")
        else:
            with w.block(f"if not isinstance({xs}, list):"):
                w(f"return 1 if {xs} % 2 else 0" if ctx.hard(0.5) else "return 1")
            w(f"return sum({f}({x}) for {x} in {xs})")
    return _one_of(ctx, f"{f}({data})", f"{f}({data}), len({data})")


@_variant("recursion", "recursive string building: reversal, subsets and permutations")
def _recursion_strings(ctx: _Ctx, w: _Writer) -> str:
    f, s = ctx.name(_FUNCS), ctx.name(("s", "word", "txt", "chars"))
    if ctx.d < 0.3:
        word = ctx.pick(_WORDS)
        with w.block(f"def {f}({s}):"):
            w(
                ctx.pick(
                    (
                        f"return {s} if len({s}) <= 1 else {f}({s}[1:]) + {s}[0]",
                        f"return '' if not {s} else {s}[-1] + {f}({s}[:-1])",
                        f"return {s} if len({s}) < 2 else {s}[0] + '-' + {f}({s}[1:])",
                    )
                )
            )
        return f"{f}({word!r})"
    style = ctx.pick(("subsets", "perms", "binary", "pal"))
    rest = ctx.name(("rest", "tail", "sub", "tails"))
    if style == "subsets":
        letters = "".join(ctx.sample("abcdefgh", ctx.scaled(2, 4)))
        with w.block(f"def {f}({s}):"):
            with w.block(f"if not {s}:"):
                w("return ['']")
            w(f"{rest} = {f}({s}[1:])")
            w(f"return {rest} + [{s}[0] + x for x in {rest}]")
        return _one_of(ctx, f"{f}({letters!r})", f"len({f}({letters!r})), {f}({letters!r})[-1]")
    elif style == "perms":
        letters = "".join(ctx.sample("abcdxyz", ctx.scaled(2, 3)))
        i = ctx.name(_LOOPS)
        with w.block(f"def {f}({s}):"):
            with w.block(f"if len({s}) <= 1:"):
                w(f"return [{s}]")
            w(f"return [{s}[{i}] + p for {i} in range(len({s})) for p in {f}({s}[:{i}] + {s}[{i} + 1:])]")
        return _one_of(ctx, f"{f}({letters!r})", f"{f}({letters!r})[{ctx.randint(1, 4)}::2]")
    elif style == "binary":
        n, b = ctx.name(("n", "num", "v")), ctx.randint(2, 7)
        with w.block(f"def {f}({n}):"):
            with w.block(f"if {n} < {b}:"):
                w(f"return str({n})")
            w(f"return {f}({n} // {b}) + str({n} % {b})")
        return _one_of(
            ctx,
            f"{f}({ctx.randint(10, 500)})",
            f"[{f}(x) for x in range({ctx.randint(4, 9)}, {ctx.randint(10, 14)})]",
        )
    else:
        word = ctx.pick(("level", "rotor", "civic", "refer", "stats")) if ctx.chance(0.5) else ctx.pick(_WORDS)
        with w.block(f"def {f}({s}):"):
            with w.block(f"if len({s}) < 2:"):
                w("return True")
            with w.block(f"if {s}[0] != {s}[-1]:"):
                w("return False")
            w(f"return {f}({s}[1:-1])")
        return _one_of(
            ctx,
            f"{f}({word!r}), {f}({word!r}[1:])",
            f"[{f}(x) for x in ({word!r}, {ctx.pick(_WORDS)!r}, 'abba')]",
        )


@_variant("recursion", "mutual recursion between two functions")
def _recursion_mutual(ctx: _Ctx, w: _Writer) -> str:
    f, g, n = ctx.name(_FUNCS), ctx.name(_FUNCS), ctx.name(("n", "k", "m"))
    if ctx.d < 0.35:
        with w.block(f"def {f}({n}):"):
            w(f"return True if {n} == 0 else {g}({n} - 1)")
        with w.block(f"def {g}({n}):"):
            w(f"return False if {n} == 0 else {f}({n} - 1)")
        return f"{f}({ctx.randint(3, 15)}), {g}({ctx.randint(3, 15)})"
    # Hofstadter-style female/male sequences with random tweaks
    with w.block(f"def {f}({n}):"):
        with w.block(f"if {n} == 0:"):
            w("return 1")
        w(f"return {n} - {g}({f}({n} - 1))")
    with w.block(f"def {g}({n}):"):
        with w.block(f"if {n} == 0:"):
            w("return 0")
        w(f"return {n} - {f}({g}({n} - 1))")
    hi = ctx.scaled(4, 11)
    k = ctx.name(_LOOPS)
    if ctx.hard(0.5):
        out = ctx.name(_SEQS)
        w(f"{out} = []")
        with w.block(f"for {k} in range({hi}):"):
            with w.block(f"if {f}({k}) != {g}({k}):"):
                w(f"{out}.append({k})")
        return out
    else:
        return f"[{f}({k}) for {k} in range({hi})], {g}({hi})"

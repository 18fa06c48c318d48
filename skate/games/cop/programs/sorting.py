"""Templates for ``sorting`` programs: the variants registered for this kind, and their helpers.

Variants, in registration order (the order the drafting loop draws from):

- sorting records by composite keys
- a hand-written sorting algorithm with counters
- ordering words with custom key functions
- ranking dictionary entries and picking extremes
"""

from __future__ import annotations

from skate.games.cop.programs.kit import _LOOPS, _SEQS, _WORDS, _Ctx, _one_of, _variant, _Writer


@_variant("sorting", "sorting records by composite keys")
def _sorting_records(ctx: _Ctx, w: _Writer) -> str:
    rows = ctx.name(("people", "rows", "records", "players", "crew", "roster"))
    r = ctx.name(("r", "rec", "p", "row"))
    n = ctx.scaled(3, 7)
    names = ctx.sample(_WORDS, n)
    data = [(nm, ctx.randint(1, 6), ctx.randint(10, 40)) for nm in names]
    w(f"{rows} = {data!r}")
    keys = [f"{r}[1]", f"-{r}[1]", f"{r}[2]", f"{r}[0]", f"len({r}[0])", f"{r}[2] % {ctx.randint(3, 7)}", f"{r}[0][-1]"]
    if ctx.d < 0.3:
        key = ctx.pick(keys[:4])
        if ctx.chance(0.5):
            w(f"{rows}.sort(key=lambda {r}: {key})")
        else:
            w(f"{rows} = sorted({rows}, key=lambda {r}: {key})")
    else:
        for _ in range(ctx.scaled(1, 3)):
            chosen = ctx.sample(keys, ctx.scaled(1, 3))
            key = chosen[0] if len(chosen) == 1 else f"({', '.join(chosen)})"
            rev = ", reverse=True" if ctx.hard(0.5) else ""
            w(f"{rows} = sorted({rows}, key=lambda {r}: {key}{rev})")
    return _one_of(
        ctx,
        f"[{r}[0] for {r} in {rows}]",
        f"[{r}[0] for {r} in {rows}][:{ctx.randint(2, 3)}]",
        f"{rows}[0], {rows}[-1][0]",
    )


@_variant("sorting", "a hand-written sorting algorithm with counters")
def _sorting_manual(ctx: _Ctx, w: _Writer) -> str:
    xs = ctx.name(_SEQS)
    i = ctx.name(_LOOPS)
    j = ctx.name(_LOOPS)
    swaps = ctx.name(("swaps", "moves", "ops", "shifts"))
    data = ctx.ints(ctx.scaled(3, 8), 0, 30)
    w(f"{xs} = {data!r}", f"{swaps} = 0")
    algo = ctx.pick(("bubble", "selection", "insertion")) if ctx.d >= 0.3 else "bubble"
    desc = ctx.hard(0.5)
    cmp = "<" if desc else ">"
    if algo == "bubble":
        with w.block(f"for {i} in range(len({xs})):"):
            with w.block(f"for {j} in range(len({xs}) - 1 - {i}):"):
                with w.block(f"if {xs}[{j}] {cmp} {xs}[{j} + 1]:"):
                    w(f"{xs}[{j}], {xs}[{j} + 1] = {xs}[{j} + 1], {xs}[{j}]", f"{swaps} += 1")
    elif algo == "selection":
        m = ctx.name(("lo", "best", "pick", "m"))
        with w.block(f"for {i} in range(len({xs})):"):
            w(f"{m} = {i}")
            with w.block(f"for {j} in range({i} + 1, len({xs})):"):
                with w.block(f"if {xs}[{j}] {'>' if desc else '<'} {xs}[{m}]:"):
                    w(f"{m} = {j}")
            with w.block(f"if {m} != {i}:"):
                w(f"{xs}[{i}], {xs}[{m}] = {xs}[{m}], {xs}[{i}]", f"{swaps} += 1")
    else:
        key = ctx.name(("key", "cur", "item"))
        with w.block(f"for {i} in range(1, len({xs})):"):
            w(f"{key} = {xs}[{i}]", f"{j} = {i} - 1")
            with w.block(f"while {j} >= 0 and {xs}[{j}] {cmp} {key}:"):
                w(f"{xs}[{j} + 1] = {xs}[{j}]", f"{j} -= 1", f"{swaps} += 1")
            w(f"{xs}[{j} + 1] = {key}")
    return _one_of(ctx, f"{xs}, {swaps}", swaps, f"{swaps}, {xs}[{ctx.randint(0, 2)}]")


@_variant("sorting", "ordering words with custom key functions")
def _sorting_words(ctx: _Ctx, w: _Writer) -> str:
    ws, s = ctx.name(("words", "names", "tokens", "tags")), ctx.name(("s", "w", "word", "t"))
    words = ctx.sample(_WORDS, ctx.scaled(3, 7))
    if ctx.hard(0.5):
        words = [x.capitalize() if ctx.chance(0.4) else x for x in words]
    w(f"{ws} = {words!r}")
    keys = ["len", "str.lower", f"lambda {s}: {s}[-1]", f"lambda {s}: (len({s}), {s})"]
    if ctx.d >= 0.4:
        keys += [
            f"lambda {s}: (-len({s}), {s}[::-1])",
            f"lambda {s}: sum({s}.count(v) for v in 'aeiou')",
            f"lambda {s}: {s}[1:]",
            f"lambda {s}: ({s}[0] in 'aeiou', {s})",
        ]
    out = ws
    for _ in range(ctx.scaled(1, 3)):
        key = ctx.pick(keys)
        rev = ", reverse=True" if ctx.hard(0.5) else ""
        nxt = ctx.name(("ordered", "ranked", "lineup", "sorted_words", "queue"))
        w(f"{nxt} = sorted({out}, key={key}{rev})")
        out = nxt
    if ctx.hard(0.4):
        return f"''.join({s}[0] for {s} in {out}), {out}[-1]"
    else:
        return _one_of(ctx, out, f"{out}[:{ctx.randint(2, 3)}]")


@_variant("sorting", "ranking dictionary entries and picking extremes")
def _sorting_ranking(ctx: _Ctx, w: _Writer) -> str:
    scores, kv = ctx.name(("scores", "points", "votes", "ratings")), ctx.name(("kv", "item", "pair", "e"))
    data = {k: ctx.randint(1, 9) for k in ctx.sample(_WORDS, ctx.scaled(3, 7))}
    w(f"{scores} = {data!r}")
    if ctx.d < 0.3:
        return _one_of(ctx, f"sorted({scores})", f"sorted({scores}.values())", f"max({scores}, key={scores}.get)")
    ranked = ctx.name(("ranked", "order", "board", "standings"))
    key = ctx.pick((f"(-{kv}[1], {kv}[0])", f"({kv}[1], {kv}[0])", f"-{kv}[1]", f"({kv}[1] % 3, {kv}[0])"))
    w(f"{ranked} = sorted({scores}.items(), key=lambda {kv}: {key})")
    parts = [f"[k for k, _ in {ranked}][:{ctx.randint(2, 4)}]"]
    if ctx.hard(0.7):
        place, name = ctx.name(("place", "pos", "rank")), ctx.name(("who", "name", "key"))
        pos = ctx.name(("positions", "where", "index_of"))
        w(f"{pos} = {{}}")
        with w.block(f"for {place}, ({name}, _) in enumerate({ranked}, {ctx.randint(0, 1)}):"):
            w(f"{pos}[{name}] = {place}")
        parts.append(f"{pos}[{ctx.pick(list(data))!r}]")
    if ctx.hard(0.5):
        parts.append(f"min({scores}, key=lambda k: ({scores}[k], k))")
    return ", ".join(parts)

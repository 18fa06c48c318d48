"""Templates for ``dicts`` programs: the variants registered for this kind, and their helpers.

Variants, in registration order (the order the drafting loop draws from):

- counting and grouping with get and setdefault
- insertion order under updates, pops and re-insertion
- following, measuring and inverting a mapping
- aggregating values from nested dictionaries
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from skate.games.cop.programs.kit import _LOOPS, _WORDS, _Ctx, _one_of, _variant, _Writer


@_variant("dicts", "counting and grouping with get and setdefault")
def _dicts_counting(ctx: _Ctx, w: _Writer) -> str:
    words = ctx.name(("words", "names", "tokens", "seen", "basket"))
    counts = ctx.name(("counts", "freq", "tally", "hist", "census"))
    word = ctx.name(("w", "word", "item", "key"))
    vocab = ctx.sample(_WORDS, ctx.scaled(2, 5))
    w(f"{words} = {[ctx.pick(vocab) for _ in range(ctx.scaled(3, 9))]!r}")
    w(f"{counts} = {{}}")
    mode = ctx.pick(("get", "setdefault", "in")) if ctx.d >= 0.3 else "get"
    with w.block(f"for {word} in {words}:"):
        if mode == "get":
            w(f"{counts}[{word}] = {counts}.get({word}, 0) + 1")
        elif mode == "setdefault":
            key = ctx.pick((f"len({word})", f"{word}[0]", f"{word}[-1]"))
            w(f"{counts}.setdefault({key}, []).append({word})")
        else:
            with w.block(f"if {word} in {counts}:"):
                w(f"{counts}[{word}] += {ctx.randint(1, 3)}")
            with w.block("else:"):
                w(f"{counts}[{word}] = {ctx.randint(0, 2)}")
    if ctx.hard(0.7):
        k, v = ctx.name(("k", "key", "name")), ctx.name(("v", "val", "n"))
        if mode == "setdefault":
            w(f"{counts} = {{{k}: len({v}) for {k}, {v} in {counts}.items() if len({v}) > {ctx.randint(0, 1)}}}")
        else:
            with w.block(f"for {k} in list({counts}):"):
                with w.block(f"if {counts}[{k}] {ctx.pick(('<', '>=', '=='))} {ctx.randint(1, 2)}:"):
                    w(
                        ctx.pick(
                            (
                                f"del {counts}[{k}]",
                                f"{counts}[{k}] *= {ctx.randint(2, 5)}",
                                f"{counts}[{k}.upper()] = {counts}.pop({k})",
                            )
                        )
                    )
    return _one_of(ctx, counts, f"len({counts}), {counts}", f"list({counts}.items())")


@dataclass(frozen=True)
class _DictOp:
    template: str
    apply: Callable[[dict[str, int], list[Any]], None]


def _dict_ops(ctx: _Ctx, cur: dict[str, int]) -> list[_DictOp]:
    keys = list(cur)
    old = ctx.pick(keys) if keys else "fig"
    new = ctx.pick([x for x in _WORDS if x not in cur])
    val = ctx.randint(0, 20)
    extra = {ctx.pick(_WORDS): ctx.randint(0, 9) for _ in range(2)}

    def set_new(d: dict, log: list) -> None:
        d[new] = val

    def overwrite(d: dict, log: list) -> None:
        d[old] = val

    def pop_old(d: dict, log: list) -> None:
        log.append(d.pop(old))

    def pop_missing(d: dict, log: list) -> None:
        log.append(d.pop(new, val))

    def reinsert(d: dict, log: list) -> None:
        d[old] = d.pop(old) + val

    def update(d: dict, log: list) -> None:
        d.update(extra)

    def setdefault(d: dict, log: list) -> None:
        log.append(d.setdefault(old, val))

    def get_missing(d: dict, log: list) -> None:
        log.append(d.get(new, val))

    def increment(d: dict, log: list) -> None:
        d[old] += val

    table = [
        (f"{{d}}[{new!r}] = {val}", set_new),
        (f"{{d}}[{old!r}] += {val}", increment),
        (f"{{log}}.append({{d}}.get({new!r}, {val}))", get_missing),
    ]
    if keys:
        table += [(f"{{d}}[{old!r}] = {val}", overwrite), (f"{{log}}.append({{d}}.pop({old!r}))", pop_old)]
    if ctx.d >= 0.4:
        table += [
            (f"{{log}}.append({{d}}.pop({new!r}, {val}))", pop_missing),
            (f"{{d}}.update({extra!r})", update),
            (f"{{d}} |= {extra!r}", update),
            (f"{{log}}.append({{d}}.setdefault({old!r}, {val}))", setdefault),
        ]
        if keys:
            table.append((f"{{d}}[{old!r}] = {{d}}.pop({old!r}) + {val}", reinsert))
    return [_DictOp(t, f) for t, f in table]


@_variant("dicts", "insertion order under updates, pops and re-insertion")
def _dicts_ops(ctx: _Ctx, w: _Writer) -> str:
    d = ctx.name(("stock", "prices", "inv", "table", "book", "registry"))
    log = ctx.name(("log", "seen", "popped", "trail"))
    cur = {k: ctx.randint(1, 9) for k in ctx.sample(_WORDS, ctx.scaled(2, 4))}
    w(f"{d} = {cur!r}", f"{log} = []")
    history: list[Any] = []
    wanted, written, last_line = ctx.scaled(1, 6), 0, ""
    for _ in range(3 * wanted):
        if written >= wanted:
            break
        op = ctx.pick(_dict_ops(ctx, cur))
        trial, trial_log = dict(cur), list(history)
        try:
            op.apply(trial, trial_log)
        except KeyError:
            continue
        line = op.template.replace("{d}", d).replace("{log}", log)
        if not trial or line == last_line:
            continue
        w(line)
        last_line = line
        cur, history = trial, trial_log
        written += 1
    if ctx.hard(0.7):
        k = ctx.name(("k", "key", "name", "entry"))
        with w.block(f"for {k} in list({d}):"):
            with w.block(f"if {d}[{k}] % {ctx.randint(2, 3)} == 0:"):
                w(ctx.pick((f"del {d}[{k}]", f"{d}[{k}] = {d}.pop({k}) // 2", f"{log}.append({d}.pop({k}))")))
            with w.block("else:"):
                w(ctx.pick((f"{d}[{k}] += len({k})", f"{d}[{k}] -= 1")))
        history.append(None)  # the loop may have logged something
    if history:
        return _one_of(ctx, f"{d}, {log}", f"list({d}), {log}")
    return _one_of(ctx, d, f"list({d}.items())", f"sum({d}.values()), list({d})")


@_variant("dicts", "following, measuring and inverting a mapping")
def _dicts_mapping(ctx: _Ctx, w: _Writer) -> str:
    nxt = ctx.name(("nxt", "links", "route", "jump", "succ"))
    keys = list(string.ascii_lowercase[: ctx.scaled(3, 7)])
    mapping = {k: ctx.pick([o for o in keys if o != k]) for k in keys}
    w(f"{nxt} = {mapping!r}")
    if ctx.d >= 0.5 and ctx.chance(0.5):
        lengths = ctx.name(("lengths", "cycles", "orbits", "loops"))
        begin = ctx.name(("start", "origin", "src"))
        seen = ctx.name(("seen", "chain", "trail"))
        w(f"{lengths} = {{}}")
        with w.block(f"for {begin} in {nxt}:"):
            w(f"{seen} = [{begin}]")
            with w.block(f"while {nxt}[{seen}[-1]] not in {seen}:"):
                w(f"{seen}.append({nxt}[{seen}[-1]])")
            w(f"{lengths}[{begin}] = len({seen})" if ctx.chance(0.5) else f"{lengths}[{begin}] = {seen}[-1]")
        result = lengths
    else:
        cur = ctx.name(("cur", "here", "node", "at"))
        path = ctx.name(("path", "trail", "visited", "hops"))
        lap = ctx.name(_LOOPS)
        w(f"{cur} = {ctx.pick(keys)!r}", f"{path} = []")
        with w.block(f"for {lap} in range({ctx.scaled(2, 9)}):"):
            if ctx.hard(0.6):
                with w.block(f"if {cur} in {path}:"):
                    w(ctx.pick(("break", f"{cur} = {nxt}[{nxt}[{cur}]]")))
            w(f"{path}.append({cur})", f"{cur} = {nxt}[{cur}]")
        result = ctx.pick((f"''.join({path})", f"''.join({path}), {cur}"))
    if ctx.hard(0.7):
        inv = ctx.name(("inv", "back", "rev", "undo"))
        k = ctx.name(("k", "key"))
        v = ctx.name(("v", "dst", "val"))
        w(f"{inv} = {{{v}: {k} for {k}, {v} in {nxt}.items()}}")
        result = ctx.pick((f"{result}, {inv}", f"{result}, len({inv})"))
    return result


@_variant("dicts", "aggregating values from nested dictionaries")
def _dicts_nested(ctx: _Ctx, w: _Writer) -> str:
    data = ctx.name(("inventory", "regions", "shops", "teams", "depots"))
    totals = ctx.name(("totals", "sums", "merged", "overall"))
    outer = ctx.name(("region", "shop", "team", "site"))
    inner = ctx.name(("stock", "goods", "roster", "items"))
    item, qty = ctx.name(("item", "thing", "good", "kind")), ctx.name(("qty", "n", "amount", "units"))
    goods = ctx.sample(_WORDS, 4)
    places = ctx.sample(("north", "south", "east", "west", "hub", "dock", "port"), ctx.scaled(1, 3))
    nested = {p: {g: ctx.randint(0, 9) for g in ctx.sample(goods, ctx.randint(1, 3))} for p in places}
    w(f"{data} = {nested!r}", f"{totals} = {{}}")
    with w.block(f"for {outer}, {inner} in {data}.items():"):
        with w.block(f"for {item}, {qty} in {inner}.items():"):
            if ctx.hard(0.7):
                cond = ctx.pick(
                    (
                        f"{qty} < {ctx.randint(1, 4)}",
                        f"{qty} > {ctx.randint(4, 7)}",
                        f"{qty} % 2 == {ctx.randint(0, 1)}",
                        f"{item} == {ctx.pick(goods)!r}",
                    )
                )
                with w.block(f"if {cond}:"):
                    w(ctx.pick(("continue", f"{qty} *= {ctx.randint(2, 3)}", f"{qty} = -{qty}")))
            w(f"{totals}[{item}] = {totals}.get({item}, 0) + {qty}")
        if ctx.hard(0.5):
            w(f"{inner}[{ctx.pick(goods)!r}] = len({inner})")
    return _one_of(ctx, totals, f"{totals}, {data}[{places[0]!r}]", f"max({totals}, key={totals}.get), {totals}")

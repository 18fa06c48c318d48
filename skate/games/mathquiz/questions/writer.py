"""Writing MathQuiz questions for a target, and wrong answers to them.

:func:`generate_question` works backwards from the target, choosing each operation's numbers so
that every step is an exact integer, and keeps the candidate whose measured difficulty is closest
to the one asked for; :func:`wrong_answers` writes plausible mistakes for a question.
"""

from __future__ import annotations

import math
from bisect import bisect
from collections.abc import Mapping
from itertools import accumulate
from types import MappingProxyType
from typing import TypeGuard

import numpy as np

from skate.games.mathquiz.questions.families import _SIGNED, FAMILIES, KINDS
from skate.games.mathquiz.questions.reader import _ANY_NUMBER, _cost, _level, _parse, _run
from skate.games.mathquiz.questions.templates import (
    _COST_FLOOR,
    _COST_SPAN,
    _FRACS,
    _MAX_TEXT,
    _NAME_LIST,
    _NAMES,
    _NOTE_COST,
    _PCT_OFF,
    _PCT_ON,
    _PRONOUNS,
    _RATE_STEPS,
    _TIMES,
    WEIGHTS,
    Family,
    _pick,
)

# ---------------------------------------------------------------- writing


def _back(op: str, y: int, rng: np.random.Generator, scale: int) -> tuple[int, dict[str, int]] | None:
    """A value before ``op`` and the operation's numbers, such that the operation gives ``y``."""

    def r(lo: int, hi: int) -> int:
        return lo + int(rng.random() * (max(lo, hi) - lo + 1))

    if op in ("add", "sub"):
        a = r(2, scale)
        return (y - a if op == "add" else y + a), {"a": a}
    if op in ("addmul", "submul"):
        a, b = r(2, 9 if scale < 60 else 12), r(2, max(3, scale // 2))
        return (y - a * b if op == "addmul" else y + a * b), {"a": a, "b": b}
    if op in ("addsq", "subsq"):
        a = r(2, min(30, 4 + scale // 10))
        return (y - a * a if op == "addsq" else y + a * a), {"a": a}
    if op in ("rateadd", "ratesub"):
        b, m, a = _pick(_RATE_STEPS, rng), r(2, 6), r(2, max(2, scale // 3))
        return (y - a * m if op == "rateadd" else y + a * m), {"a": a, "b": b, "c": b * m}
    if op in ("muladd", "mulsub"):
        k, b = r(2, 6), r(2, scale)
        b += (y - b) % k if op == "muladd" else -(y + b) % k
        return ((y - b) // k if op == "muladd" else (y + b) // k), {"a": k, "b": b}
    if y <= 0:  # the remaining operations scale a positive quantity
        return None
    if op in ("div", "share"):
        a = r(2, 9 if op == "div" else 7)
        return y * (a + (op == "share")), {"a": a}
    if op in ("frac", "fracof"):
        fracs = [pq for pq in _FRACS if y * pq[1] % (pq[1] - pq[0] if op == "frac" else pq[0]) == 0]
        if not fracs:
            return None
        p, q = _pick(fracs, rng)
        return y * q // (q - p if op == "frac" else p), {"p": p, "q": q}
    choices = {
        "mul": [k for k in range(2, 11) if y % k == 0],
        "scale": [b for b in range(2, 13) if y % b == 0],
        "pctoff": [p for p in _PCT_OFF if 100 * y % (100 - p) == 0],
        "pcton": [p for p in _PCT_ON if 100 * y % (100 + p) == 0],
    }[op]
    if not choices:
        return None
    c = _pick(choices, rng)
    if op == "mul":
        return y // c, {"a": c}
    if op == "scale":
        a = _pick([a for a in range(2, 13) if a != c], rng)
        return y // c * a, {"a": a, "b": c}
    return 100 * y // (100 - c if op == "pctoff" else 100 + c), {"a": c}


def _plan(fam: Family, d: float, rng: np.random.Generator) -> tuple[list[str], int]:
    """Operations (forward order) and a number of irrelevant facts whose cost is about ``d``."""
    notes = int(min(2.0, max(0.0, np.floor(3 * d - 1 + rng.random()))))
    budget = _COST_FLOOR + _COST_SPAN * d - _NOTE_COST * notes
    ops = fam.steps
    pref = list(accumulate(math.exp(-(((WEIGHTS[o] - (1 + 1.9 * d)) / 0.8) ** 2)) for o in ops))
    plan: list[str] = []
    for u in rng.random(8):
        plan.append(ops[bisect(pref, u * pref[-1])])
        budget -= WEIGHTS[plan[-1]]
        if budget <= 0.5:
            break
    return plan, notes


def _build(
    fam: Family, d: float, target: int, rng: np.random.Generator
) -> tuple[list[tuple[str, dict[str, int]]], int] | None:
    """One candidate problem, worked backwards from the target: (opener + steps, notes)."""
    plan, notes = _plan(fam, d, rng)
    scale, cap, hidden = int(8 + 300 * d * d), int(max(2 * abs(target), 300) * (1 + 4 * d)), abs(target)

    def fits(back: tuple[int, dict[str, int]] | None) -> TypeGuard[tuple[int, dict[str, int]]]:
        return back is not None and 2 <= abs(back[0]) <= cap and fam.holds(back[0]) and hidden not in back[1].values()

    y, steps = target, []
    for planned in reversed(plan):
        # the planned operation, else the one closest in weight that works from here
        jitter = rng.random(len(fam.steps))
        fallbacks = sorted(
            (abs(WEIGHTS[o] - WEIGHTS[planned]) + 0.5 * j, o) for o, j in zip(fam.steps, jitter, strict=False)
        )
        tries = (planned, planned, planned, *(o for _, o in fallbacks))
        found = next(((op, back) for op in tries if fits(back := _back(op, y, rng, scale))), None)
        if found is None:
            return None
        op, (y, values) = found
        steps.append((op, values))
    if y < 0:
        opener = ("setneg", {"a": -y}) if "setneg" in fam.templates and -y != hidden else None
    else:
        pairs = [(a, y // a) for a in range(2, 13) if y % a == 0 and y // a >= 2 and hidden not in (a, y // a)]
        use_mul = "setmul" in fam.templates and pairs and ("set" not in fam.templates or rng.random() < 0.2 + 0.5 * d)
        if use_mul:
            opener = ("setmul", dict(zip("ab", _pick(pairs, rng), strict=False)))
        else:
            opener = None if y == hidden else ("set", {"a": y})
    return None if opener is None else ([opener, *reversed(steps)], notes)


def _render(
    fam: Family, events: list[tuple[str, dict[str, int]]], notes: int, target: int, rng: np.random.Generator
) -> str:
    order = rng.permutation(len(_NAME_LIST))
    cast = [_NAME_LIST[i] for i in order]
    people, spare = cast[: len(events) if fam.chained else 1], cast[len(events) :]
    gender = _NAMES[people[0]]
    fixed = {w: _pick(fam.words[w], rng) for w in fam.fixed}

    def sentence(op: str, vals: Mapping[str, int], name: str, new: str | None = None) -> str:
        ctx = {
            **_PRONOUNS[gender],
            "name": name,
            "friend": _pick(spare, rng),
            **{w: fixed.get(w) or _pick(ws, rng) for w, ws in fam.words.items()},
            **{k: f"{v:,}" for k, v in vals.items() if k in ("a", "b", "c")},
        }
        if new is not None:
            ctx["new"] = new
        if "a" in vals:
            ctx["times"] = _TIMES.get(vals["a"]) or f"{vals['a']:,} times"
        if "p" in vals:
            ctx["frac"] = _FRACS[vals["p"], vals["q"]]
            ctx["Frac"] = ctx["frac"][0].upper() + ctx["frac"][1:]
        return _pick(fam.templates[op], rng).render(ctx, rng)

    lines = [
        sentence(op, vals, *((people[i - 1], people[i]) if fam.chained and i else (people[0],)))
        for i, (op, vals) in enumerate(events)
    ]
    for _ in range(notes):
        a = abs(target)
        while a == abs(target):
            a = int(rng.integers(2, 60))
        lines.insert(int(rng.integers(1, len(lines) + 1)), sentence("note", {"a": a}, people[0]))
    lines.append(sentence("ask", {}, people[-1]))
    return " ".join(lines)


def generate_question(kind: str, difficulty: float, target: int, rng: np.random.Generator) -> str:
    """An English word problem of family ``kind`` whose answer is exactly ``target``.

    ``difficulty`` in [0, 1] (clipped) sets the number of steps (1 at 0, up to 8 at 1), how hard
    they are, how long the numbers get and how many irrelevant facts are mixed in. A family that
    cannot take the target (a negative count, a temperature below absolute zero) hands over to
    ``savings`` or ``game``; :func:`kind_of` tells which family was used.
    """
    if kind not in FAMILIES:
        raise ValueError(f"unknown MathQuiz kind {kind!r}; valid kinds: {', '.join(KINDS)}")
    d = float(difficulty)
    d = 0.5 if math.isnan(d) else min(1.0, max(0.0, d))
    target = int(target)
    fam = FAMILIES[kind]
    if not fam.holds(target):
        fam = FAMILIES[_pick(_SIGNED, rng)]
    chosen = fam
    for fam in (chosen, chosen, chosen, FAMILIES["game"]):  # retries, then the family that always works
        built = [b for b in (_build(fam, d, target, rng) for _ in range(6)) if b is not None]
        built.sort(key=lambda b: abs(_level(_cost(*b)) - d))
        for events, notes in built:
            text = _render(fam, events, notes, target, rng)
            if abs(target) not in {int(n.replace(",", "")) for n in _ANY_NUMBER.findall(text)}:
                return text
    raise RuntimeError(f"could not write a {kind} question for {target}")  # pragma: no cover


# ---------------------------------------------------------------- wrong answers

_SLIPS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "add": ("sub",),
        "sub": ("add",),
        "addmul": ("submul", "add"),
        "submul": ("addmul", "sub"),
        "addsq": ("subsq", "add"),
        "subsq": ("addsq", "sub"),
        "mul": ("div", "add"),
        "div": ("mul", "sub"),
        "share": ("div",),
        "muladd": ("mulsub", "mul"),
        "mulsub": ("muladd", "mul"),
        "frac": ("fracof",),
        "fracof": ("frac",),
        "pcton": ("pctoff", "add"),
        "pctoff": ("pcton", "sub"),
        "rateadd": ("ratesub", "add"),
        "ratesub": ("rateadd", "sub"),
        "scale": ("mul", "div"),
    }
)


def wrong_answers(text: str, k: int, rng: np.random.Generator) -> list[int]:
    """``k`` distinct plausible wrong answers to a question, never its true answer.

    For a question :func:`solve` reads: the result of a step skipped, a step done with the wrong
    operation or a number misread, and off-by-one slips. For other text: numbers built from the
    numbers in it.
    """
    problem = _parse(text)
    if problem is not None:
        fam, events = FAMILIES[problem.kind], problem.events
        slips: list[int | None] = []
        for i, (op, vals, src, dst) in enumerate(events[1:], 1):
            variants = [("mul", {"a": 1})] + [(s, vals) for s in _SLIPS.get(op, ())]
            for new_op, new_vals in variants:
                changed = (*events[:i], (new_op, new_vals, src, dst), *events[i + 1 :])
                slips.append(_run(fam, changed, problem.ask))
        truth = problem.answer
    else:
        nums = [
            int(n.replace(",", ""))
            for n in _ANY_NUMBER.findall(text[:_MAX_TEXT] if isinstance(text, str) else "")
            if len(n) < 16
        ][:12]
        slips = [n + d for n in nums for d in (-1, 1)]
        slips += [
            f(a, b) for i, a in enumerate(nums) for b in nums[i + 1 :] for f in (int.__add__, int.__sub__, int.__mul__)
        ]
        truth = None
    pool = [s for s in dict.fromkeys(slips) if s is not None and s != truth]
    pool = [pool[i] for i in rng.permutation(len(pool))]
    base = truth if truth is not None else (pool[0] if pool else 10)
    pool += [base + d for d in (1, -1, 2, -2, 10, -10, 3, -3, 100, -100) if base + d != truth]
    out = list(dict.fromkeys(pool))
    while len(out) < k:
        extra = base + int(rng.integers(4, 1000)) * _pick((-1, 1), rng)
        if extra != truth and extra not in out:
            out.append(extra)
    return out[: max(0, k)]

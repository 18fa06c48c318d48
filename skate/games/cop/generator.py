"""Programs for simulated players to set: "what does this program print?"

:func:`generate_program` writes a varied, self-contained Python program of a given *kind* (see
:data:`KINDS`) with a difficulty knob in ``[0, 1]``; the knob is on the scale of
:func:`skate.games.cop.difficulty.code_difficulty`, which measures any program from its syntax
tree. :func:`skate.games.cop.distractors.make_distractors` writes the wrong options.

:func:`predict_output` runs a generated program in-process to read its output.
It is only meant for programs produced by :func:`generate_program`; code written
by a model must go through the sandbox instead.

Generated programs only use builtins, print one value at the end (never only
True/False: :func:`boolean_only` drafts are redrawn, as COP's ``require_value``
rule would reject them), never depend on hash randomisation, object addresses
or the clock, and finish in a few milliseconds at every difficulty.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import math
import re
import string
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np


__all__ = ["KINDS", "boolean_only", "generate_program", "kind_of", "predict_output"]

KINDS: tuple[str, ...] = (
    "arithmetic",
    "strings",
    "slicing",
    "dicts",
    "recursion",
    "closures",
    "sorting",
    "bitwise",
    "generators",
    "exceptions",
    "classes",
    "comprehensions",
)
"""The kinds of Python behaviour a generated program can exercise."""

T = TypeVar("T")

# Longest output a generated program may print; longer drafts are redrawn.
_MAX_OUTPUT_CHARS = 300
_MAX_ATTEMPTS = 40
# Chance at difficulty 1 that a program combines two puzzles (falls to 0 at 0.5).
_COMPOSE_PROBABILITY = 0.9
# Trace events (calls and lines) a draft may use while being validated.
_MAX_TRACE_EVENTS = 60_000


# ---------------------------------------------------------------------------
# Identifier and literal pools
# ---------------------------------------------------------------------------

_SCALARS = (
    "total", "acc", "count", "result", "value", "score", "tally", "level", "size",
    "cur", "prev", "best", "amount", "delta", "base", "carry", "limit", "offset",
    "weight", "mark", "seed", "state", "pivot", "span", "gain", "cost", "energy",
    "budget", "points", "spark", "runner", "meter", "fuel", "stock", "charge",
)
_SHORT = ("a", "b", "c", "p", "q", "r", "s", "u", "v", "w", "x", "y", "z", "m", "n", "t", "e", "h")
_LOOPS = ("i", "j", "k", "idx", "pos", "t", "step", "r", "c", "u", "v", "n", "ix", "jx", "lap")
_SEQS = (
    "items", "nums", "data", "values", "seq", "xs", "bucket", "pool", "stack", "cells",
    "row", "parts", "chunks", "scores", "marks", "ledger", "entries", "batch", "readings",
    "samples", "heap", "queue", "buffer", "weights", "pile", "series", "crates", "slots",
    "lane", "track", "bins", "tape",
)
_TEXTS = (
    "word", "text", "msg", "label", "name", "token", "phrase", "line", "code", "tag",
    "title", "motto", "slogan", "note", "caption", "banner", "chant", "verse", "sign",
)
_FUNCS = (
    "f", "g", "h", "walk", "solve", "combine", "mix", "fold", "helper", "transform",
    "apply_rule", "bump", "twist", "scan", "probe", "shape", "crunch", "churn", "blend",
    "nudge", "process", "refine", "tweak", "spin", "visit", "explore", "measure", "digest",
    "weave", "stir", "grind", "sift",
)
_CLASSES = (
    "Node", "Counter", "Box", "Account", "Shape", "Robot", "Vector", "Cell", "Tracker",
    "Wallet", "Gadget", "Widget", "Sensor", "Engine", "Player", "Ticket", "Garden", "Lamp",
    "Bucket", "Beacon", "Rover", "Crate", "Kettle", "Drone", "Vault",
)
_METHODS = (
    "add", "push", "feed", "charge", "grow", "load", "bump", "store", "absorb", "stack_up",
    "credit", "boost", "fill", "stretch", "pump", "raise_by", "pour", "tick",
)
_WORDS = (
    "apple", "kiwi", "pear", "fig", "plum", "lime", "date", "yam", "corn", "bean", "red",
    "blue", "gold", "jade", "ash", "oak", "elm", "ivy", "sun", "moon", "star", "rain",
    "snow", "wind", "frog", "newt", "crow", "wolf", "lynx", "mole", "cat", "dog", "owl",
    "bee", "mango", "lemon", "cedar", "maple", "otter", "raven", "tiger", "zebra", "quartz",
)


# ---------------------------------------------------------------------------
# Generation helpers
# ---------------------------------------------------------------------------


@dataclass
class _Ctx:
    """Random choices for one program, all drawn from ``rng``.

    ``d`` is the clamped difficulty; helpers such as :meth:`scaled` and
    :meth:`hard` turn it into sizes and feature switches.
    """

    rng: np.random.Generator
    d: float
    used: set[str] = field(default_factory=set)

    def randint(self, lo: int, hi: int) -> int:
        """Uniform integer in ``[lo, hi]`` (both ends included)."""
        return int(self.rng.integers(lo, hi + 1))

    def pick(self, options: Sequence[T]) -> T:
        return options[int(self.rng.integers(len(options)))]

    def sample(self, options: Sequence[T], k: int) -> list[T]:
        """``k`` distinct elements of ``options`` in random order."""
        idx = self.rng.choice(len(options), size=min(k, len(options)), replace=False)
        return [options[int(i)] for i in idx]

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def hard(self, p: float = 1.0) -> bool:
        """A switch that is never on at difficulty 0 and on with ``p`` at 1."""
        return self.chance(p * self.d)

    def scaled(self, lo: int, hi: int) -> int:
        """An integer that grows from ``lo`` to ``hi`` with difficulty, with jitter."""
        x = lo + (hi - lo) * self.d + self.rng.uniform(-0.7, 0.7)
        return int(min(hi, max(lo, round(x))))

    def name(self, pool: Sequence[str]) -> str:
        """A fresh identifier from ``pool`` that this program does not use yet."""
        free = [n for n in pool if n not in self.used]
        if free:
            chosen = self.pick(free)
        else:
            base = self.pick(pool)
            chosen = next(f"{base}{i}" for i in itertools.count(2) if f"{base}{i}" not in self.used)
        self.used.add(chosen)
        return chosen

    def names(self, pool: Sequence[str], k: int) -> list[str]:
        return [self.name(pool) for _ in range(k)]

    def ints(self, k: int, lo: int, hi: int) -> list[int]:
        return [self.randint(lo, hi) for _ in range(k)]

    def words(self, k: int) -> list[str]:
        return [self.pick(_WORDS) for _ in range(k)]


class _Writer:
    """Collects indented source lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._depth = 0

    def __call__(self, *lines: str) -> None:
        for line in lines:
            self.lines.append("    " * self._depth + line)

    @contextlib.contextmanager
    def block(self, header: str) -> Iterator[None]:
        self(header)
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


_Builder = Callable[[_Ctx, _Writer], str]
"""Writes the body of a program and returns the expression the program prints."""


@dataclass(frozen=True)
class _Variant:
    """One structural family of programs for a kind."""

    kind: str
    description: str
    build: _Builder


_VARIANTS: dict[str, list[_Variant]] = {}


def _variant(kind: str, description: str) -> Callable[[_Builder], _Builder]:
    """Register a program builder for ``kind``."""

    def register(build: _Builder) -> _Builder:
        _VARIANTS.setdefault(kind, []).append(_Variant(kind, description, build))
        return build

    return register


def _one_of(ctx: _Ctx, *exprs: str) -> str:
    """Pick one of several equivalent ways to report a result."""
    return ctx.pick(exprs)


# ---------------------------------------------------------------------------
# arithmetic
# ---------------------------------------------------------------------------


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
    return ctx.pick((
        f"{acc} += {i}",
        f"{acc} += {i} * {k}",
        f"{acc} -= {i} // {k}",
        f"{acc} = ({acc} * {k} + {i}) % {m}",
        f"{acc} = {acc} // {k} + {i}",
        f"{acc} -= {k}",
        f"{acc} += {i} % {k}",
        f"{acc} = {acc} * {k} % {m}",
    ))


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
    combine = ctx.pick((
        f"{acc} += {digit}",
        f"{acc} += {digit} * {digit}",
        f"{acc} = {acc} * {ctx.randint(2, 10)} + {digit}",
        f"{acc} += {digit} * {ctx.randint(2, 5)}",
    ))
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
            w(f"{n} = abs({acc}) % {ctx.randint(10 ** 3, 10 ** 5)} + {lap}")
        return _one_of(ctx, n, f"{n}, {acc}")


def _task_multiples(ctx: _Ctx, w: _Writer) -> str:
    out, x = ctx.name(_SCALARS), ctx.name(_LOOPS)
    a, b = ctx.sample(range(2, 10), 2)
    hi = ctx.scaled(10, 60)
    w(f"{out} = 0")
    with w.block(f"for {x} in range(1, {hi}):"):
        cond = ctx.pick((
            f"{x} % {a} == 0 or {x} % {b} == 0",
            f"{x} % {a} == 0 and {x} % {b} != 0",
            f"{x} % {a} == {ctx.randint(0, a - 1)}",
        ))
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


# ---------------------------------------------------------------------------
# strings
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _StrStep:
    """A string transformation: source template and the same operation in Python."""

    template: str
    apply: Callable[[str], str]


def _string_steps(ctx: _Ctx, current: str) -> list[_StrStep]:
    letters = sorted({c for c in current if c.isalpha()})
    c1 = ctx.pick(letters) if letters else "a"
    c2 = ctx.pick("aeiou*-_#0123456789xyz")
    sep = ctx.pick(("-", "_", "", "/", ".", "+"))
    k = ctx.randint(1, 3)
    width = len(current) + ctx.randint(2, 5)
    fill = ctx.pick("*-=.#")
    steps = [
        _StrStep("{v} = {v}.upper()", str.upper),
        _StrStep("{v} = {v}.lower()", str.lower),
        _StrStep("{v} = {v}.title()", str.title),
        _StrStep("{v} = {v}.strip()", str.strip),
        _StrStep(f"{{v}} = {{v}}.replace({c1!r}, {c2!r})", lambda s: s.replace(c1, c2)),
        _StrStep(f"{{v}} = {sep!r}.join({{v}}.split())", lambda s: sep.join(s.split())),
        _StrStep(f"{{v}} = {{v}} + str({{v}}.count({c1!r}))", lambda s: s + str(s.count(c1))),
    ]
    if ctx.d >= 0.3:
        steps += [
            _StrStep("{v} = {v}.swapcase()", str.swapcase),
            _StrStep("{v} = {v}.capitalize()", str.capitalize),
            _StrStep(f"{{v}} = {{v}}.replace({c1!r}, {c2!r}, {k})", lambda s: s.replace(c1, c2, k)),
            _StrStep(f"{{v}} = {{v}}.center({width}, {fill!r})", lambda s: s.center(width, fill)),
            _StrStep("{v} = ' '.join(reversed({v}.split()))", lambda s: " ".join(reversed(s.split()))),
            _StrStep(
                f"{{v}} = {{v}}.partition({c1!r})[2] + {{v}}.partition({c1!r})[0]",
                lambda s: s.partition(c1)[2] + s.partition(c1)[0],
            ),
        ]
    if ctx.d >= 0.6:
        steps += [
            _StrStep(f"{{v}} = {{v}}.rstrip({c1!r}).lstrip({fill!r})", lambda s: s.rstrip(c1).lstrip(fill)),
            _StrStep(f"{{v}} = {{v}}[{k}:] + {{v}}[:{k}]", lambda s: s[k:] + s[:k]),
            _StrStep(f"{{v}} = {{v}}.split({c1!r}, 1)[-1]", lambda s: s.split(c1, 1)[-1]),
            _StrStep(f"{{v}} = str({{v}}.find({c1!r})) + {{v}}", lambda s: str(s.find(c1)) + s),
            _StrStep("{v} = ''.join(sorted(set({v}.lower())))", lambda s: "".join(sorted(set(s.lower())))),
        ]
    return steps


@_variant("strings", "a chain of string method calls")
def _strings_methods(ctx: _Ctx, w: _Writer) -> str:
    v = ctx.name(_TEXTS)
    words = ctx.words(ctx.scaled(2, 4))
    if ctx.hard(0.5):
        words = [word.capitalize() if ctx.chance(0.5) else word for word in words]
    value = " ".join(words)
    if ctx.hard(0.5):
        value = " " * ctx.randint(1, 3) + value + " " * ctx.randint(1, 3)
    w(f"{v} = {value!r}")
    for _ in range(ctx.scaled(1, 6)):
        for _attempt in range(10):
            step = ctx.pick(_string_steps(ctx, value))
            new = step.apply(value)
            if 0 < len(new) <= 48 and new != value:
                break
        else:
            continue
        w(step.template.format(v=v))
        value = new
    return _one_of(ctx, v, f"len({v}), {v}", f"{v}.split()")


def _char_action(ctx: _Ctx, out: str, ch: str, i: str | None) -> str:
    options = [f"{out} += {ch}", f"{out} = {ch} + {out}", f"{out} += {ch}.upper()", f"{out} += {ch} * 2"]
    if i is not None:
        options += [f"{out} += str({i})", f"{out} += {ch} * ({i} % 3)"]
    if ctx.d >= 0.5:
        options += [
            f"{out} += chr(ord({ch}) + 1)",
            f"{out} = {out}[1:] + {ch}",
            f"{out} = {out}[:{ctx.randint(1, 3)}] + {ch}.upper()",
        ]
    return ctx.pick(options)


def _char_cond(ctx: _Ctx, out: str, ch: str, i: str | None) -> str:
    options = [
        f'{ch} in "aeiou"',
        f'{ch} < "{ctx.pick("fhkmpt")}"',
        f'{ch} not in "{"".join(ctx.sample("rstlnbcdg", 3))}"',
    ]
    if i is not None:
        k = ctx.randint(2, 4)
        options += [f"{i} % {k} == {ctx.randint(0, k - 1)}", f"{i} > {ctx.randint(1, 4)}"]
    if ctx.d >= 0.5:
        options += [f"len({out}) > {ctx.randint(2, 6)}", f"{ch} == {out}[-1:]", f"{out}.count({ch}) == 0"]
    return ctx.pick(options)


@_variant("strings", "building a string character by character with conditions")
def _strings_build(ctx: _Ctx, w: _Writer) -> str:
    out = ctx.name(("out", "res", "acc", "built", "buf", "path"))
    ch = ctx.name(("ch", "c", "letter", "sym", "glyph"))
    use_index = ctx.chance(0.3 + 0.5 * ctx.d)
    i = ctx.name(_LOOPS) if use_index else None
    many = ctx.hard(0.6)
    word_var = ctx.name(_TEXTS)
    if many:
        ws = ctx.name(("words", "names", "tokens", "pieces"))
        w(f"{ws} = {ctx.words(ctx.randint(2, 3))!r}")
    else:
        w(f"{word_var} = {ctx.pick(_WORDS) + ctx.pick(_WORDS)!r}")
    w(f"{out} = ''")
    header = f"for {i}, {ch} in enumerate({word_var}):" if i else f"for {ch} in {word_var}:"

    def body() -> None:
        with w.block(header):
            branches = ctx.scaled(0, 3)
            if branches == 0:
                w(_char_action(ctx, out, ch, i))
            for b in range(branches):
                with w.block(f"{'if' if b == 0 else 'elif'} {_char_cond(ctx, out, ch, i)}:"):
                    if ctx.hard(0.3):
                        w(ctx.pick(("continue", "break")) if b > 0 else _char_action(ctx, out, ch, i))
                    else:
                        w(_char_action(ctx, out, ch, i))
            if branches and ctx.chance(0.7):
                with w.block("else:"):
                    w(_char_action(ctx, out, ch, i))

    if many:
        with w.block(f"for {word_var} in {ws}:"):
            body()
            w(f"{out} += {ctx.pick('|-/.')!r}")
    else:
        body()
    return _one_of(ctx, out, f"{out}, len({out})")


@_variant("strings", "character codes with ord and chr")
def _strings_codes(ctx: _Ctx, w: _Writer) -> str:
    msg, ch = ctx.name(_TEXTS), ctx.name(("ch", "c", "letter", "sym"))
    word = ctx.pick(_WORDS) + (ctx.pick(_WORDS) if ctx.hard(0.5) else "")
    w(f"{msg} = {word!r}")
    shift = ctx.randint(1, 25)
    if ctx.d < 0.25:
        return _one_of(
            ctx,
            f"ord({msg}[{ctx.randint(0, 2)}]) - ord('a')",
            f"chr(ord({msg}[0]) + {shift % 5 + 1})",
            f"sum(ord({ch}) for {ch} in {msg}) % {ctx.randint(10, 99)}",
        )
    out = ctx.name(("enc", "coded", "shifted", "secret", "cipher"))
    key = ctx.name(("shift", "key", "offset", "rot"))
    w(f"{key} = {shift}")
    expr = f"chr((ord({ch}) - 97 + {key}) % 26 + 97)"
    if ctx.hard(0.8):
        i = ctx.name(_LOOPS)
        w(f"{out} = ''")
        with w.block(f"for {i}, {ch} in enumerate({msg}):"):
            with w.block(f"if {ch} in 'aeiou':" if ctx.chance(0.5) else f"if {i} % 2 == 0:"):
                w(f"{out} += {expr}")
            with w.block("else:"):
                if ctx.chance(0.5):
                    w(f"{out} += chr((ord({ch}) - 97 - {i} * {key}) % 26 + 97)")
                else:
                    w(f"{out} += {ch}.upper()")
    else:
        w(f"{out} = ''.join({expr} for {ch} in {msg})")
    tail = ctx.pick((
        out,
        f"{out}[::-1]",
        f"{out}, sum(map(ord, {out})) % {ctx.randint(50, 500)}",
        f"{out}.count({ctx.pick('aeiou')!r}), {out}",
    ))
    return tail


@_variant("strings", "f-string alignment, padding and number formats")
def _strings_format(ctx: _Ctx, w: _Writer) -> str:
    rows = ctx.name(("rows", "records", "stock", "entries", "menu"))
    name = ctx.name(("item", "label", "name", "what"))
    qty = ctx.name(("qty", "n", "amount", "units"))
    parts = ctx.name(("parts", "cells", "lines", "bits"))
    records = [(ctx.pick(_WORDS), ctx.randint(0, 250)) for _ in range(ctx.scaled(1, 4))]
    w(f"{rows} = {records!r}")
    specs = [":>6", ":<5", ":^7", ""]
    nspecs = [":03d", ":>4", ""]
    if ctx.d >= 0.4:
        specs += [":*^8", ":.3", ":-<6"]
        nspecs += [":x", ":b", ":+d", ":,", ":#o", ":05.1f"]
    fmt = f"{{{name}{ctx.pick(specs)}}}{ctx.pick('|:;/')}{{{qty}{ctx.pick(nspecs)}}}"
    w(f"{parts} = []")
    with w.block(f"for {name}, {qty} in {rows}:"):
        if ctx.hard(0.7):
            with w.block(f"if {qty} % {ctx.randint(2, 4)} == 0:"):
                w(f"{name} = {name}.upper()")
            if ctx.hard(0.5):
                with w.block(f"elif len({name}) > {ctx.randint(3, 5)}:"):
                    w(f"{qty} = {qty} * {ctx.randint(2, 9)}")
        w(f'{parts}.append(f"{fmt}")')
    return _one_of(ctx, f"{ctx.pick(['/', ' ', ';', ','])!r}.join({parts})", parts)


# ---------------------------------------------------------------------------
# slicing
# ---------------------------------------------------------------------------


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

        table = [
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
            w(ctx.pick((
                f"{xs}[{j}::3] = {xs}[{j}::3][::-1]",
                f"{xs}[{j}] += {xs}[-1 - {j}]",
                f"{xs}[-1:] = [{xs}[-1] + {j}]",
            )))
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
            w(ctx.pick((
                f"{s} = {s}[{k}:] + {s}[:{k}]",
                f"{s} = {s}[-{k}:] + {s}[:-{k}]",
                f"{s} = {s}[::-1][{k}:] + {s}[:{k}]",
            )))
    for _ in range(ctx.scaled(1, 4)):
        a = ctx.randint(0, 4)
        b = a + ctx.randint(2, 6)
        k = ctx.randint(2, 3)
        simple = [f"{s}[{a}:{b}]", f"{s}[::-1]", f"{s}[-{a + 1}:]", f"{s}[:{b}].upper()"]
        tricky = [f"{s}[::{k}]", f"{s}[{a}::{k}]", f"{s}[::-{k}]", f"{s}[{b}:{a}:-1]", f"{s}[-1:-{b}:-{k}]"]
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


# ---------------------------------------------------------------------------
# dicts
# ---------------------------------------------------------------------------


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
                    w(ctx.pick((
                        f"del {counts}[{k}]",
                        f"{counts}[{k}] *= {ctx.randint(2, 5)}",
                        f"{counts}[{k}.upper()] = {counts}.pop({k})",
                    )))
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
                cond = ctx.pick((
                    f"{qty} < {ctx.randint(1, 4)}",
                    f"{qty} > {ctx.randint(4, 7)}",
                    f"{qty} % 2 == {ctx.randint(0, 1)}",
                    f"{item} == {ctx.pick(goods)!r}",
                ))
                with w.block(f"if {cond}:"):
                    w(ctx.pick(("continue", f"{qty} *= {ctx.randint(2, 3)}", f"{qty} = -{qty}")))
            w(f"{totals}[{item}] = {totals}.get({item}, 0) + {qty}")
        if ctx.hard(0.5):
            w(f"{inner}[{ctx.pick(goods)!r}] = len({inner})")
    return _one_of(ctx, totals, f"{totals}, {data}[{places[0]!r}]", f"max({totals}, key={totals}.get), {totals}")


# ---------------------------------------------------------------------------
# recursion
# ---------------------------------------------------------------------------


def _rec_linear(ctx: _Ctx, w: _Writer) -> str:
    f, n = ctx.name(_FUNCS), ctx.name(("n", "k", "m", "depth"))
    base = ctx.randint(0, 2)
    a, s = ctx.pick((1, 1, 2)), ctx.pick((1, 1, 2))
    combine = ctx.pick((
        f"{n} + {f}({n} - {s})",
        f"{n} * {f}({n} - {s})",
        f"{a} * {f}({n} - {s}) + {n}",
        f"{f}({n} - {s}) - {n} % {ctx.randint(2, 4)}",
    ))
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
        return ' + '.join(calls)
    else:
        return ', '.join(calls)


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
            w(ctx.pick((
                f"return {xs}[0] + {f}({xs}[1:])",
                f"return max({xs}[0], {f}({xs}[1:]))",
                f"return {xs}[-1] * 2 + {f}({xs}[:-1])",
            )))
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
            w(ctx.pick((
                f"return {s} if len({s}) <= 1 else {f}({s}[1:]) + {s}[0]",
                f"return '' if not {s} else {s}[-1] + {f}({s}[:-1])",
                f"return {s} if len({s}) < 2 else {s}[0] + '-' + {f}({s}[1:])",
            )))
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


# ---------------------------------------------------------------------------
# closures
# ---------------------------------------------------------------------------


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
    return ', '.join(calls)


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
    return ', '.join(results)


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
        return ', '.join(calls)
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
    return ', '.join(calls)


# ---------------------------------------------------------------------------
# sorting
# ---------------------------------------------------------------------------


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
    return ', '.join(parts)


# ---------------------------------------------------------------------------
# bitwise
# ---------------------------------------------------------------------------


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
        w(f"{count} = " + ctx.pick((
            f"bin({n}).count('1')",
            f"{n}.bit_count()",
            f"{n}.bit_length()",
            f"{n} & ({n} - 1)",
            f"{n} & -{n}",
            f"bin({n})[2:].count('0')",
        )))
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
        cond = ctx.pick((
            f"sum({chosen}) == {target}",
            f"len({chosen}) == {ctx.randint(2, 3)} and sum({chosen}) % {ctx.randint(2, 5)} == 0",
            f"sum({chosen}) > {target} and len({chosen}) < 3",
        ))
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
        parts.append(ctx.pick((
            f"{rev}({ctx.randint(1, 2 ** width - 1)})",
            f"[{rev}({i}) for {i} in range({ctx.randint(3, 6)})]",
        )))
    if ctx.hard(0.6):
        parts.append(ctx.pick((
            f"int('{bin(ctx.randint(8, 200))[2:]}', 2) ^ {ctx.randint(1, 31)}",
            f"format({ctx.randint(10, 255)}, '#x'), {hex(ctx.randint(16, 255))} >> 2",
        )))
    return ', '.join(parts)


# ---------------------------------------------------------------------------
# generators
# ---------------------------------------------------------------------------


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
    sends = ctx.ints(ctx.scaled(2, 5), 1, 9)
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
            update = ctx.pick((
                f"{cur} += {step}",
                f"{cur} = {cur} * 2 + {step}",
                f"{cur} = ({cur} + {step}) % {modulus}",
            ))
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


# ---------------------------------------------------------------------------
# exceptions
# ---------------------------------------------------------------------------


@_variant("exceptions", "order of try, except, else and finally clauses")
def _exceptions_flow(ctx: _Ctx, w: _Writer) -> str:
    log = ctx.name(("log", "trace", "events", "steps"))
    x = ctx.name(("x", "d", "div", "v"))
    items = ctx.name(_SEQS)
    data = ctx.ints(ctx.scaled(1, 5), 0, 4)
    if 0 not in data:
        data[ctx.randint(0, len(data) - 1)] = 0
    num = ctx.randint(6, 60)
    w(f"{log} = []")
    raises = False
    if ctx.d < 0.25:
        risky, caught = ctx.pick((
            (f"{num} // {data[0]}", ctx.pick(("ZeroDivisionError", "ArithmeticError"))),
            (f"int({ctx.pick(_WORDS)!r})", "ValueError"),
            (f"[{num}, {num + 1}][{ctx.randint(1, 3)}]", ctx.pick(("IndexError", "LookupError"))),
            (f"{{{ctx.pick(_WORDS)!r}: {num}}}[{ctx.pick(_WORDS)!r}]", ctx.pick(("KeyError", "LookupError"))),
        ))
        with w.block("try:"):
            w(f"{log}.append({risky})")
        with w.block(f"except {caught}:"):
            w(f"{log}.append({ctx.pick(('oops', 'zero', 'missing', 'failed', 'caught'))!r})")
        if ctx.chance(0.5):
            with w.block("else:"):
                w(f"{log}.append({ctx.pick(('ok', 'fine', 'done'))!r})")
        return log
    w(f"{items} = {data!r}")
    with w.block(f"for {x} in {items}:"):
        with w.block("try:"):
            w(f"{log}.append({num} // {x})")
            if ctx.hard(0.5):
                with w.block(f"if {x} == {ctx.randint(1, 4)}:"):
                    jump = ctx.pick(("break", "continue", f"raise ValueError({x})"))
                    raises = jump.startswith("raise")
                    w(jump)
        with w.block("except ZeroDivisionError:"):
            w(f"{log}.append({ctx.pick(_WORDS)!r})")
        if raises:
            with w.block("except ValueError as err:"):
                w(f"{log}.append(-err.args[0])")
        if ctx.chance(0.5):
            with w.block("else:"):
                w(f"{log}.append({ctx.pick(('ok', '+', 'fine', 'yes'))!r})")
        if ctx.hard(0.8):
            with w.block("finally:"):
                w(f"{log}.append({ctx.pick(('.', 'end', 'f', '|'))!r})")
    return log


@_variant("exceptions", "different built-in exception types caught by type")
def _exceptions_types(ctx: _Ctx, w: _Writer) -> str:
    results = ctx.name(("results", "outcomes", "caught", "report"))
    op = ctx.name(("op", "task", "job", "probe"))
    table = ctx.name(("table", "lookup", "prices"))
    known = ctx.pick(_WORDS)
    w(f"{table} = {{{known!r}: {ctx.randint(1, 9)}}}")
    cases = [
        (f"int({str(ctx.randint(1, 99))!r})", None),
        (f"int({ctx.pick(_WORDS)!r})", "ValueError"),
        (f"{table}[{known!r}]", None),
        (f"{table}[{ctx.pick([x for x in _WORDS if x != known])!r}]", "KeyError"),
        (f"[1, 2, 3][{ctx.randint(3, 6)}]", "IndexError"),
        (f"{ctx.randint(1, 9)} // 0", "ZeroDivisionError"),
        (f"'{ctx.pick(_WORDS)}' + {ctx.randint(1, 9)}", "TypeError"),
        (f"len({ctx.pick(_WORDS)!r}) * {ctx.randint(2, 4)}", None),
    ]
    chosen = ctx.sample(cases, ctx.scaled(1, 5))
    if ctx.d < 0.25:
        expr, _ = chosen[0]
        with w.block("try:"):
            w(f"{results} = {expr}")
        with w.block("except Exception as e:"):
            w(f"{results} = type(e).__name__")
        return results
    ops = ctx.name(("ops", "tasks", "jobs", "probes", "thunks"))
    w(f"{results} = []")
    w(f"{ops} = [{', '.join(f'lambda: {expr}' for expr, _ in chosen)}]")
    with w.block(f"for {op} in {ops}:"):
        with w.block("try:"):
            w(f"{results}.append({op}())")
        if ctx.hard(0.7):
            with w.block("except (KeyError, IndexError) as e:"):
                w(f"{results}.append('lookup:' + type(e).__name__[0])")
        with w.block("except ArithmeticError:"):
            w(f"{results}.append('math')")
        with w.block("except Exception as e:"):
            w(f"{results}.append(type(e).__name__)")
    return results


@_variant("exceptions", "custom exceptions raised from functions")
def _exceptions_custom(ctx: _Ctx, w: _Writer) -> str:
    base = ctx.name(("AppError", "GameError", "BadInput", "Fault"))
    child = ctx.name(("TooSmall", "TooBig", "Overflow", "Drained"))
    if ctx.d < 0.3:
        with w.block(f"class {child}(Exception):"):
            w("pass")
        check = ctx.name(("check", "validate", "guard"))
        v = ctx.name(("v", "value", "n"))
        out = ctx.name(("out", "seen", "log"))
        with w.block(f"def {check}({v}):"):
            with w.block(f"if {v} < {ctx.randint(2, 5)}:"):
                w(f"raise {child}()")
            w(f"return {v} - 1")
        with w.block("try:"):
            w(f"{out} = {check}({ctx.randint(0, 8)})")
        with w.block(f"except {child}:"):
            w(f"{out} = {ctx.pick(('low', 'small', 'nope'))!r}")
        return out
    with w.block(f"class {base}(Exception):"):
        w("pass")
    with w.block(f"class {child}({base}):"):
        w("pass")
    check, v = ctx.name(("check", "validate", "guard", "inspect")), ctx.name(("v", "value", "n"))
    lo, hi = ctx.randint(1, 4), ctx.randint(6, 12)
    with w.block(f"def {check}({v}):"):
        with w.block(f"if {v} < {lo}:"):
            w(f"raise {child}({v})")
        if ctx.d >= 0.3:
            with w.block(f"if {v} > {hi}:"):
                w(f"raise {base}({v} * {ctx.randint(2, 3)})")
        w(f"return {v} * {ctx.randint(2, 5)}")
    out, x = ctx.name(("out", "seen", "log")), ctx.name(("x", "val", "item"))
    data = ctx.ints(ctx.scaled(2, 6), 0, 14)
    w(f"{out} = []")
    with w.block(f"for {x} in {data!r}:"):
        with w.block("try:"):
            w(f"{out}.append({check}({x}))")
        order = [child, base] if ctx.chance(0.6) else [base, child]
        for idx, exc in enumerate(order):
            with w.block(f"except {exc} as err:"):
                w(f"{out}.append({('small', 'low', 'tiny')[idx] if exc == child else 'bad'!r} + str(err.args[0]))")
        if ctx.hard(0.6):
            with w.block("finally:"):
                w(f"{out}.append({x})" if ctx.chance(0.3) else f"{out}.append('.')")
    if ctx.hard(0.5):
        outer = ctx.name(_FUNCS)
        with w.block(f"def {outer}({v}):"):
            with w.block("try:"):
                w(f"return {check}({v})")
            with w.block(f"except {base}:"):
                w(f"raise ValueError({v}) from None")
        with w.block("try:"):
            w(f"{outer}({ctx.pick((0, 99))})")
        with w.block("except ValueError as e:"):
            w(f"{out}.append(type(e).__name__)")
    return out


@_variant("exceptions", "finally blocks that run while returning")
def _exceptions_finally(ctx: _Ctx, w: _Writer) -> str:
    f, x, log = ctx.name(_FUNCS), ctx.name(("x", "n", "v")), ctx.name(("log", "trace", "events"))
    w(f"{log} = []")
    with w.block(f"def {f}({x}):"):
        with w.block("try:"):
            if ctx.d >= 0.3:
                with w.block(f"if {x} % {ctx.randint(2, 3)} == 0:"):
                    w(f"raise ValueError({x})")
            w(f"{log}.append('try')", f"return {x} * {ctx.randint(2, 5)}")
        if ctx.d >= 0.3:
            with w.block("except ValueError:"):
                w(f"{log}.append('except')", f"return -{x}")
        with w.block("finally:"):
            w(f"{log}.append('finally')")
            if ctx.hard(0.5):
                with w.block(f"if {x} > {ctx.randint(3, 7)}:"):
                    w(f"{x} = 0")
    calls = [f"{f}({ctx.randint(1, 9)})" for _ in range(ctx.scaled(1, 4))]
    res = ctx.name(("res", "got", "outs"))
    w(f"{res} = [{', '.join(calls)}]")
    return f"{res}, {log}[-{ctx.randint(2, 4)}:]" if ctx.hard(0.5) else f"{res}, len({log})"


# ---------------------------------------------------------------------------
# classes
# ---------------------------------------------------------------------------


@_variant("classes", "an object whose methods mutate its state")
def _classes_state(ctx: _Ctx, w: _Writer) -> str:
    cls = ctx.name(_CLASSES)
    attr = ctx.name(_SCALARS)
    meth = ctx.name(_METHODS)
    obj = ctx.name(("obj", "item", "unit", "thing", "me"))
    amount = ctx.name(("amount", "n", "qty", "by"))
    other = ctx.name(_METHODS) if ctx.d >= 0.3 else None
    history = ctx.name(("history", "trail", "past", "log")) if ctx.hard(0.5) else None
    with w.block(f"class {cls}:"):
        with w.block(f"def __init__(self, {attr}={ctx.randint(0, 9)}):"):
            w(f"self.{attr} = {attr}")
            if history:
                w(f"self.{history} = []")
        with w.block(f"def {meth}(self, {amount}):"):
            if ctx.hard(0.7):
                with w.block(f"if {amount} > {ctx.randint(2, 6)}:"):
                    w(f"{amount} //= 2")
            w(f"self.{attr} += {amount}")
            if history:
                w(f"self.{history}.append(self.{attr})")
            w("return self")
        if other:
            with w.block(f"def {other}(self):"):
                w(ctx.pick((
                    f"self.{attr} = self.{attr} * {ctx.randint(2, 3)} % {ctx.randint(10, 50)}",
                    f"self.{attr} -= {ctx.randint(1, 5)}",
                )))
                w("return self")
    w(f"{obj} = {cls}({ctx.randint(0, 9)})")
    calls = []
    for _ in range(ctx.scaled(1, 6)):
        calls.append(f".{meth}({ctx.randint(1, 9)})" if not other or ctx.chance(0.6) else f".{other}()")
    if ctx.hard(0.5):
        w(f"{obj}{''.join(calls)}")
    else:
        for call in calls:
            w(f"{obj}{call}")
    tail = f"{obj}.{attr}, {obj}.{history}" if history else f"{obj}.{attr}"
    return tail


@_variant("classes", "inheritance, overriding and super()")
def _classes_inherit(ctx: _Ctx, w: _Writer) -> str:
    base = ctx.name(_CLASSES)
    sub = ctx.name(_CLASSES)
    meth = ctx.name(("area", "cost", "power", "size", "speed", "load"))
    k = ctx.name(("k", "n", "side", "w"))
    with w.block(f"class {base}:"):
        with w.block(f"def __init__(self, {k}):"):
            w(f"self.{k} = {k}")
        with w.block(f"def {meth}(self):"):
            w(f"return self.{k} * {ctx.randint(2, 4)}")
        describes = ctx.d >= 0.4
        if describes:
            with w.block("def describe(self):"):
                w(f"return type(self).__name__[:{ctx.randint(2, 4)}] + str(self.{meth}())")
    with w.block(f"class {sub}({base}):"):
        with w.block(f"def {meth}(self):"):
            w(ctx.pick((
                f"return super().{meth}() + {ctx.randint(1, 5)}",
                f"return self.{k} ** 2",
                f"return super().{meth}() * 2 - self.{k}",
            )))
    classes = [base, sub]
    if ctx.hard(0.7):
        third = ctx.name(_CLASSES)
        with w.block(f"class {third}({sub}):"):
            with w.block(f"def __init__(self, {k}, extra={ctx.randint(1, 4)}):"):
                w(f"super().__init__({k} + extra)")
        classes.append(third)
    objs = ctx.name(("objs", "shapes", "fleet", "things"))
    w(f"{objs} = [{', '.join(f'{ctx.pick(classes)}({ctx.randint(1, 6)})' for _ in range(ctx.scaled(1, 5)))}]")
    o = ctx.name(("o", "s", "it"))
    if describes and ctx.chance(0.6):
        return f"[{o}.describe() for {o} in {objs}]"
    return _one_of(ctx, f"[{o}.{meth}() for {o} in {objs}]", f"sum({o}.{meth}() for {o} in {objs})")


@_variant("classes", "dunder methods for arithmetic, comparison and repr")
def _classes_dunder(ctx: _Ctx, w: _Writer) -> str:
    cls, a, b = ctx.name(_CLASSES), ctx.name(("x", "a", "lo", "w")), ctx.name(("y", "b", "hi", "h"))
    with w.block(f"class {cls}:"):
        with w.block(f"def __init__(self, {a}, {b}):"):
            w(f"self.{a}, self.{b} = {a}, {b}")
        with w.block("def __add__(self, other):"):
            w(f"return {cls}(self.{a} + other.{a}, self.{b} + other.{b})")
        with w.block("def __repr__(self):"):
            w(f"return f'{cls[0]}({{self.{a}}}, {{self.{b}}})'")
        arithmetic = ctx.d >= 0.3
        ordered = ctx.hard(0.8)
        if arithmetic:
            with w.block("def __mul__(self, k):"):
                w(f"return {cls}(self.{a} * k, self.{b} * k)")
            with w.block("def __eq__(self, other):"):
                w(f"return self.{a} + self.{b} == other.{a} + other.{b}")
        if ordered:
            with w.block("def __lt__(self, other):"):
                w(f"return (self.{a}, -self.{b}) < (other.{a}, -other.{b})")
            with w.block("def __len__(self):"):
                w(f"return abs(self.{a}) + abs(self.{b})")
    vs = [f"{cls}({ctx.randint(-3, 6)}, {ctx.randint(-3, 6)})" for _ in range(ctx.scaled(2, 4))]
    p, q = ctx.name(_SHORT), ctx.name(_SHORT)
    w(f"{p} = {vs[0]}", f"{q} = {vs[1]}")
    parts = [ctx.pick((f"{p} + {q}", f"{q} + {p} + {p}"))]
    if arithmetic:
        parts.append(ctx.pick((
            f"{p} * {ctx.randint(2, 4)}",
            f"({p} + {q}) * {ctx.randint(2, 3)}",
            f"{p} == {q}",
            f"{p} * 2 == {q} + {q}",
        )))
    if ordered:
        lst = ctx.name(_SEQS)
        w(f"{lst} = [{', '.join(vs)}]")
        parts.append(ctx.pick((
            f"sorted({lst})",
            f"max({lst})",
            f"sorted({lst}, key=len)",
            f"min({lst}), len({lst}[-1])",
        )))
    return ', '.join(parts)


@_variant("classes", "class attributes shared between instances")
def _classes_shared(ctx: _Ctx, w: _Writer) -> str:
    cls = ctx.name(_CLASSES)
    shared = ctx.name(("registry", "members", "log", "shelf", "seen"))
    count = ctx.name(("count", "made", "total", "issued"))
    label = ctx.name(("label", "tag", "name", "code"))
    with w.block(f"class {cls}:"):
        w(f"{count} = 0")
        if ctx.d >= 0.3:
            w(f"{shared} = []")
        with w.block(f"def __init__(self, {label}):"):
            w(f"self.{label} = {label}")
            w(f"{cls}.{count} += 1" if ctx.chance(0.6) or ctx.d < 0.3 else f"self.{count} += 1")
            if ctx.d >= 0.3:
                w(f"self.{shared}.append({label})")
        summary = ctx.d >= 0.3 and ctx.hard(0.6)
        if summary:
            w("@classmethod")
            with w.block("def summary(cls):"):
                w(f"return cls.{count}, len(cls.{shared})")
    objs = ctx.names(("a", "b", "c", "first", "second", "third", "x1", "x2"), ctx.scaled(2, 4))
    for o in objs:
        w(f"{o} = {cls}({ctx.pick(_WORDS)!r})")
    parts = [f"{cls}.{count}", f"{objs[0]}.{count}"]
    if ctx.d >= 0.3:
        if ctx.hard(0.6):
            w(f"{objs[-1]}.{shared} = [{ctx.pick(_WORDS)!r}]")
        parts.append(f"{objs[0]}.{shared}")
        parts.append(f"{objs[-1]}.{shared}")
    if summary:
        parts.append(f"{cls}.summary()")
    return f"{', '.join(ctx.sample(parts, max(2, len(parts) - 1)))}"


# ---------------------------------------------------------------------------
# comprehensions
# ---------------------------------------------------------------------------


def _filter_cond(ctx: _Ctx, x: str) -> str:
    k = ctx.randint(2, 5)
    return ctx.pick((
        f"{x} % {k} == {ctx.randint(0, k - 1)}",
        f"{x} > {ctx.randint(1, 8)}",
        f"{x} % {k}",
        f"not {x} % {k}",
        f"{x} * {x} < {ctx.randint(20, 90)}",
    ))


def _map_expr(ctx: _Ctx, x: str) -> str:
    return ctx.pick((
        f"{x} * {x}",
        f"{x} + {ctx.randint(1, 9)}",
        f"{x} * {ctx.randint(2, 5)}",
        f"{x} // {ctx.randint(2, 3)}",
        f"-{x}",
        f"{x} % {ctx.randint(3, 7)}",
        x,
    ))


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
    return ', '.join(parts)


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
    return ', '.join(names)


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
    return ', '.join(parts)


if set(_VARIANTS) != set(KINDS):  # pragma: no cover - guards against editing mistakes
    raise RuntimeError("every kind needs at least one program variant")


# ---------------------------------------------------------------------------
# Public generation API
# ---------------------------------------------------------------------------


def generate_program(kind: str, difficulty: float, rng: np.random.Generator) -> str:
    """Write a complete Python program of the given kind and difficulty.

    The first line is the header ``# <kind>: <description>`` and the last line
    prints the answer.  ``difficulty`` is clamped to ``[0, 1]``; higher values
    give longer, more nested programs with more iterations, more interacting
    steps and trickier semantics (above 0.5 a program may combine two puzzles
    of the same kind into one printed answer).  All randomness comes from
    ``rng``, so the same generator state always gives the same program.

    Raises:
        ValueError: if ``kind`` is not one of :data:`KINDS`.
    """
    if kind not in _VARIANTS:
        raise ValueError(f"unknown program kind {kind!r}; valid kinds are: {', '.join(KINDS)}")
    d = float(min(1.0, max(0.0, difficulty))) if math.isfinite(difficulty) else 0.0
    for _ in range(_MAX_ATTEMPTS):
        ctx = _Ctx(rng=rng, d=d)
        parts = 2 if ctx.chance(_COMPOSE_PROBABILITY * max(0.0, 2.0 * d - 1.0)) else 1
        chosen = ctx.sample(_VARIANTS[kind], parts)
        writer = _Writer()
        printed = [variant.build(ctx, writer) for variant in chosen]
        writer(f"print({', '.join(printed)})")
        description = "; then ".join(variant.description for variant in chosen)
        source = f"# {kind}: {description}\n" + writer.text()
        if _acceptable(source):
            return source
    raise RuntimeError(f"could not generate an acceptable {kind!r} program")  # pragma: no cover


class _BudgetExceeded(BaseException):
    """Raised inside a draft that runs for too long (BaseException: drafts cannot catch it)."""


class _LineBudget:
    """A trace function that stops a draft after a fixed number of trace events."""

    def __init__(self, limit: int) -> None:
        self.left = limit

    def __call__(self, frame: Any, event: str, arg: Any) -> _LineBudget:
        self.left -= 1
        if self.left < 0:
            raise _BudgetExceeded
        return self


def _acceptable(source: str) -> bool:
    """Whether a draft runs cleanly, quickly, and prints a short, non-empty answer that is a
    value (not only True/False).

    Templates are designed to terminate fast; the trace budget is a safety net
    so that an unlucky draft is redrawn instead of hanging the generator.
    """
    previous = sys.gettrace()
    sys.settrace(_LineBudget(_MAX_TRACE_EVENTS))
    try:
        output = _run_draft(source)
    except (Exception, _BudgetExceeded):  # a draft that fails is simply redrawn
        return False
    finally:
        sys.settrace(previous)
    return 0 < len(output) <= _MAX_OUTPUT_CHARS and output.strip() != "" and not boolean_only(output)


def boolean_only(output: str) -> bool:
    """Whether a program's output is nothing but the words True and False (a boolean, or a few
    of them separated by whitespace), which COP does not accept as a task's answer."""
    words = output.split()
    return bool(words) and all(w in ("True", "False") for w in words)


def _run_draft(source: str) -> str:
    """Like :func:`predict_output`, but captures ``print`` without touching ``sys.stdout``.

    Generated programs only write through ``print``, so shadowing it in the
    program's globals captures everything while staying safe to use from
    several threads at once.
    """
    buffer = io.StringIO()

    def captured_print(*args: Any, **kwargs: Any) -> None:
        kwargs["file"] = buffer
        print(*args, **kwargs)

    exec(compile(source, "<generated program>", "exec"), {"__name__": "__main__", "print": captured_print})
    output = buffer.getvalue()
    return output[:-1] if output.endswith("\n") else output


def predict_output(code: str) -> str:
    """Run a program in this process and return what it prints.

    The program runs with globals ``{"__name__": "__main__"}`` and its standard
    output captured; one trailing newline is removed.  Exceptions propagate.

    Only use this on trusted programs produced by :func:`generate_program`.
    It offers no isolation at all, so it must never run model-written code;
    that has to go through the sandbox.  It also swaps the process-wide
    ``sys.stdout`` while running, so calls from several threads at once can
    capture each other's output.
    """
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(compile(code, "<generated program>", "exec"), {"__name__": "__main__"})
    output = buffer.getvalue()
    return output[:-1] if output.endswith("\n") else output


def kind_of(code: str) -> str | None:
    """The kind named in a ``# <kind>: ...`` first-line header, if it is known."""
    first = code.split("\n", 1)[0]
    match = _HEADER.match(first)
    if match and match.group(1) in KINDS:
        return match.group(1)
    return None


_HEADER = re.compile(r"^\s*#\s*([A-Za-z_]+)\s*:")

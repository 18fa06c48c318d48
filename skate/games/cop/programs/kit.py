"""What every COP program template is written with: the kinds, and the kit to write them.

:data:`KINDS` names the kinds of Python behaviour a generated program can exercise. The rest
is shared by the template modules (one per kind, e.g. :mod:`skate.games.cop.programs.arithmetic`):

- identifier and literal pools (``_SCALARS``, ``_LOOPS``, ``_WORDS``, ...) to draw names from;
- :class:`_Ctx`, the random choices for one program, all drawn from one ``rng``;
- :class:`_Writer`, which collects the indented source lines;
- the variant registry: :func:`_variant` registers a builder in ``_VARIANTS[kind]``, in
  definition order, which is the order :func:`skate.games.cop.programs.drafting.generate_program`
  draws from.

The underscore names are private to the :mod:`skate.games.cop.programs` package.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

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


# ---------------------------------------------------------------------------
# Identifier and literal pools
# ---------------------------------------------------------------------------

_SCALARS = (
    "total",
    "acc",
    "count",
    "result",
    "value",
    "score",
    "tally",
    "level",
    "size",
    "cur",
    "prev",
    "best",
    "amount",
    "delta",
    "base",
    "carry",
    "limit",
    "offset",
    "weight",
    "mark",
    "seed",
    "state",
    "pivot",
    "span",
    "gain",
    "cost",
    "energy",
    "budget",
    "points",
    "spark",
    "runner",
    "meter",
    "fuel",
    "stock",
    "charge",
)
_SHORT = ("a", "b", "c", "p", "q", "r", "s", "u", "v", "w", "x", "y", "z", "m", "n", "t", "e", "h")
_LOOPS = ("i", "j", "k", "idx", "pos", "t", "step", "r", "c", "u", "v", "n", "ix", "jx", "lap")
_SEQS = (
    "items",
    "nums",
    "data",
    "values",
    "seq",
    "xs",
    "bucket",
    "pool",
    "stack",
    "cells",
    "row",
    "parts",
    "chunks",
    "scores",
    "marks",
    "ledger",
    "entries",
    "batch",
    "readings",
    "samples",
    "heap",
    "queue",
    "buffer",
    "weights",
    "pile",
    "series",
    "crates",
    "slots",
    "lane",
    "track",
    "bins",
    "tape",
)
_TEXTS = (
    "word",
    "text",
    "msg",
    "label",
    "name",
    "token",
    "phrase",
    "line",
    "code",
    "tag",
    "title",
    "motto",
    "slogan",
    "note",
    "caption",
    "banner",
    "chant",
    "verse",
    "sign",
)
_FUNCS = (
    "f",
    "g",
    "h",
    "walk",
    "solve",
    "combine",
    "mix",
    "fold",
    "helper",
    "transform",
    "apply_rule",
    "bump",
    "twist",
    "scan",
    "probe",
    "shape",
    "crunch",
    "churn",
    "blend",
    "nudge",
    "process",
    "refine",
    "tweak",
    "spin",
    "visit",
    "explore",
    "measure",
    "digest",
    "weave",
    "stir",
    "grind",
    "sift",
)
_CLASSES = (
    "Node",
    "Counter",
    "Box",
    "Account",
    "Shape",
    "Robot",
    "Vector",
    "Cell",
    "Tracker",
    "Wallet",
    "Gadget",
    "Widget",
    "Sensor",
    "Engine",
    "Player",
    "Ticket",
    "Garden",
    "Lamp",
    "Bucket",
    "Beacon",
    "Rover",
    "Crate",
    "Kettle",
    "Drone",
    "Vault",
)
_METHODS = (
    "add",
    "push",
    "feed",
    "charge",
    "grow",
    "load",
    "bump",
    "store",
    "absorb",
    "stack_up",
    "credit",
    "boost",
    "fill",
    "stretch",
    "pump",
    "raise_by",
    "pour",
    "tick",
)
_WORDS = (
    "apple",
    "kiwi",
    "pear",
    "fig",
    "plum",
    "lime",
    "date",
    "yam",
    "corn",
    "bean",
    "red",
    "blue",
    "gold",
    "jade",
    "ash",
    "oak",
    "elm",
    "ivy",
    "sun",
    "moon",
    "star",
    "rain",
    "snow",
    "wind",
    "frog",
    "newt",
    "crow",
    "wolf",
    "lynx",
    "mole",
    "cat",
    "dog",
    "owl",
    "bee",
    "mango",
    "lemon",
    "cedar",
    "maple",
    "otter",
    "raven",
    "tiger",
    "zebra",
    "quartz",
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

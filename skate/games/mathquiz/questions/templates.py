"""The language MathQuiz stories are written in: vocabulary, operations, sentence templates.

The vocabulary (names and their pronouns, fractions, multiples, percentages), the operations a
sentence can denote with their difficulty :data:`WEIGHTS` and their arithmetic (``_apply``), and
the template language: a template is plain text with ``{slot}`` fields and ``[one|another]``
alternatives, rendered by ``_Template.render`` and compiled into the regular expression
``_Template.read`` matches. A :class:`Family` is one kind of story built from such templates.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType

import numpy as np

_FEMALE = (
    "Maya Lena Priya Sofia Amara Chloe Ingrid Yuki Fatima Rosa Hannah Nadia Elif Keiko Zara "
    "Greta Leila Marta Aisha Carmen Olga Tessa Nina Ada"
).split()
_MALE = (
    "Omar Jonas Ravi Tomas Kwame Felix Mateo Hugo Arjun Liam Diego Kenji Emil Yusuf Pablo "
    "Anton Samir Theo Milo Bruno Ivan Raul Dev Oscar"
).split()
_NAMES: Mapping[str, str] = MappingProxyType({**{n: "f" for n in _FEMALE}, **{n: "m" for n in _MALE}})
_NAME_LIST = tuple(_NAMES)
_PRONOUNS = {
    "f": {"He": "She", "he": "she", "His": "Her", "his": "her", "him": "her", "himself": "herself"},
    "m": {"He": "He", "he": "he", "His": "His", "his": "his", "him": "him", "himself": "himself"},
}
_FRACS = {
    (1, 2): "half",
    (1, 3): "a third",
    (2, 3): "two thirds",
    (1, 4): "a quarter",
    (3, 4): "three quarters",
    (1, 5): "a fifth",
    (2, 5): "two fifths",
    (3, 5): "three fifths",
    (4, 5): "four fifths",
    (1, 6): "a sixth",
    (5, 6): "five sixths",
    (1, 8): "an eighth",
    (3, 8): "three eighths",
    (1, 10): "a tenth",
    (3, 10): "three tenths",
}
_FRAC_OF = {text: pq for pq, text in _FRACS.items()}
_TIMES = {
    2: "twice",
    3: "three times",
    4: "four times",
    5: "five times",
    6: "six times",
    7: "seven times",
    8: "eight times",
    9: "nine times",
    10: "ten times",
}
_TIMES_OF = {text: k for k, text in _TIMES.items()}
_PCT_OFF = (5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 60, 75, 80, 90)
_PCT_ON = (5, 10, 15, 20, 25, 40, 50, 60, 75, 100, 150, 200)
_RATE_STEPS = (2, 3, 4, 5, 6, 10, 12, 15, 20, 30)

_NUM = r"\d{1,3}(?:,\d{3}){1,5}|\d{1,15}"  # bounded: int() of huge digit strings raises
_GLOBAL_SLOTS = {
    **{s: _NUM for s in "abc"},
    **{s: "|".join(sorted(_NAMES, key=len, reverse=True)) for s in ("name", "new", "friend")},
    **{s: f"{_PRONOUNS['f'][s]}|{_PRONOUNS['m'][s]}" for s in _PRONOUNS["m"]},
    "times": "|".join(_TIMES.values()) + rf"|(?:{_NUM}) times",
    "frac": "|".join(sorted(_FRAC_OF, key=len, reverse=True)),
    "Frac": "|".join(sorted((t[0].upper() + t[1:] for t in _FRAC_OF), key=len, reverse=True)),
}

# Difficulty cost of each operation (openers first): add/subtract < multiply < exact division <
# two-step products < fractions, percentages and unit rates.
WEIGHTS: Mapping[str, float] = MappingProxyType(
    {
        "set": 0.0,
        "setneg": 0.5,
        "setmul": 1.0,
        "add": 1.0,
        "sub": 1.0,
        "mul": 1.6,
        "addsq": 1.8,
        "subsq": 1.8,
        "addmul": 2.0,
        "submul": 2.0,
        "div": 2.2,
        "share": 2.5,
        "muladd": 2.6,
        "mulsub": 2.6,
        "fracof": 2.6,
        "frac": 2.8,
        "pcton": 3.0,
        "pctoff": 3.0,
        "rateadd": 3.0,
        "ratesub": 3.0,
        "scale": 3.0,
    }
)
_OPENERS = ("set", "setneg", "setmul")
_NOTE_COST, _DIGIT_COST, _COST_FLOOR, _COST_SPAN = 0.8, 0.3, 1.0, 19.0
_MAX_TEXT = 6000


def _apply(op: str, x: int, v: Mapping[str, int]) -> int | None:
    """The value after one operation on ``x``, or None when a division does not come out exact."""
    a, b, c, p, q = (v.get(k, 0) for k in "abcpq")

    def exact(n: int, d: int) -> int | None:
        return n // d if d > 0 and n % d == 0 else None

    match op:
        case "set" | "setneg" | "setmul":
            return {"set": a, "setneg": -a, "setmul": a * b}[op]
        case "add" | "sub":
            return x + a if op == "add" else x - a
        case "addmul" | "submul":
            return x + a * b if op == "addmul" else x - a * b
        case "addsq" | "subsq":
            return x + a * a if op == "addsq" else x - a * a
        case "mul" | "muladd" | "mulsub":
            return x * a + {"mul": 0, "muladd": b, "mulsub": -b}[op]
        case "div" | "share":
            return exact(x, a + (op == "share"))
        case "fracof":
            return exact(x * p, q)
        case "scale":
            return None if (unit := exact(x, a)) is None else unit * b
    part = {
        "frac": exact(x * p, q),
        "pcton": exact(x * a, 100),
        "pctoff": exact(x * a, 100),
        "rateadd": exact(c, b),
        "ratesub": exact(c, b),
    }[op]  # the amount taken off or added
    if part is None:
        return None
    return {"frac": x - part, "pcton": x + part, "pctoff": x - part, "rateadd": x + a * part, "ratesub": x - a * part}[
        op
    ]


def _pick[T](seq: Sequence[T], rng: np.random.Generator) -> T:
    return seq[int(rng.random() * len(seq))]  # rng.random() is several times cheaper than rng.integers()


# ---------------------------------------------------------------- templates

_TOKEN = re.compile(r"\[([^\]]*)\]|\{(\w+)\}|([^\[{]+)")
# A template's pieces: ("lit", text), ("slot", name) and ("alt", (pieces, ...)).
type _Piece = tuple[str, str | tuple[_Pieces, ...]]
type _Pieces = tuple[_Piece, ...]


def _tokens(src: str) -> _Pieces:
    """Split a template into ("lit", text), ("slot", name) and ("alt", (pieces, ...)) pieces."""
    out: list[_Piece] = []
    for m in _TOKEN.finditer(src):
        if m.group(1) is not None:
            out.append(("alt", tuple(_tokens(alt) for alt in m.group(1).split("|"))))
        elif m.group(2) is not None:
            out.append(("slot", m.group(2)))
        else:
            out.append(("lit", m.group(3)))
    return tuple(out)


@dataclass(frozen=True)
class _Template:
    """One sentence form: the operation it denotes, how to write it and how to read it."""

    op: str
    parts: _Pieces
    pattern: str  # the regular expression ``read`` matches, compiled when first read
    groups: tuple[str, ...]  # the slot behind each capturing group, in order

    @classmethod
    def compile(cls, op: str, src: str, slots: Mapping[str, str]) -> _Template:
        parts, groups = _tokens(src), []

        def pattern(ps: _Pieces) -> str:
            out = []
            for kind, val in ps:
                if isinstance(val, tuple):  # "alt"
                    out.append("(?:" + "|".join(pattern(alt) for alt in val) + ")")
                elif kind == "lit":
                    out.append(re.escape(val))
                else:  # "slot"
                    groups.append(val)
                    out.append(f"({slots[val]})")
            return "".join(out)

        return cls(op, parts, pattern(parts), tuple(groups))

    @cached_property
    def regex(self) -> re.Pattern[str]:
        # Compiled on first use: a process that only writes questions (most games) never pays for
        # the ~270 patterns.
        return re.compile(self.pattern)

    def render(self, ctx: Mapping[str, str], rng: np.random.Generator) -> str:
        def walk(ps: _Pieces) -> str:
            out = []
            for kind, val in ps:
                if isinstance(val, tuple):  # "alt"
                    out.append(walk(_pick(val, rng)))
                elif kind == "lit":
                    out.append(val)
                else:  # "slot"
                    out.append(ctx[val])
            return "".join(out)

        return walk(self.parts)

    def read(self, sentence: str) -> dict[str, str] | None:
        """The text of each slot, or None when the sentence is not of this form."""
        m = self.regex.fullmatch(sentence)
        if m is None:
            return None
        got: dict[str, str] = {}
        for i, slot in enumerate(self.groups, 1):
            text = m.group(i)
            if text is not None and got.setdefault(slot, text) != text:
                return None
        return got


@dataclass(frozen=True)
class Family:
    """A kind of problem: its vocabulary, the values it allows and its sentence templates."""

    kind: str
    lo: int | None  # smallest value the quantity may take (None: unbounded)
    hi: int | None
    words: Mapping[str, tuple[str, ...]]  # word slots; those in ``fixed`` stay put in a question
    fixed: tuple[str, ...]
    templates: Mapping[str, tuple[_Template, ...]]  # by operation, plus "note" and "ask"
    chained: bool  # every step introduces a new person compared with the one before
    steps: tuple[str, ...]  # the operations its step sentences denote

    def holds(self, value: int) -> bool:
        return (self.lo is None or value >= self.lo) and (self.hi is None or value <= self.hi)


def _family(
    kind: str,
    lo: int | None,
    hi: int | None,
    words: dict[str, tuple[str, ...]],
    fixed: tuple[str, ...],
    templates: dict[str, tuple[str, ...]],
) -> Family:
    slots = {
        **_GLOBAL_SLOTS,
        **{w: "|".join(re.escape(x) for x in sorted(ws, key=len, reverse=True)) for w, ws in words.items()},
    }
    compiled = {op: tuple(_Template.compile(op, src, slots) for src in srcs) for op, srcs in templates.items()}
    chained = any("new" in t.groups for ts in compiled.values() for t in ts)
    steps = tuple(op for op in compiled if op in WEIGHTS and op not in _OPENERS)
    return Family(kind, lo, hi, MappingProxyType(words), fixed, MappingProxyType(compiled), chained, steps)

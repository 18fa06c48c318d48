"""Reading a MathQuiz question back: its answer, its family and its difficulty.

:func:`solve` and :func:`kind_of` parse a question written in the families' templates (any other
text gives ``None``); :func:`question_difficulty` rates any text, exactly for those questions and
roughly for others.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from skate.games.mathquiz.questions.families import _FAMILIES
from skate.games.mathquiz.questions.templates import (
    _COST_FLOOR,
    _COST_SPAN,
    _DIGIT_COST,
    _FRAC_OF,
    _MAX_TEXT,
    _NAMES,
    _NOTE_COST,
    _OPENERS,
    _PRONOUNS,
    _TIMES_OF,
    WEIGHTS,
    Family,
    _apply,
)

# ---------------------------------------------------------------- reading

_SENTENCE_BREAK = re.compile(r"(?<=[.?!])\s+")
_Event = tuple[str, Mapping[str, int], str | None, str]  # operation, its numbers, source, destination


@dataclass(frozen=True)
class _Problem:
    """What a question says: its family, its operations in order, the irrelevant facts, the ask."""

    kind: str
    events: tuple[_Event, ...]
    notes: int
    ask: str
    answer: int


def _numbers(got: Mapping[str, str]) -> dict[str, int]:
    """The numeric value of each number-like slot (multipliers go to "a", fractions to "p"/"q")."""
    vals: dict[str, int] = {}
    for slot, text in got.items():
        if slot in ("a", "b", "c"):
            vals[slot] = int(text.replace(",", ""))
        elif slot == "times":
            vals["a"] = _TIMES_OF.get(text) or int(text.split()[0].replace(",", ""))
        elif slot in ("frac", "Frac"):
            vals["p"], vals["q"] = _FRAC_OF[text.lower()]
    return vals


def _run(fam: Family, events: tuple[_Event, ...], ask: str) -> int | None:
    """Carry out the operations on the named quantities; None if a step is inexact or impossible."""
    values: dict[str, int] = {}
    for op, vals, src, dst in events:
        if src is not None and src not in values:
            return None
        y = _apply(op, values[src] if src is not None else 0, vals)
        if y is None or not fam.holds(y):
            return None
        values[dst] = y
    return values.get(ask)


def _bind(
    fam: Family, op: str, got: Mapping[str, str], known: set[str], current: str, fixed: Mapping[str, str]
) -> tuple[str | None, str] | None:
    """Whose quantity a sentence reads and writes, if it is consistent with the story so far."""
    if any(fixed.get(w, got[w]) != got[w] for w in fam.fixed if w in got):
        return None
    if got.get("friend") in known or got.get("friend", "") == got.get("new"):
        return None
    if op in _OPENERS:
        return None, got.get("name", "")
    src = got.get("name", current)
    if src not in known:
        return None
    pronouns = [s for s in _PRONOUNS["m"] if s in got]
    if pronouns and (src not in _NAMES or any(got[s] != _PRONOUNS[_NAMES[src]][s] for s in pronouns)):
        return None
    dst = got.get("new", src)
    return None if "new" in got and dst in known else (src, dst)


def _read_as(fam: Family, sentences: list[str]) -> _Problem | None:
    """Read the sentences as a problem of one family: opener, steps and facts, then the question."""
    known: set[str] = set()
    fixed: dict[str, str] = {}
    events: list[_Event] = []
    current, notes, ask = "", 0, None
    last = len(sentences) - 1
    for i, sentence in enumerate(sentences):
        roles = _OPENERS if i == 0 else ("ask",) if i == last else (*fam.steps, "note")
        found = None  # (op, the slots read, whose quantity it reads and writes)
        for role in roles:
            for tpl in fam.templates.get(role, ()):
                got = tpl.read(sentence)
                if got is not None and (bound := _bind(fam, role, got, known, current, fixed)) is not None:
                    found = role, got, bound
                    break
            if found is not None:
                break
        else:
            return None
        op, got, bound = found
        fixed.update((w, got[w]) for w in fam.fixed if w in got)
        if op == "note":
            notes += 1
        elif op == "ask":
            ask = bound[0]
        else:
            events.append((op, _numbers(got), *bound))
            known.add(bound[1])
            current = bound[1]
    if ask is None:
        return None
    answer = _run(fam, tuple(events), ask)
    return None if answer is None else _Problem(fam.kind, tuple(events), notes, ask, answer)


def _parse(text: str) -> _Problem | None:
    if not isinstance(text, str) or len(text) > _MAX_TEXT:
        return None
    return _parse_text(text)


@functools.lru_cache(maxsize=4096)
def _parse_text(text: str) -> _Problem | None:
    """What ``text`` says, read once: a game reads each question many times (its difficulty for
    every player, its answer, its slips, its kind), and the result is immutable."""
    sentences = _SENTENCE_BREAK.split(text.strip())
    if len(sentences) < 2:
        return None
    for fam in _FAMILIES:
        if any(t.read(sentences[0]) is not None for op in _OPENERS for t in fam.templates.get(op, ())):
            if (problem := _read_as(fam, sentences)) is not None:
                return problem
    return None


def solve(text: str) -> int | None:
    """Read a question written by :func:`generate_question` and return its answer.

    None for any text not in the generator's forms (a paraphrase, a question with a sentence
    missing, a story whose numbers do not divide exactly...). Never raises.
    """
    problem = _parse(text)
    return None if problem is None else problem.answer


def kind_of(text: str) -> str | None:
    """The family of a question written by :func:`generate_question` (None otherwise)."""
    problem = _parse(text)
    return None if problem is None else problem.kind


# ---------------------------------------------------------------- difficulty

_ANY_NUMBER = re.compile(r"\d[\d,]*")
_HARD_WORDS = re.compile(
    r"%|\b(?:percent|half|halves|thirds?|quarters?|fifths?|sixths?|eighths?|tenths?|per|"
    r"every|each|apiece|times|twice|double[sd]?|triple[sd]?|equally|ratio|average|rate)\b",
    re.IGNORECASE,
)
_PLAIN_WORDS = re.compile(
    r"\b(?:more|fewer|less|left|gives?|spends?|buys?|loses?|adds?|remaining|total|"
    r"altogether|sum|difference|plus|minus)\b",
    re.IGNORECASE,
)


def _cost(events: Sequence[tuple[str, Mapping[str, int]]] | Sequence[_Event], notes: int) -> float:
    """Work to solve a problem: operation weights, long numbers and irrelevant facts."""
    cost = _NOTE_COST * notes
    for op, vals, *_ in events:
        digits = sum(max(0, len(str(vals[k])) - 2) for k in ("a", "b", "c") if k in vals)
        cost += WEIGHTS[op] + _DIGIT_COST * digits
    return cost


def _level(cost: float) -> float:
    return min(1.0, max(0.0, (cost - _COST_FLOOR) / _COST_SPAN))


def question_difficulty(text: str) -> float:
    """How hard a question is to solve, in [0, 1], from its text alone.

    For a question :func:`solve` can read, the cost of its operations (add/subtract < multiply <
    exact division < fractions, percentages, unit rates), its long numbers and its irrelevant
    facts; for any other text a rough estimate of the same from its numbers and operation words.
    """
    problem = _parse(text)
    if problem is not None:
        return _level(_cost(problem.events, problem.notes))
    text = text[:_MAX_TEXT] if isinstance(text, str) else ""
    nums = [n.replace(",", "") for n in _ANY_NUMBER.findall(text)][:200]
    rough = (
        1.2 * max(0, len(nums) - 2)
        + 1.0 * len(_HARD_WORDS.findall(text))
        + 0.3 * len(_PLAIN_WORDS.findall(text))
        + _DIGIT_COST * sum(max(0, len(n) - 2) for n in nums)
    )
    return _level(_COST_FLOOR + rough)

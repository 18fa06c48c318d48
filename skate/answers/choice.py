"""Multiple choice: the real answer shown among wrong options, a reply names one of them.

A setter supplies a pool of wrong options (distractors). Each answer sample draws
``n_options - 1`` of them at random, adds the real answer and shuffles, so a player's
p(correct) does not hang on one lucky or unlucky option set (SKATE's Algorithm 1).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from skate.runlog.records import FailReason, Rejection

_WS = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """Collapse whitespace runs to one space and strip: the key for comparing options."""
    return _WS.sub(" ", text).strip()


@dataclass(frozen=True)
class ChoiceQuery:
    """What one multiple-choice sample shows: the task's text and the options, in order."""

    prompt: str
    options: tuple[str, ...]


def draw_choice(
    prompt: str, answer: str, distractors: Sequence[str], n_options: int, rng: np.random.Generator
) -> ChoiceQuery:
    """The answer plus ``n_options - 1`` distractors drawn without replacement, shuffled."""
    picked = [distractors[i] for i in rng.choice(len(distractors), size=n_options - 1, replace=False).tolist()]
    options = [answer, *picked]
    return ChoiceQuery(prompt, tuple([options[i] for i in rng.permutation(len(options)).tolist()]))


def grade_choice(query: ChoiceQuery, answer: str, reply: Any) -> bool:
    """Whether ``reply`` (an option index) points at the real answer."""
    return isinstance(reply, int) and 0 <= reply < len(query.options) and query.options[reply] == answer


def check_distractors(answer: str, distractors: Any, n: int) -> tuple[tuple[str, ...], Rejection | None]:
    """Keep the first ``n`` options that are distinct (after whitespace normalising) from each
    other and from the answer; reject when there are too few."""
    if not isinstance(distractors, (list, tuple)):
        return (), Rejection(FailReason.MALFORMED, "distractors must be a list of strings")
    seen = {normalize_text(answer)}
    kept: list[str] = []
    dropped = 0
    for d in distractors:
        key = normalize_text(str(d))
        if not key or key in seen:
            dropped += 1
            continue
        seen.add(key)
        kept.append(str(d))
        if len(kept) == n:
            break
    if len(kept) < n:
        return tuple(kept), Rejection(
            FailReason.TOO_FEW_DISTRACTORS,
            f"only {len(kept)} distinct wrong options, need {n} "
            f"({dropped} were empty, repeated, or equal to the real answer "
            f"{normalize_text(answer)[:80]!r} after whitespace normalising)",
        )
    return tuple(kept), None

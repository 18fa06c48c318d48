"""What every task family tells the engine.

A game's static facts (:class:`GameSpec`) are kept apart from its dynamics: validating a
proposal into a :class:`~skate.records.Task` (or a :class:`~skate.records.Rejection` that says
why, as feedback for the next attempt) and the text that stands for the task in the uniqueness
test. The engine knows nothing else about any one game.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from skate.records import FailReason, Rejection, Task
from skate.sandbox import Sandbox

_WS = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Collapse whitespace runs to one space and strip: the key for comparing answers."""
    return _WS.sub(" ", text).strip()


@dataclass(frozen=True)
class GameSpec:
    name: str
    rounds: int
    attempts: int
    n_distractors: int
    n_options: int
    answer_format: str = "multiple_choice"


class Game(ABC):
    spec: GameSpec

    @abstractmethod
    def validate(self, proposal: Any, *, round: int, setter: str, sandbox: Sandbox) -> Task | Rejection:
        """Check a setter's proposal; return the task or the reason it is not valid."""

    def novelty_text(self, task: Task) -> str:
        """The text embedded for the uniqueness test."""
        return task.prompt

    def proposal_text(self, proposal: Any) -> str:
        """A readable rendering of a proposal, for logs and failed-attempt feedback."""
        return str(proposal)

    def check_distractors(self, answer: str, distractors: Any) -> tuple[tuple[str, ...], Rejection | None]:
        """Keep the first ``n_distractors`` options that are distinct (after whitespace
        normalising) from each other and from the answer; reject when there are too few."""
        if not isinstance(distractors, (list, tuple)):
            return (), Rejection(FailReason.MALFORMED, "distractors must be a list of strings")
        seen = {normalize(answer)}
        kept: list[str] = []
        dropped = 0
        for d in distractors:
            key = normalize(str(d))
            if not key or key in seen:
                dropped += 1
                continue
            seen.add(key)
            kept.append(str(d))
            if len(kept) == self.spec.n_distractors:
                break
        if len(kept) < self.spec.n_distractors:
            return tuple(kept), Rejection(
                FailReason.TOO_FEW_DISTRACTORS,
                f"only {len(kept)} distinct wrong options, need {self.spec.n_distractors} "
                f"({dropped} were empty, repeated, or equal to the real answer "
                f"{normalize(answer)[:80]!r} after whitespace normalising)",
            )
        return tuple(kept), None

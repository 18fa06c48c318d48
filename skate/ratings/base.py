"""The rating backend interface: consume pairwise outcomes, produce a ranked table."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from skate.config import OutcomeRule
from skate.ratings.outcomes import PairOutcome, task_outcomes


@dataclass(frozen=True)
class RatingRow:
    player: str
    mu: float
    sigma: float
    rank: int

    def as_dict(self) -> dict[str, Any]:
        return {"player": self.player, "mu": self.mu, "sigma": self.sigma, "rank": self.rank}


class RatingBackend(ABC):
    """Holds one rating per player; ``update`` takes one task's p(correct) for every player."""

    def __init__(self, outcome: OutcomeRule | str = OutcomeRule.relative, draw_margin: float = 0.05,
                 p_thresh: float = 0.55) -> None:
        self.outcome = OutcomeRule(outcome)
        self.draw_margin = draw_margin
        self.p_thresh = p_thresh
        self.players: list[str] = []

    def add_players(self, names: Sequence[str]) -> None:
        for name in names:
            if name not in self.players:
                self.players.append(name)
                self._add(name)

    def outcomes(self, task_id: str, p_correct: Mapping[str, float]) -> list[PairOutcome]:
        return task_outcomes(task_id, p_correct, self.players, self.outcome, self.draw_margin,
                             self.p_thresh)

    def update(self, task_id: str, p_correct: Mapping[str, float]) -> list[dict[str, Any]]:
        """Apply every pairwise outcome of one task; return one log record per update."""
        return [self.apply(o) for o in self.outcomes(task_id, p_correct)]

    @abstractmethod
    def _add(self, name: str) -> None: ...

    @abstractmethod
    def apply(self, outcome: PairOutcome) -> dict[str, Any]:
        """Apply one pairwise outcome; return a record of the ratings after it."""

    @abstractmethod
    def table(self) -> list[RatingRow]:
        """Players best first with rank 1, 2, ..."""

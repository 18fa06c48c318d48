"""Elo, online: after each pairwise outcome, each player moves by K × (result − expected).

Expected score of a against b: 1 / (1 + 10^((R_b − R_a) / scale)). A draw counts 0.5. Elo has
no uncertainty, so the table's interval is empty (None); ranks follow the rating.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from skate.errors import Problem
from skate.ratings.base import RatingBackend, RatingRow, rank_by_score, rating
from skate.ratings.config import OutcomeRuleConfig, positive
from skate.ratings.outcomes import PairOutcome


# The settings (conf/rating/elo.yaml extends them: /schema/rating/elo).
@dataclass
class EloConfig(OutcomeRuleConfig):
    _target_: str = "skate.ratings.elo.EloRating"
    k: float = 16.0
    scale: float = 400.0
    initial: float = 1500.0

    def check(self) -> list[Problem]:
        return [*super().check(), *positive(self, "k", "scale")]  # scale: rating points per factor 10 of odds


@rating.register("elo", EloConfig)
class EloRating(RatingBackend):
    says_order = False  # no uncertainty: it cannot say how sure its order is
    quick_pairs = True
    settings: EloConfig

    def __init__(self, settings: EloConfig | None = None, /, **values: Any) -> None:
        super().__init__(settings, **values)
        k, scale = self.settings.k, self.settings.scale
        if k <= 0 or scale <= 0:
            raise ValueError(f"rating.k={k} and rating.scale={scale} must both be > 0")
        self.k, self.scale, self.initial = k, scale, self.settings.initial
        self.ratings: dict[str, float] = {}
        self.n_updates = 0

    @property
    def keeps_history(self) -> bool:
        return False  # each update reads only the two ratings

    def _add(self, name: str) -> None:
        self.ratings[name] = self.initial

    def expected(self, a: str, b: str) -> float:
        return 1.0 / (1.0 + 10 ** ((self.ratings[b] - self.ratings[a]) / self.scale))

    def _pair(self, a: str, b: str, result: float) -> None:
        e = self.expected(a, b)
        self.ratings[a] += self.k * (result - e)
        self.ratings[b] -= self.k * (result - e)
        self.n_updates += 1

    def state(self, players: Sequence[str]) -> dict[str, dict[str, float]]:
        return {"elo": {n: self.ratings[n] for n in players}}

    def apply(self, o: PairOutcome) -> dict[str, Any]:
        self._pair(o.a, o.b, o.result)
        return {
            "update": self.n_updates,
            "task_id": o.task_id,
            "a": o.a,
            "b": o.b,
            "p_a": o.p_a,
            "p_b": o.p_b,
            "result": o.result,
            "elo_a": self.ratings[o.a],
            "elo_b": self.ratings[o.b],
        }

    def _table(self) -> list[RatingRow]:
        ranks = rank_by_score([(n, self.ratings[n]) for n in self.players])
        return sorted(
            (RatingRow(n, self.ratings[n], None, None, ranks[n], {"games": self.games[n]}) for n in self.players),
            key=lambda r: r.rank or 10**9,
        )

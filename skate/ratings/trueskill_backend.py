"""TrueSkill, updated once per unique pair of players per task (SKATE §4.3)."""

from __future__ import annotations

import warnings
from typing import Any

with warnings.catch_warnings():  # trueskill 0.4.5 has an invalid escape in a docstring
    warnings.simplefilter("ignore", SyntaxWarning)
    import trueskill

from skate.config import OutcomeRule
from skate.ratings.base import RatingBackend, RatingRow
from skate.ratings.outcomes import PairOutcome


class TrueSkillRating(RatingBackend):
    def __init__(self, outcome: OutcomeRule | str = OutcomeRule.relative, draw_margin: float = 0.05,
                 p_thresh: float = 0.55, mu: float = 25.0, sigma: float = 25.0 / 3.0,
                 beta: float = 25.0 / 6.0, tau: float = 25.0 / 300.0,
                 draw_probability: float = 0.10) -> None:
        super().__init__(outcome, draw_margin, p_thresh)
        # A private environment: never touch trueskill's global one.
        self.env = trueskill.TrueSkill(mu=mu, sigma=sigma, beta=beta, tau=tau,
                                       draw_probability=draw_probability, backend=None)
        self.ratings: dict[str, trueskill.Rating] = {}
        self.n_updates = 0

    def _add(self, name: str) -> None:
        self.ratings[name] = self.env.create_rating()

    def apply(self, o: PairOutcome) -> dict[str, Any]:
        ra, rb = self.ratings[o.a], self.ratings[o.b]
        if o.result == 0.0:
            new_b, new_a = trueskill.rate_1vs1(rb, ra, env=self.env)
        else:
            new_a, new_b = trueskill.rate_1vs1(ra, rb, drawn=o.drawn, env=self.env)
        self.ratings[o.a], self.ratings[o.b] = new_a, new_b
        self.n_updates += 1
        return {"update": self.n_updates, "task_id": o.task_id, "a": o.a, "b": o.b,
                "p_a": o.p_a, "p_b": o.p_b, "result": o.result,
                "mu_a": new_a.mu, "sigma_a": new_a.sigma, "mu_b": new_b.mu, "sigma_b": new_b.sigma}

    def table(self) -> list[RatingRow]:
        order = sorted(self.players, key=lambda n: (-self.ratings[n].mu, n))
        return [RatingRow(n, self.ratings[n].mu, self.ratings[n].sigma, i + 1)
                for i, n in enumerate(order)]

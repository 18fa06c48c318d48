"""TrueSkill, updated once per unique pair of players per task (SKATE §4.3).

Options beyond the paper's setting:

- ``tau`` and ``draw_probability`` are settings; ``draw_probability: auto`` uses the draw rate
  observed so far (0.10 until 20 outcomes are in), and the whole stream's rate when replaying.
- ``orderings: K`` (> 1) makes the final table the mean over K random orderings of the same
  outcomes (seeded by ``seed``): TrueSkill is online, so its result depends on the order in
  which games happened to be played; averaging removes most of that.
- ``average_last: N`` reports each player's μ and σ as their means over the states after each of
  the last N updates (the paper quotes the mean over the final 100 updates); the score is that
  mean μ, and ``mu_last``/``sigma_last`` keep the final values.

The table's interval is μ ± 2σ (with ``average_last``, the means); ranks follow the score.

Each update is computed by :func:`skate.ratings.trueskill_math.rate_1vs1`: the library's own
two-player schedule, operation for operation, so the numbers are the ``trueskill`` library's to
the last bit at a twentieth of its cost (the library stays the reference in the tests).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from skate.errors import Problem, require
from skate.ratings import trueskill_math as tsm
from skate.ratings.base import OrderPair, RatingBackend, RatingRow, adjacent_pairs, normal_above, rank_by_score, rating
from skate.ratings.config import OutcomeRuleConfig, positive
from skate.ratings.outcomes import PairOutcome

DEFAULT_DRAW = 0.10
MIN_OUTCOMES_FOR_AUTO = 20


class Skill(NamedTuple):
    """A player's TrueSkill rating, as ``trueskill.Rating`` reports it."""

    mu: float
    sigma: float


class _Env(NamedTuple):
    """The settings one update reads: β, τ, and the draw margin of the draw probability."""

    beta: float
    tau: float
    draw_probability: float
    margin: float


# The settings (conf/rating/trueskill.yaml extends them: /schema/rating/trueskill).
@dataclass
class TrueSkillConfig(OutcomeRuleConfig):
    _target_: str = "skate.ratings.trueskill_backend.TrueSkillRating"
    mu: float = 25.0
    sigma: float = 25.0 / 3.0
    beta: float = 25.0 / 6.0
    tau: float = 25.0 / 300.0  # dynamics: variance added before each update
    # A number in [0, 1), or "auto": the observed draw rate. 0.10 by measurement: auto ranked no
    # better on the ranking-cost benchmark (BENCHMARKS.md, bench_ranking_cost.py --draws).
    draw_probability: Any = 0.10
    orderings: int = 1  # > 1: final table = mean over this many random orderings of the outcomes
    average_last: int = 0  # > 0: mu, sigma (and score) = their means over the last N updates (the paper: 100)
    seed: int = 0  # for the orderings

    def check(self) -> list[Problem]:
        dp = self.draw_probability
        return [
            *super().check(),
            *positive(self, "sigma", "beta"),
            *require(
                dp == "auto" or (isinstance(dp, (int, float)) and 0.0 <= dp < 1.0),
                "draw_probability",
                dp,
                "give a number in [0, 1) or auto",
            ),
            *require(self.orderings >= 1, "orderings", self.orderings, "must be >= 1"),
            *require(self.average_last >= 0, "average_last", self.average_last, "must be >= 0"),
        ]


@rating.register("trueskill", TrueSkillConfig)
class TrueSkillRating(RatingBackend):
    quick_pairs = True

    settings: TrueSkillConfig

    def __init__(self, settings: TrueSkillConfig | None = None, /, **values: Any) -> None:
        super().__init__(settings, **values)
        s = self.settings
        draw_probability = s.draw_probability
        if isinstance(draw_probability, str) and draw_probability != "auto":
            raise ValueError(f"rating.draw_probability={draw_probability!r}: give a number in [0, 1) or 'auto'")
        self.auto_draw = draw_probability == "auto"
        self.params = {"mu": s.mu, "sigma": s.sigma, "beta": s.beta, "tau": s.tau}
        self.orderings, self.average_last, self.seed = int(s.orderings), int(s.average_last), s.seed
        self.env = self._env(DEFAULT_DRAW if self.auto_draw else float(draw_probability))
        self.ratings: dict[str, Skill] = {}
        self.n_updates = 0
        self.draws = 0
        # (μ, σ) of every player after each of the last ``average_last`` updates
        self.trace: list[dict[str, tuple[float, float]]] = []
        self._cached: tuple[tuple[int, int], list[RatingRow]] | None = None

    @property
    def keeps_history(self) -> bool:
        return self.orderings > 1  # the orderings' average replays it; one ordering never reads it

    def _env(self, draw_probability: float) -> _Env:
        p = min(max(draw_probability, 1e-4), 0.95)
        env = getattr(self, "env", None)
        if env is not None and env.draw_probability == p:
            return env
        return _Env(self.params["beta"], self.params["tau"], p, tsm.draw_margin(p, self.params["beta"]))

    def _add(self, name: str) -> None:
        self.ratings[name] = Skill(*tsm.reported(self.params["mu"], self.params["sigma"]))

    @staticmethod
    def _rate(env: _Env, ra: Skill, rb: Skill, result: float) -> tuple[Skill, Skill]:
        if result == 0.0:
            mb, sb, ma, sa = tsm.rate_1vs1(rb.mu, rb.sigma, ra.mu, ra.sigma, False, env.beta, env.tau, env.margin)
        else:
            ma, sa, mb, sb = tsm.rate_1vs1(
                ra.mu, ra.sigma, rb.mu, rb.sigma, result == 0.5, env.beta, env.tau, env.margin
            )
        return Skill(ma, sa), Skill(mb, sb)

    def _pair(self, a: str, b: str, result: float) -> tuple[Skill, Skill]:
        self.n_updates += 1
        self.draws += result == 0.5
        if self.auto_draw and self.n_updates > MIN_OUTCOMES_FOR_AUTO:
            self.env = self._env(self.draws / self.n_updates)
        ratings = self.ratings
        new_a, new_b = self._rate(self.env, ratings[a], ratings[b], result)
        ratings[a], ratings[b] = new_a, new_b
        if self.average_last:
            self.trace.append(dict(ratings))
            del self.trace[: -self.average_last]
        return new_a, new_b

    def apply(self, o: PairOutcome) -> dict[str, Any]:
        new_a, new_b = self._pair(o.a, o.b, o.result)
        return {
            "update": self.n_updates,
            "task_id": o.task_id,
            "a": o.a,
            "b": o.b,
            "p_a": o.p_a,
            "p_b": o.p_b,
            "result": o.result,
            "mu_a": new_a.mu,
            "sigma_a": new_a.sigma,
            "mu_b": new_b.mu,
            "sigma_b": new_b.sigma,
        }

    def state(self, players: Sequence[str]) -> dict[str, dict[str, float]]:
        return {"mu": {n: self.ratings[n].mu for n in players}, "sigma": {n: self.ratings[n].sigma for n in players}}

    def replay(self, outcomes: list[PairOutcome]) -> dict[str, Skill]:
        """Final ratings from these outcomes in this order (a fresh environment)."""
        rate = self.draws / self.n_updates if self.n_updates else DEFAULT_DRAW
        env = self._env(rate if self.auto_draw else self.env.draw_probability)
        start = Skill(*tsm.reported(self.params["mu"], self.params["sigma"]))
        ratings = {n: start for n in self.players}
        for o in outcomes:
            ratings[o.a], ratings[o.b] = self._rate(env, ratings[o.a], ratings[o.b], o.result)
        return ratings

    def order_confidence(self) -> list[OrderPair]:
        """P(skill_a > skill_b) = Φ((μ_a − μ_b) / √(σ_a² + σ_b²)) for each adjacent pair (the
        μ and σ of the table)."""
        rows = {r.player: r for r in self.table()}
        return adjacent_pairs(
            list(rows.values()),
            lambda a, b: normal_above(rows[a].mu, rows[b].mu, rows[a].sigma ** 2 + rows[b].sigma ** 2),
        )

    def _table(self) -> list[RatingRow]:
        # The engine asks for the table and for its order's confidence at every round's end: with
        # orderings > 1 a table replays the history K times, so it is made once per update.
        key = (self.n_updates, len(self.players))
        if self._cached is not None and self._cached[0] == key:
            return self._cached[1]
        rows = self._fresh_table()
        self._cached = (key, rows)
        return rows

    def _fresh_table(self) -> list[RatingRow]:
        mu = {n: r.mu for n, r in self.ratings.items()}
        sigma = {n: r.sigma for n, r in self.ratings.items()}
        extra: dict[str, dict[str, Any]] = {n: {} for n in self.players}
        if self.orderings > 1 and self.history:
            rng = np.random.default_rng(self.seed)
            runs = [
                self.replay([self.history[i] for i in rng.permutation(len(self.history))])
                for _ in range(self.orderings)
            ]
            for n in self.players:
                mus = np.array([r[n].mu for r in runs])
                mu[n], sigma[n] = float(mus.mean()), float(np.mean([r[n].sigma for r in runs]))
                extra[n]["mu_spread"] = float(mus.std())
        if self.average_last and self.trace:
            for n in self.players:
                states = [tuple(t[n]) for t in self.trace if n in t]
                if states:
                    extra[n].update(mu_last=mu[n], sigma_last=sigma[n])
                    mu[n], sigma[n] = float(np.mean([m for m, _ in states])), float(np.mean([s for _, s in states]))
        score = dict(mu)
        ranks = rank_by_score([(n, score[n]) for n in self.players])
        return sorted(
            (
                RatingRow(
                    n,
                    score[n],
                    score[n] - 2 * sigma[n],
                    score[n] + 2 * sigma[n],
                    ranks[n],
                    {"mu": mu[n], "sigma": sigma[n], "games": self.games.get(n, 0), **extra[n]},
                )
                for n in self.players
            ),
            key=lambda r: r.rank or 10**9,
        )

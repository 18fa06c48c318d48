"""Decided: sample each player of a task until the pairwise outcomes it takes part in are settled."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from omegaconf import II

from skate.errors import Problem, require
from skate.estimators.algorithm1 import batches
from skate.estimators.base import Estimator, EstimatorConfig, SampleFn, TaskContext, binomial_std, estimator, wilson
from skate.ratings.config import OutcomeRule, OutcomeRuleConfig, one_of
from skate.ratings.outcomes import PairRule
from skate.runlog.records import Estimate


@dataclass
class DecidedConfig(EstimatorConfig):
    _target_: str = "skate.estimators.decided.Decided"
    n_step: int = 10
    max_samples: int = 40  # a near-tie that 40 samples cannot settle rarely moves a ranking
    sigma_star: float = 0.05  # also stop, as Algorithm 1 does, once the standard error is below this
    confidence: float = 0.8  # of the Wilson intervals that decide outcomes
    # The outcome rule to decide: the rating's own, by default.
    outcome: str = "${rating.outcome}"
    draw_margin: float = II("rating.draw_margin")  # "${rating.draw_margin}", typed as the setting
    p_thresh: float = II("rating.p_thresh")

    def check(self) -> list[Problem]:
        return [
            *super().check(),
            *batches(self),
            *require(0 < self.confidence < 1, "confidence", self.confidence, "must lie in (0, 1)"),
            *one_of(OutcomeRule, "outcome", self.outcome),
        ]


@estimator.register("decided", DecidedConfig)
class Decided(Estimator):
    """Sample each player until the outcomes it takes part in are decided (skate's estimator).

    The rating only uses p(correct) through pairwise outcomes: under the relative rule whether
    |p_a - p_b| is under the draw margin and who is ahead, under the absolute rule whether p
    clears ``p_thresh``. So all players of a task are estimated together, in batches of
    ``n_step``. After each batch every player gets a Wilson interval at ``confidence``; a player
    stops once every outcome it is part of is settled by the intervals (a sure win, loss or
    draw against each other player; or, absolute rule, its interval clear of the threshold), or
    once its own standard error is below ``sigma_star`` (Algorithm 1's rule, so it never needs
    more), or at ``max_samples``. Samples go where they can still change an outcome.
    """

    joint = True
    decides_outcomes = True

    settings: DecidedConfig

    def __init__(self, settings: DecidedConfig | None = None, /, **values: Any) -> None:
        from statistics import NormalDist

        super().__init__(settings, **values)
        self.z = NormalDist().inv_cdf(0.5 + self.settings.confidence / 2)
        self.rule = rule_of(self.settings)  # the rating's own rule

    def estimate(self, sample: SampleFn, rng: np.random.Generator) -> Estimate:
        return self.estimate_task([sample], [rng])[0]

    def estimate_task(
        self,
        samples: Sequence[SampleFn],
        rngs: Sequence[np.random.Generator],
        pmap: Callable = map,
        context: TaskContext | None = None,
    ) -> list[Estimate]:
        s, k = self.settings, len(samples)
        n, correct, unparsable, void = [0] * k, [0] * k, [0] * k, [0] * k
        active = set(range(k))
        while active:
            order = sorted(active)
            steps = {i: min(s.n_step, s.max_samples - n[i] - void[i]) for i in order}
            results = list(pmap(lambda i, steps=steps: samples[i](steps[i], rngs[i]), order))
            for i, (c, u, v) in zip(order, results, strict=True):
                n[i] += steps[i] - v
                correct[i], unparsable[i], void[i] = correct[i] + c, unparsable[i] + u, void[i] + v
            iv = [wilson(correct[i], n[i], self.z) for i in range(k)]
            for i, (_, _, v) in zip(order, results, strict=True):
                p = correct[i] / n[i] if n[i] else float("nan")
                whole_batch_void = v == steps[i]
                if (
                    n[i] + void[i] >= s.max_samples
                    or whole_batch_void
                    or (n[i] and binomial_std(p, n[i]) < s.sigma_star)
                    or (n[i] and self.rule.settled(iv[i], [iv[j] for j in range(k) if j != i]))
                ):
                    active.discard(i)
        out = []
        for i in range(k):
            p = correct[i] / n[i] if n[i] else float("nan")
            out.append(
                Estimate(
                    p,
                    n[i],
                    correct[i],
                    binomial_std(p, n[i]) if n[i] else float("inf"),
                    unparsable[i],
                    capped=n[i] + void[i] >= s.max_samples,
                    void=void[i],
                )
            )
        return out


def rule_of(settings: DecidedConfig) -> PairRule:
    """The outcome rule ``settings`` decide: the rating's, whose keys they follow
    (``${rating.outcome}``, ...: resolved when a game's settings are composed). An estimator built
    alone, whose keys still say so, decides the rule the rating's schema sets by default."""
    rating = OutcomeRuleConfig()

    def key(name: str) -> Any:
        value = getattr(settings, name)
        return getattr(rating, name) if isinstance(value, str) and value.startswith("${") else value

    return PairRule(outcome=OutcomeRule(key("outcome")), draw_margin=key("draw_margin"), p_thresh=key("p_thresh"))

"""LogProbs: p(correct) read from the model's own probabilities, one call per (player, task)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from skate.errors import Problem, raise_first, require
from skate.estimators.base import Estimator, EstimatorConfig, Read, SampleFn, binomial_std, estimator
from skate.runlog.records import Estimate


@dataclass
class LogProbsConfig(EstimatorConfig):
    """p(correct) read from the model's log-probabilities, one call per (player, task)
    (:class:`LogProbs`); multiple-choice games only."""

    _target_: str = "skate.estimators.logprobs.LogProbs"
    fallback: int = (
        4  # samples drawn where a read cannot be made (no log-probabilities, a reply not starting with a label)
    )
    weight: int = 4  # samples a read counts as, for ratings that take graded samples (irt)
    min_mass: float = 0.5  # the least probability the labels must hold at the reply's first token
    # Reads per (player, task), each of the options in another order drawn from the task (the
    # first the one greedy shows), p(correct) their mean: a model's preference for one label then
    # weighs on the right option in several places (the Qwen models' reads put 0.13 on easy tasks).
    orders: int = 1

    def check(self) -> list[Problem]:
        return [
            *super().check(),
            *require(self.fallback >= 1, "fallback", self.fallback, "must be >= 1"),
            *require(self.weight >= 1, "weight", self.weight, "must be >= 1"),
            *require(0.0 < self.min_mass <= 1.0, "min_mass", self.min_mass, "must lie in (0, 1]"),
            *require(1 <= self.orders <= 24, "orders", self.orders, "give the reads per (player, task), from 1 to 24"),
        ]


@estimator.register("logprobs", LogProbsConfig)
class LogProbs(Estimator):
    """p(correct) read from the model's own probabilities: one call per (player, task), no
    sampling (for multiple-choice answers: COP, SCP).

    Each player is asked once for the label of the option it picks, with the provider's
    log-probabilities, on the task's query with the options in one order drawn from the task
    alone (the same for every player, as ``greedy`` asks); p(correct) is the probability of the
    right option at the player's answer temperature (:mod:`skate.llm.choices`). Where that cannot
    be done (a provider that gives no log-probabilities or too few alternatives, a reply that
    does not start with a label, a player that states no probabilities such as a simulated one,
    an answerer that reasons first) the player's p(correct) is sampled instead: ``fallback``
    samples of the game's own answer, on the same query (so a provider's prompt cache serves them
    all, and a sampled estimate and a read see the same options in the same order).

    For ratings that take the graded samples behind each p(correct) (``irt``), a read counts as
    ``weight`` samples with p·weight of them right (the same weight as ``fallback`` samples, so a
    read and a sampled estimate weigh alike). With ``orders`` k > 1 each read is the mean of k,
    each of the options in another order drawn from the task alone, so a model's preference
    for one label (a position bias) weighs on the right option in several places."""

    reads = True
    fixed_queries = True  # the fallback's samples show the task's one query, as the read does

    settings: LogProbsConfig

    def __init__(self, settings: LogProbsConfig | None = None, /, **values: Any) -> None:
        super().__init__(settings, **values)
        raise_first(self.settings.check(), "estimator")  # as built from Python (a game's were checked)

    def estimate(self, sample: SampleFn, rng: np.random.Generator) -> Estimate:
        s = self.settings
        read = getattr(sample, "read", None)
        got = read(rng, s.min_mass, s.orders) if read is not None else Read(why="no reader")
        if got.p is not None:
            p = got.p
            return Estimate(p, s.weight, p * s.weight, binomial_std(p, s.weight), read=True)
        if got.void:
            return Estimate(float("nan"), 0, 0, float("inf"), void=1, read=True)
        correct, unparsable, void = sample(s.fallback, rng)
        n = s.fallback - void
        p = correct / n if n else float("nan")
        return Estimate(p, n, correct, binomial_std(p, n) if n else float("inf"), unparsable, void=void, read=False)

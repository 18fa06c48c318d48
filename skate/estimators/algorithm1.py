"""Algorithm 1 of the SKATE paper: sample in batches until the standard error is small."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from skate.errors import Problem, require
from skate.estimators.base import Estimator, EstimatorConfig, SampleFn, binomial_std, estimator
from skate.runlog.records import Estimate


class Batches(Protocol):
    """The settings of a stopping rule in batches (Algorithm 1's, and the decided estimator's)."""

    sigma_star: float
    n_step: int
    max_samples: int


def batches(e: Batches) -> list[Problem]:
    """Algorithm 1's stopping rule: batches of n_step until the standard error is below sigma_star."""
    return [
        *require(0.0 < e.sigma_star < 0.5, "sigma_star", e.sigma_star, "must lie in (0, 0.5)"),
        *require(e.n_step >= 1, "n_step", e.n_step, "must be >= 1"),
        *require(e.max_samples >= e.n_step, "max_samples", e.max_samples, "must be >= estimator.n_step"),
    ]


@dataclass
class Algorithm1Config(EstimatorConfig):
    """The paper's adaptive estimator: sample until sqrt(p(1-p)/N) < sigma_star."""

    _target_: str = "skate.estimators.algorithm1.Algorithm1"
    sigma_star: float = 0.05
    n_step: int = 10  # samples per batch; the stopping rule is checked after each batch
    max_samples: int = 200  # hard cap per (task, player)

    def check(self) -> list[Problem]:
        return [*super().check(), *batches(self)]


@estimator.register("algorithm1", Algorithm1Config)
class Algorithm1(Estimator):
    """The SKATE paper's adaptive estimator.

    Draw batches of ``n_step`` samples; after each batch stop once the standard error
    sqrt(p(1-p)/N) is below ``sigma_star``, or when ``max_samples`` is reached.
    """

    settings: Algorithm1Config

    def estimate(self, sample: SampleFn, rng: np.random.Generator) -> Estimate:
        s = self.settings
        # n counts samples that got an answer; void samples (failed model calls) are drawn again
        # but still count against max_samples, so a failing model cannot make this loop forever.
        n = correct = unparsable = void = 0
        while True:
            step = min(s.n_step, s.max_samples - n - void)
            c, u, v = sample(step, rng)
            n, correct, unparsable, void = n + step - v, correct + c, unparsable + u, void + v
            p = correct / n if n else float("nan")
            std = binomial_std(p, n) if n else float("inf")
            if n and std < s.sigma_star:
                return Estimate(p, n, correct, std, unparsable, capped=False, void=void)
            if n + void >= s.max_samples:
                return Estimate(p, n, correct, std, unparsable, capped=bool(n), void=void)
            if v == step:  # a whole batch failed: the model is down now, more draws only cost
                return Estimate(p, n, correct, std, unparsable, capped=False, void=void)

"""Fixed N: exactly ``n`` samples per (task, player)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from skate.errors import Problem, require
from skate.estimators.base import Estimator, EstimatorConfig, SampleFn, binomial_std, estimator
from skate.runlog.records import Estimate


@dataclass
class FixedNConfig(EstimatorConfig):
    _target_: str = "skate.estimators.fixed_n.FixedN"
    n: int = 20

    def check(self) -> list[Problem]:
        return [*super().check(), *require(self.n >= 1, "n", self.n, "must be >= 1")]


@estimator.register("fixed_n", FixedNConfig)
class FixedN(Estimator):
    """Exactly ``n`` samples per (task, player)."""

    settings: FixedNConfig

    def estimate(self, sample: SampleFn, rng: np.random.Generator) -> Estimate:
        correct, unparsable, void = sample(self.settings.n, rng)
        n = self.settings.n - void
        p = correct / n if n else float("nan")
        return Estimate(p, n, correct, binomial_std(p, n) if n else float("inf"), unparsable, void=void)

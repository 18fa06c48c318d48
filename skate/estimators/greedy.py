"""Greedy: one answer per (task, player) at temperature 0, as ArxivRoll scores its benchmarks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from skate.errors import Problem, require
from skate.estimators.base import Estimator, EstimatorConfig, SampleFn, estimator
from skate.runlog.records import Decoding, Estimate


@dataclass
class GreedyConfig(EstimatorConfig):
    _target_: str = "skate.estimators.greedy.Greedy"
    llm_temperature: float = 0.0  # set on every language-model player (greedy decoding)
    max_tokens: Optional[int] = None  # when set, every language-model player's reply limit (ArxivRoll: 50)

    def check(self) -> list[Problem]:
        t, m = self.llm_temperature, self.max_tokens
        return [
            *super().check(),
            *require(0.0 <= t <= 2.0, "llm_temperature", t, "must lie in [0, 2]"),
            *require(m is None or m >= 1, "max_tokens", m, "must be >= 1 or null"),
        ]


@estimator.register("greedy", GreedyConfig)
class Greedy(Estimator):
    """One answer per (task, player), as ArxivRoll scores its benchmarks: every player sees the
    same query (for multiple choice, the options in one order drawn from the task alone, not
    reshuffled per sample), language models answer at temperature 0 (``llm_temperature``: its
    :attr:`decoding`, given to every model player when built) within ``max_tokens`` when given, and p(correct) is 1 or
    0. A void answer (the call failed) is void, never wrong. Averaged over tasks it is accuracy."""

    fixed_queries = True
    greedy_decoding = True

    settings: GreedyConfig

    def __init__(self, settings: GreedyConfig | None = None, /, **values: Any) -> None:
        super().__init__(settings, **values)
        self.decoding = Decoding(self.settings.llm_temperature, self.settings.max_tokens)

    def estimate(self, sample: SampleFn, rng: np.random.Generator) -> Estimate:
        correct, unparsable, void = sample(1, rng)
        n = 1 - void
        p = float(correct) if n else float("nan")
        return Estimate(p, n, correct, 0.0 if n else float("inf"), unparsable, void=void)

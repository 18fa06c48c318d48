"""p(correct) estimators.

Each answer sample shows the real answer plus ``n_options - 1`` distractors drawn at random
from the setter's pool, in random order; the player picks one option. An estimator decides how
many samples to draw and returns an :class:`~skate.records.Estimate` that records the count.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence

import numpy as np

from skate.records import VOID, Estimate, Task

# answer_batch(prompt, option_sets, rng) -> chosen index per option set
# (None = the reply named no option, a wrong answer; VOID = the model call failed, not counted)
AnswerFn = Callable[[str, list[list[str]], np.random.Generator], Sequence[int | None]]


def draw_option_sets(task: Task, n: int, n_options: int,
                     rng: np.random.Generator) -> tuple[list[list[str]], list[int]]:
    """Draw ``n`` shuffled option sets; return them and the index of the answer in each."""
    k = n_options - 1
    pool = task.distractors
    sets: list[list[str]] = []
    where: list[int] = []
    for _ in range(n):
        picked = [pool[i] for i in rng.choice(len(pool), size=k, replace=False)]
        options = [task.answer, *picked]
        order = rng.permutation(len(options))
        sets.append([options[i] for i in order])
        where.append(int(np.flatnonzero(order == 0)[0]))
    return sets, where


class Estimator(ABC):
    @abstractmethod
    def estimate(self, answer_batch: AnswerFn, task: Task, n_options: int,
                 rng: np.random.Generator) -> Estimate:
        """Estimate one player's p(correct) on ``task``."""

    @staticmethod
    def _sample(answer_batch: AnswerFn, task: Task, n: int, n_options: int,
                rng: np.random.Generator) -> tuple[int, int, int]:
        """Draw ``n`` samples; return (correct, unparsable, void)."""
        sets, where = draw_option_sets(task, n, n_options, rng)
        picks = list(answer_batch(task.prompt, sets, rng))
        if len(picks) != n:
            raise RuntimeError(f"player returned {len(picks)} answers for {n} option sets")
        correct = sum(1 for pick, w in zip(picks, where, strict=True) if pick == w)
        unparsable = sum(1 for pick in picks if pick is None)
        void = sum(1 for pick in picks if pick == VOID)
        return correct, unparsable, void


def binomial_std(p: float, n: int) -> float:
    return math.sqrt(p * (1.0 - p) / n) if n else float("inf")


class Algorithm1(Estimator):
    """The SKATE paper's adaptive estimator.

    Draw batches of ``n_step`` samples; after each batch stop once the standard error
    sqrt(p(1-p)/N) is below ``sigma_star``, or when ``max_samples`` is reached.
    """

    def __init__(self, sigma_star: float = 0.05, n_step: int = 10, max_samples: int = 200) -> None:
        self.sigma_star = sigma_star
        self.n_step = n_step
        self.max_samples = max_samples

    def estimate(self, answer_batch: AnswerFn, task: Task, n_options: int,
                 rng: np.random.Generator) -> Estimate:
        # n counts samples that got an answer; void samples (failed model calls) are drawn again
        # but still count against max_samples, so a failing model cannot make this loop forever.
        n = correct = unparsable = void = 0
        while True:
            step = min(self.n_step, self.max_samples - n - void)
            c, u, v = self._sample(answer_batch, task, step, n_options, rng)
            n, correct, unparsable, void = n + step - v, correct + c, unparsable + u, void + v
            p = correct / n if n else float("nan")
            std = binomial_std(p, n) if n else float("inf")
            if n and std < self.sigma_star:
                return Estimate(p, n, correct, std, unparsable, capped=False, void=void)
            if n + void >= self.max_samples:
                return Estimate(p, n, correct, std, unparsable, capped=bool(n), void=void)
            if v == step:  # a whole batch failed: the model is down now, more draws only cost
                return Estimate(p, n, correct, std, unparsable, capped=False, void=void)


class FixedN(Estimator):
    """Exactly ``n`` samples per (task, player)."""

    def __init__(self, n: int = 20) -> None:
        self.n = n

    def estimate(self, answer_batch: AnswerFn, task: Task, n_options: int,
                 rng: np.random.Generator) -> Estimate:
        correct, unparsable, void = self._sample(answer_batch, task, self.n, n_options, rng)
        n = self.n - void
        p = correct / n if n else float("nan")
        return Estimate(p, n, correct, binomial_std(p, n) if n else float("inf"), unparsable, void=void)

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

from skate.records import Estimate, Task

# answer_batch(prompt, option_sets, rng) -> chosen index per option set (None = unparsable)
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
                rng: np.random.Generator) -> tuple[int, int]:
        """Draw ``n`` samples; return (correct, unparsable)."""
        sets, where = draw_option_sets(task, n, n_options, rng)
        picks = list(answer_batch(task.prompt, sets, rng))
        if len(picks) != n:
            raise RuntimeError(f"player returned {len(picks)} answers for {n} option sets")
        correct = sum(1 for pick, w in zip(picks, where) if pick == w)
        unparsable = sum(1 for pick in picks if pick is None)
        return correct, unparsable


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
        n = correct = unparsable = 0
        while True:
            step = min(self.n_step, self.max_samples - n)
            c, u = self._sample(answer_batch, task, step, n_options, rng)
            n, correct, unparsable = n + step, correct + c, unparsable + u
            p = correct / n
            std = binomial_std(p, n)
            if std < self.sigma_star:
                return Estimate(p, n, correct, std, unparsable, capped=False)
            if n >= self.max_samples:
                return Estimate(p, n, correct, std, unparsable, capped=True)


class FixedN(Estimator):
    """Exactly ``n`` samples per (task, player)."""

    def __init__(self, n: int = 20) -> None:
        self.n = n

    def estimate(self, answer_batch: AnswerFn, task: Task, n_options: int,
                 rng: np.random.Generator) -> Estimate:
        correct, unparsable = self._sample(answer_batch, task, self.n, n_options, rng)
        p = correct / self.n
        return Estimate(p, self.n, correct, binomial_std(p, self.n), unparsable)

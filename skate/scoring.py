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
    joint = False  # True: estimates all players of a task together (estimate_task)

    def estimate_task(self, answer_fns: Sequence[AnswerFn], task: Task, n_options: int,
                      rngs: Sequence[np.random.Generator], pmap: Callable = map) -> list[Estimate]:
        """Every player's estimate on one task (independently, unless the estimator is joint)."""
        return list(pmap(lambda i: self.estimate(answer_fns[i], task, n_options, rngs[i]),
                         range(len(answer_fns))))

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


def wilson(correct: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion."""
    if n == 0:
        return 0.0, 1.0
    p = correct / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


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

    def __init__(self, n_step: int = 10, max_samples: int = 200, sigma_star: float = 0.05,
                 confidence: float = 0.95, outcome: str = "relative", draw_margin: float = 0.05,
                 p_thresh: float = 0.55) -> None:
        from statistics import NormalDist

        self.n_step, self.max_samples, self.sigma_star = n_step, max_samples, sigma_star
        self.z = NormalDist().inv_cdf(0.5 + confidence / 2)
        self.outcome, self.draw_margin, self.p_thresh = str(outcome), draw_margin, p_thresh

    def estimate(self, answer_batch: AnswerFn, task: Task, n_options: int,
                 rng: np.random.Generator) -> Estimate:
        return self.estimate_task([answer_batch], task, n_options, [rng])[0]

    def _settled(self, i: int, iv: list[tuple[float, float]]) -> bool:
        lo, hi = iv[i]
        if self.outcome == "absolute":
            return lo >= self.p_thresh or hi < self.p_thresh
        m = self.draw_margin
        for j, (lo_j, hi_j) in enumerate(iv):
            if j == i:
                continue
            win, loss = lo - hi_j >= m, lo_j - hi >= m
            draw = hi - lo_j < m and hi_j - lo < m
            if not (win or loss or draw):
                return False
        return True

    def estimate_task(self, answer_fns: Sequence[AnswerFn], task: Task, n_options: int,
                      rngs: Sequence[np.random.Generator], pmap: Callable = map) -> list[Estimate]:
        k = len(answer_fns)
        n, correct, unparsable, void = [0] * k, [0] * k, [0] * k, [0] * k
        active = set(range(k))
        while active:
            order = sorted(active)
            steps = {i: min(self.n_step, self.max_samples - n[i] - void[i]) for i in order}
            results = list(pmap(lambda i, steps=steps: self._sample(answer_fns[i], task, steps[i], n_options, rngs[i]),
                                order))
            for i, (c, u, v) in zip(order, results, strict=True):
                n[i] += steps[i] - v
                correct[i], unparsable[i], void[i] = correct[i] + c, unparsable[i] + u, void[i] + v
            iv = [wilson(correct[i], n[i], self.z) for i in range(k)]
            for i, (_, _, v) in zip(order, results, strict=True):
                p = correct[i] / n[i] if n[i] else float("nan")
                whole_batch_void = v == steps[i]
                if (n[i] + void[i] >= self.max_samples or whole_batch_void
                        or (n[i] and binomial_std(p, n[i]) < self.sigma_star)
                        or (n[i] and self._settled(i, iv))):
                    active.discard(i)
        out = []
        for i in range(k):
            p = correct[i] / n[i] if n[i] else float("nan")
            out.append(Estimate(p, n[i], correct[i], binomial_std(p, n[i]) if n[i] else float("inf"),
                                unparsable[i], capped=n[i] + void[i] >= self.max_samples, void=void[i]))
        return out

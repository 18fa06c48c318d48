"""p(correct) estimators.

An estimator sees a player's answers on one task only as graded Bernoulli samples: it asks a
:class:`Sampler` for ``n`` more and gets back how many were correct, unreadable (counted as
wrong) and void (the model call failed: not counted at all). The sampler makes each sample's
query through the game (for multiple choice, a fresh draw of options), collects the player's
replies and has the game grade them. So every estimator works for every game and answer format:
Algorithm 1's stopping rule applies to any Bernoulli outcome.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from skate.ratings.outcomes import PairRule
from skate.records import VOID, Estimate, Task

if TYPE_CHECKING:  # pragma: no cover
    from skate.games.base import Game

# sample(n, rng) -> (correct, unreadable, void) among n new samples
SampleFn = Callable[[int, np.random.Generator], tuple[int, int, int]]


class Sampler:
    """Draws graded samples of one player on one task through the game's :meth:`~skate.games.
    base.Game.play`: queries from the game, replies from the player (``answer(queries, rng)``),
    verdicts from the game. ``sandbox`` is for games whose samples execute code."""

    def __init__(self, game: Game, task: Task,
                 answer: Callable[[list[Any], np.random.Generator], Sequence[Any]],
                 sandbox: Any = None) -> None:
        self.game, self.task, self.answer, self.sandbox = game, task, answer, sandbox

    def __call__(self, n: int, rng: np.random.Generator) -> tuple[int, int, int]:
        verdicts = self.game.play(self.task, self.answer, n, rng, self.sandbox)
        if len(verdicts) != n:
            raise RuntimeError(f"the game graded {len(verdicts)} samples for {n} asked")
        correct = unreadable = void = 0
        for verdict in verdicts:
            if verdict is VOID:
                void += 1
            elif verdict is None:
                unreadable += 1
            elif verdict:
                correct += 1
        return correct, unreadable, void


class Estimator(ABC):
    joint = False  # True: estimates all players of a task together (estimate_task)

    def estimate_task(self, samples: Sequence[SampleFn], rngs: Sequence[np.random.Generator],
                      pmap: Callable = map) -> list[Estimate]:
        """Every player's estimate on one task (independently, unless the estimator is joint)."""
        return list(pmap(lambda i: self.estimate(samples[i], rngs[i]), range(len(samples))))

    @abstractmethod
    def estimate(self, sample: SampleFn, rng: np.random.Generator) -> Estimate:
        """Estimate one player's p(correct) from its samples."""


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

    def estimate(self, sample: SampleFn, rng: np.random.Generator) -> Estimate:
        # n counts samples that got an answer; void samples (failed model calls) are drawn again
        # but still count against max_samples, so a failing model cannot make this loop forever.
        n = correct = unparsable = void = 0
        while True:
            step = min(self.n_step, self.max_samples - n - void)
            c, u, v = sample(step, rng)
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

    def estimate(self, sample: SampleFn, rng: np.random.Generator) -> Estimate:
        correct, unparsable, void = sample(self.n, rng)
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
        self.rule = PairRule(outcome, draw_margin, p_thresh)  # the rating's own rule

    def estimate(self, sample: SampleFn, rng: np.random.Generator) -> Estimate:
        return self.estimate_task([sample], [rng])[0]

    def estimate_task(self, samples: Sequence[SampleFn], rngs: Sequence[np.random.Generator],
                      pmap: Callable = map) -> list[Estimate]:
        k = len(samples)
        n, correct, unparsable, void = [0] * k, [0] * k, [0] * k, [0] * k
        active = set(range(k))
        while active:
            order = sorted(active)
            steps = {i: min(self.n_step, self.max_samples - n[i] - void[i]) for i in order}
            results = list(pmap(lambda i, steps=steps: samples[i](steps[i], rngs[i]), order))
            for i, (c, u, v) in zip(order, results, strict=True):
                n[i] += steps[i] - v
                correct[i], unparsable[i], void[i] = correct[i] + c, unparsable[i] + u, void[i] + v
            iv = [wilson(correct[i], n[i], self.z) for i in range(k)]
            for i, (_, _, v) in zip(order, results, strict=True):
                p = correct[i] / n[i] if n[i] else float("nan")
                whole_batch_void = v == steps[i]
                if (n[i] + void[i] >= self.max_samples or whole_batch_void
                        or (n[i] and binomial_std(p, n[i]) < self.sigma_star)
                        or (n[i] and self.rule.settled(iv[i], [iv[j] for j in range(k) if j != i]))):
                    active.discard(i)
        out = []
        for i in range(k):
            p = correct[i] / n[i] if n[i] else float("nan")
            out.append(Estimate(p, n[i], correct[i], binomial_std(p, n[i]) if n[i] else float("inf"),
                                unparsable[i], capped=n[i] + void[i] >= self.max_samples, void=void[i]))
        return out

"""Adaptive: sample only where an answer can still change an uncertain comparison of the ranking so far."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from skate.errors import Problem, raise_first, require
from skate.estimators.base import Estimator, EstimatorConfig, SampleFn, TaskContext, binomial_std, estimator
from skate.runlog.records import Estimate, skipped_estimate

# estimator.confidence when it is null and the game does not stop once settled (no stop.settled).
UNSURE_BELOW = 0.95


@dataclass
class AdaptiveConfig(EstimatorConfig):
    """Samples only where an answer can still change an uncertain comparison in the ranking so
    far (:class:`Adaptive`); needs a rating that says how sure its order is."""

    _target_: str = "skate.estimators.adaptive.Adaptive"
    first: int = 2  # samples each asked player gives on a task
    step: int = 2  # then, where an unsure pair disagrees on the task, this many more at a time ...
    max_samples: int = 6  # ... up to this many per player (= first: no top-up)
    # An adjacent pair ordered with less than this probability is uncertain; null: stop.settled
    # when the game stops once settled (so it samples until then), else UNSURE_BELOW (0.95).
    confidence: Optional[float] = None
    setter_answers: bool = False  # the setter always answers its own task
    # Ask this many of them first (spread over the ranking); if they all agree on every sample
    # (all right, or all wrong), the task does not discriminate there and the rest are not asked.
    # 0: everyone at once.
    probe: int = 0
    # Samples a task gets in all, shared among the players asked (at least `first` each): a task
    # costs its setter's attempts however few answer it. 0: `first` each, however many are asked.
    per_task: int = 0

    def check(self) -> list[Problem]:
        c = self.confidence
        return [
            *super().check(),
            *require(self.first >= 1, "first", self.first, "must be >= 1"),
            *require(self.step >= 1, "step", self.step, "must be >= 1"),
            *require(self.max_samples >= self.first, "max_samples", self.max_samples, "must be >= estimator.first"),
            *require(c is None or 0.5 < c < 1, "confidence", c, "must lie in (0.5, 1), or null"),
        ]


@estimator.register("adaptive", AdaptiveConfig)
class Adaptive(Estimator):
    """Sample where an answer can still change the ranking (skate's cheapest estimator).

    It reads the ranking so far (:class:`TaskContext`, from the rating backend): each adjacent
    pair of players with the probability that their order is right. A pair below
    ``confidence`` is *uncertain*. On each task:

    1. Only the players of an uncertain pair answer (every player while there is no ranking yet,
       and any player the ranking does not place; the setter too with ``setter_answers``). A
       player whose place is already sure on both sides is not asked (its estimate is
       ``skipped``: no sample, no p(correct), no call).
    2. Each of them answers ``first`` samples.
    3. A task that does not discriminate stops there: for each uncertain pair whose answers so
       far are unanimous (both players right every time, or both wrong every time), the task
       says nothing about their order. Where the two disagree, both are topped up, ``step`` at a
       time, to ``max_samples``.

    It assumes the backend's confidences are honest (a backend whose intervals are too narrow
    stops asking players too soon), that tasks are what separates players (several tasks with a
    few samples each tell more than one task with many, since a player's luck on one task is
    shared by all its samples), and that answers to a task depend on the player, not on who else
    is asked. Without a ranking (every player uncertain) it is a small fixed-N estimator that
    skips non-discriminating tasks.
    """

    joint = True
    uses_order = True
    picks_answerers = True

    settings: AdaptiveConfig

    def __init__(self, settings: AdaptiveConfig | None = None, /, **values: Any) -> None:
        super().__init__(settings, **values)
        raise_first(self.settings.check(), "estimator")  # as built from Python (a game's were checked)
        c = self.settings.confidence
        # A game's confidence is set when composed (stop.settled's, else the default); one built
        # alone, with none, takes the default.
        self.confidence = UNSURE_BELOW if c is None else float(c)

    def estimate(self, sample: SampleFn, rng: np.random.Generator) -> Estimate:
        return self.estimate_task([sample], [rng])[0]

    def plan(self, context: TaskContext | None, k: int) -> tuple[set[int], list[tuple[int, int]]]:
        """Who answers (indices into the task's players) and which pairs may be topped up."""
        if context is None or not context.order:
            everyone = set(range(k))
            return everyone, [(i, j) for i in range(k) for j in range(i + 1, k)]
        idx = {name: i for i, name in enumerate(context.players)}
        ranked = {n for p in context.order for n in (p.above, p.below)}
        pairs = [
            (idx[p.above], idx[p.below])
            for p in context.order
            if p.confidence < self.confidence and p.above in idx and p.below in idx
        ]
        who = {i for pair in pairs for i in pair}
        who |= {i for name, i in idx.items() if name not in ranked}  # no place in the ranking yet
        if self.settings.setter_answers and context.setter in idx:
            who.add(idx[context.setter])
        return who, pairs

    def estimate_task(
        self,
        samples: Sequence[SampleFn],
        rngs: Sequence[np.random.Generator],
        pmap: Callable = map,
        context: TaskContext | None = None,
    ) -> list[Estimate]:
        s, k = self.settings, len(samples)
        who, pairs = self.plan(context, k)
        n, correct, unparsable, void = [0] * k, [0] * k, [0] * k, [0] * k
        dead: set[int] = set()  # every sample of a batch failed: the model is down now

        def draw(steps: dict[int, int]) -> None:
            order = sorted(steps)
            results = list(pmap(lambda i: samples[i](steps[i], rngs[i]), order))
            for i, (c, u, v) in zip(order, results, strict=True):
                n[i] += steps[i] - v
                correct[i], unparsable[i], void[i] = correct[i] + c, unparsable[i] + u, void[i] + v
                if v == steps[i]:
                    dead.add(i)

        asked = sorted(who)
        # A task costs its setter's attempts whoever answers it: with few players asked, each
        # gives more samples (per_task shared among them, at least `first` each).
        first = max(s.first, s.per_task // len(asked)) if s.per_task and asked else s.first
        if 0 < s.probe < len(asked):
            # A few players first, spread over the ranking; if they all agree (all right, or all
            # wrong, every sample) the task does not discriminate at their level: stop there.
            rank = {name: r for r, name in enumerate(_ranked(context))}
            asked.sort(key=lambda i: (rank.get(context.players[i], -1) if context else i, i))
            probe = [asked[round(x)] for x in np.linspace(0, len(asked) - 1, s.probe)]
            draw({i: first for i in probe})
            if all(correct[i] == n[i] for i in probe) or all(correct[i] == 0 for i in probe):
                who = set(probe)
            else:
                draw({i: first for i in asked if i not in probe})
        else:
            draw({i: first for i in asked})
        while True:
            more: dict[int, int] = {}
            for i, j in pairs:
                if i in dead or j in dead or not (n[i] and n[j]):
                    continue
                unanimous = {correct[i], correct[j]} == {0} or (correct[i] == n[i] and correct[j] == n[j])
                if unanimous:
                    continue
                for x in (i, j):
                    room = max(s.max_samples, first) - n[x] - void[x]
                    if room > 0:
                        more[x] = min(s.step, room)
            if not more:
                break
            draw(more)
        out = []
        for i in range(k):
            if i not in who:
                out.append(skipped_estimate())
                continue
            p = correct[i] / n[i] if n[i] else float("nan")
            out.append(
                Estimate(
                    p,
                    n[i],
                    correct[i],
                    binomial_std(p, n[i]) if n[i] else float("inf"),
                    unparsable[i],
                    capped=n[i] + void[i] >= max(s.max_samples, first),
                    void=void[i],
                )
            )
        return out


def _ranked(context: TaskContext | None) -> list[str]:
    """The players of the ranking so far, best first (from its adjacent pairs)."""
    if context is None or not context.order:
        return []
    out = [context.order[0].above]
    out += [p.below for p in context.order]
    return out

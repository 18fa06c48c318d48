"""The outcome rule: how the p(correct) of two players on one task becomes a win, loss or draw.

One :class:`PairRule` serves every rating backend (which consume one :class:`PairOutcome` per
unique pair of players per task, players in roster order, pairs (i, j) with i < j) and the
estimators that stop sampling once outcomes are decided (:meth:`PairRule.settled`, on
confidence intervals of p(correct)).

- ``relative``: |p_a − p_b| < ``draw_margin`` is a draw; otherwise the higher p wins.
- ``absolute``: a player passes at p ≥ ``p_thresh``; the same verdict is a draw, otherwise the
  player who passes wins.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from skate.config import OutcomeRule

Interval = tuple[float, float]


@dataclass(frozen=True)
class PairOutcome:
    task_id: str
    a: str
    b: str
    p_a: float
    p_b: float
    result: float  # 1.0 a wins, 0.0 b wins, 0.5 draw

    @property
    def drawn(self) -> bool:
        return self.result == 0.5


@dataclass(frozen=True)
class PairRule:
    """The outcome rule with its parameters."""

    outcome: OutcomeRule = OutcomeRule.relative
    draw_margin: float = 0.05  # relative: closer than this is a draw
    p_thresh: float = 0.55  # absolute: the pass mark

    def __post_init__(self) -> None:
        object.__setattr__(self, "outcome", OutcomeRule(self.outcome))

    def result(self, p_a: float, p_b: float) -> float:
        """1.0 if a beats b, 0.0 if b beats a, 0.5 for a draw."""
        if self.outcome is OutcomeRule.relative:
            if abs(p_a - p_b) < self.draw_margin:
                return 0.5
            return 1.0 if p_a > p_b else 0.0
        pass_a, pass_b = p_a >= self.p_thresh, p_b >= self.p_thresh
        if pass_a == pass_b:
            return 0.5
        return 1.0 if pass_a else 0.0

    def settled(self, own: Interval, others: Sequence[Interval]) -> bool:
        """Whether more samples of a player whose p(correct) lies in ``own`` can no longer change
        an outcome it takes part in, the others' p lying in ``others``.

        Absolute: its own verdict is sure (the interval is clear of the pass mark). Relative:
        against each other player a win, a loss or a draw is sure for every p in the intervals.
        """
        lo, hi = own
        if self.outcome is OutcomeRule.absolute:
            return lo >= self.p_thresh or hi < self.p_thresh
        m = self.draw_margin
        for lo_j, hi_j in others:
            win, loss = lo - hi_j >= m, lo_j - hi >= m
            draw = hi - lo_j < m and hi_j - lo < m
            if not (win or loss or draw):
                return False
        return True

    def task_outcomes(self, task_id: str, p_correct: Mapping[str, float],
                      order: Sequence[str]) -> list[PairOutcome]:
        """Outcomes for every unique pair among the players (in ``order``) who have a score."""
        present = [name for name in order if name in p_correct]
        return [PairOutcome(task_id, a, b, p_correct[a], p_correct[b], self.result(p_correct[a], p_correct[b]))
                for a, b in itertools.combinations(present, 2)]


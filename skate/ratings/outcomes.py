"""Turn the p(correct) of every player on one task into pairwise outcomes.

Every rating backend consumes the same stream: one :class:`PairOutcome` per unique pair of
players per task, in a fixed order (players in roster order, pairs (i, j) with i < j).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from skate.config import OutcomeRule


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


def pair_result(p_a: float, p_b: float, rule: OutcomeRule | str, draw_margin: float = 0.05,
                p_thresh: float = 0.55) -> float:
    """1.0 if a beats b, 0.0 if b beats a, 0.5 for a draw."""
    rule = OutcomeRule(rule)
    if rule is OutcomeRule.relative:
        if abs(p_a - p_b) < draw_margin:
            return 0.5
        return 1.0 if p_a > p_b else 0.0
    pass_a, pass_b = p_a >= p_thresh, p_b >= p_thresh
    if pass_a == pass_b:
        return 0.5
    return 1.0 if pass_a else 0.0


def task_outcomes(task_id: str, p_correct: Mapping[str, float], order: Sequence[str],
                  rule: OutcomeRule | str, draw_margin: float = 0.05,
                  p_thresh: float = 0.55) -> list[PairOutcome]:
    """Outcomes for every unique pair among the players (in ``order``) who have a score."""
    present = [name for name in order if name in p_correct]
    return [
        PairOutcome(task_id, a, b, p_correct[a], p_correct[b],
                    pair_result(p_correct[a], p_correct[b], rule, draw_margin, p_thresh))
        for a, b in itertools.combinations(present, 2)
    ]

"""The outcome rule: how the p(correct) of two players on one task becomes a win, loss or draw.

One :class:`PairRule` serves every rating backend (which consume one :class:`PairOutcome` per
unique pair of players per task, players in roster order, pairs (i, j) with i < j) and the
estimators that stop sampling once outcomes are decided (:meth:`PairRule.settled`, on
confidence intervals of p(correct)).

- ``relative``: |p_a − p_b| < ``draw_margin`` is a draw; otherwise the higher p wins.
- ``absolute``: a player passes at p ≥ ``p_thresh``; the same verdict is a draw, otherwise the
  player who passes wins.
- ``setter_vs_solver`` (ZeroSumEval's match scoring): a task is one game between its setter and
  each other answerer; the answerer wins if it solves the task (p ≥ ``p_thresh``), the setter
  wins otherwise; no draws. The setter's own p(correct) decides nothing (it is recorded as the
  setter's ``p`` when measured). A setter that made a real attempt but set no valid task in a
  round *forfeits*: it loses to every answerer of the round (:meth:`PairRule.forfeit_outcomes`;
  ZeroSumEval: the student wins when the teacher fails). With ``own_unsolved=tie`` a round whose
  setter's last task was well-formed but not solved by the setter itself (rejected as
  ``unsolved``) is a draw with every answerer instead (ZeroSumEval's PyJail: a jail its own
  defender cannot break scores 0-0; its MathQuiz scores a wrong teacher answer as the student's
  win, which is ``loss``). The other rules make no outcome of a forfeit.

Outcomes name their two players ``a``/``b`` in roster order, whatever the rule.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from skate.ratings.config import OutcomeRule, OutcomeRuleConfig, OwnUnsolved

Interval = tuple[float, float]


@dataclass(frozen=True)
class PairOutcome:
    task_id: str
    a: str
    b: str
    p_a: float | None  # None: not measured (a setter's own p under setter_vs_solver, a forfeit)
    p_b: float | None
    result: float  # 1.0 a wins, 0.0 b wins, 0.5 draw
    setter: str | None = None  # setter_vs_solver: which of a and b set the task (for role weights)

    @property
    def drawn(self) -> bool:
        return self.result == 0.5


@dataclass(frozen=True)
class PairRule:
    """The outcome rule with its parameters: a rating's settings (:meth:`of`), or given one by
    one, each left out taking its default in the settings' schema (:class:`OutcomeRuleConfig`)."""

    outcome: OutcomeRule = OutcomeRuleConfig.outcome
    draw_margin: float = OutcomeRuleConfig.draw_margin  # relative: closer than this is a draw
    p_thresh: float = OutcomeRuleConfig.p_thresh  # absolute and setter_vs_solver: the pass mark
    own_unsolved: OwnUnsolved = OutcomeRuleConfig.own_unsolved  # setter_vs_solver: a setter's own unsolved task

    def __post_init__(self) -> None:
        object.__setattr__(self, "outcome", OutcomeRule(self.outcome))
        object.__setattr__(self, "own_unsolved", OwnUnsolved(self.own_unsolved))

    @classmethod
    def of(cls, settings: object) -> PairRule:
        """The rule of a rating's settings: their outcome rule's keys (a backend with no rule of
        its own, the item-response model, sets only the pass mark: the others keep their defaults)."""
        return cls(**{f.name: getattr(settings, f.name) for f in dataclasses.fields(cls) if hasattr(settings, f.name)})

    @property
    def needs_setter(self) -> bool:
        return self.outcome is OutcomeRule.setter_vs_solver

    def result(self, p_a: float, p_b: float) -> float:
        """1.0 if a beats b, 0.0 if b beats a, 0.5 for a draw (the symmetric rules only:
        setter_vs_solver needs to know who set the task, see :meth:`task_outcomes`)."""
        if self.needs_setter:
            raise ValueError("the setter_vs_solver rule scores a setter against a solver, not two p(correct)")
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

        Absolute and setter_vs_solver: its own verdict is sure (the interval is clear of the pass
        mark). Relative: against each other player a win, a loss or a draw is sure for every p in
        the intervals.
        """
        lo, hi = own
        if self.outcome in (OutcomeRule.absolute, OutcomeRule.setter_vs_solver):
            return lo >= self.p_thresh or hi < self.p_thresh
        m = self.draw_margin
        for lo_j, hi_j in others:
            win, loss = lo - hi_j >= m, lo_j - hi >= m
            draw = hi - lo_j < m and hi_j - lo < m
            if not (win or loss or draw):
                return False
        return True

    def task_results(self, p_correct: Mapping[str, float], order: Sequence[str]) -> list[tuple[str, str, float]]:
        """The (a, b, result) of each pair of :meth:`task_outcomes` under the relative and
        absolute rules, without the outcome objects (a 200-player task has 19,900 pairs)."""
        present = [name for name in order if name in p_correct]
        out: list[tuple[str, str, float]] = []
        if self.outcome is OutcomeRule.relative:
            margin = self.draw_margin
            for i, a in enumerate(present):
                p_a = p_correct[a]
                for b in present[i + 1 :]:
                    d = p_a - p_correct[b]  # |p_a - p_b| < margin: a draw; else p_a > p_b: a wins
                    out.append((a, b, 0.5 if abs(d) < margin else 1.0 if d > 0 else 0.0))
        elif self.outcome is OutcomeRule.absolute:
            passed = [p_correct[n] >= self.p_thresh for n in present]
            for i, a in enumerate(present):
                pass_a = passed[i]
                for j in range(i + 1, len(present)):
                    out.append((a, present[j], 0.5 if pass_a == passed[j] else 1.0 if pass_a else 0.0))
        else:
            raise ValueError("the setter_vs_solver rule scores a setter against a solver: use task_outcomes")
        return out

    def task_outcomes(
        self, task_id: str, p_correct: Mapping[str, float], order: Sequence[str], setter: str | None = None
    ) -> list[PairOutcome]:
        """One task's outcomes, pairs in ``order``. Relative and absolute: every unique pair among
        the players who have a score. Setter_vs_solver: the setter (required) against each other
        player who has a score."""
        if not self.needs_setter:
            present = [name for name in order if name in p_correct]
            return [
                PairOutcome(task_id, a, b, p_correct[a], p_correct[b], self.result(p_correct[a], p_correct[b]))
                for a, b in itertools.combinations(present, 2)
            ]
        if setter is None:
            raise ValueError(f"task {task_id}: the setter_vs_solver rule needs the task's setter")
        solved = {n: 1.0 if p >= self.p_thresh else 0.0 for n, p in p_correct.items()}
        return _versus(task_id, setter, solved, p_correct, order)

    def forfeit_outcomes(
        self, task_id: str, setter: str, answerers: Sequence[str], order: Sequence[str], unsolved: bool = False
    ) -> list[PairOutcome]:
        """A setter that set no valid task loses to every answerer (setter_vs_solver only; the
        other rules give no outcome), or draws with each when its last task was one it could not
        solve itself (``unsolved``) and ``own_unsolved`` is ``tie``. Pairs in ``order``."""
        if not self.needs_setter:
            return []
        result = 0.5 if unsolved and self.own_unsolved is OwnUnsolved.tie else 1.0
        return _versus(task_id, setter, dict.fromkeys(answerers, result), {}, order)


def _versus(
    task_id: str, setter: str, solved: Mapping[str, float], p_correct: Mapping[str, float], order: Sequence[str]
) -> list[PairOutcome]:
    """The setter against each other player in ``solved`` (1.0: that player solved the task and
    wins; 0.0: the setter wins; 0.5: a draw), in ``order``; a/b in ``order`` too."""
    rank = {n: i for i, n in enumerate(order)}
    if setter not in rank:
        raise ValueError(f"task {task_id}: its setter {setter!r} is not a rated player")
    out = []
    for n in order:
        if n == setter or n not in solved:
            continue
        if rank[setter] < rank[n]:
            a, b, result = setter, n, 1.0 - solved[n]
        else:
            a, b, result = n, setter, solved[n]
        out.append(PairOutcome(task_id, a, b, p_correct.get(a), p_correct.get(b), result, setter))
    return out

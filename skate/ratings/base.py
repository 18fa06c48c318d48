"""The rating backend interface: consume each task's p(correct) per player (as pairwise outcomes,
or as the graded samples behind them), produce a ranked table and say how sure its order is."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from skate.ratings.config import RatingConfig
from skate.ratings.outcomes import PairOutcome, PairRule
from skate.registry import Component, Registry


@dataclass(frozen=True)
class RatingRow:
    """One line of the table every backend produces: a score, an interval, a rank.

    ``lo``/``hi`` bound the score (None when the backend has no uncertainty, e.g. Elo); ``score``
    and ``rank`` are None for a player with no games where the backend cannot place one.
    ``extra`` holds the backend's own numbers (TrueSkill's mu and sigma, games played, ...).
    """

    player: str
    score: float | None
    lo: float | None
    hi: float | None
    rank: int | None
    extra: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:  # row.mu, row.sigma, ... from extra
        extra = self.__dict__.get("extra", {})
        if name in extra:
            return extra[name]
        raise AttributeError(name)

    def as_dict(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "score": self.score,
            "lo": self.lo,
            "hi": self.hi,
            "rank": self.rank,
            **self.extra,
        }


@dataclass
class Applied:
    """What one task (or one forfeit) did to the ratings: how many pairwise updates it made,
    the running count after them, the players those updates moved (roster order), and one
    record per update when the backend was asked for them (:attr:`RatingBackend.record_pairs`)."""

    task_id: str
    updates: int = 0
    last: int = 0
    players: list[str] = field(default_factory=list)
    pairs: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class OrderPair:
    """Two players next to each other in the ranking, and the probability, under the backend's
    model, that ``above`` is truly the better of the two."""

    above: str
    below: str
    confidence: float

    def as_dict(self) -> dict[str, Any]:
        return {"above": self.above, "below": self.below, "confidence": round(self.confidence, 6)}


def adjacent_pairs(rows: Sequence[RatingRow], prob_above: Callable[[str, str], float]) -> list[OrderPair]:
    """Each adjacent pair of the players of ``rows`` that have a score, ordered by score (best
    first; ties by name), with ``prob_above(a, b)``: the probability that a is better than b."""
    scored = [(r.score, r.player) for r in rows if r.score is not None and not r.extra.get("no_data")]
    ranked = [player for _, player in sorted(scored, key=lambda t: (-t[0], t[1]))]
    return [OrderPair(a, b, float(prob_above(a, b))) for a, b in zip(ranked, ranked[1:], strict=False)]


def normal_above(mu_a: float, mu_b: float, var_diff: float) -> float:
    """P(a > b) when a − b is normal with mean mu_a − mu_b and variance ``var_diff``."""
    if var_diff <= 0:
        return 1.0 if mu_a > mu_b else (0.5 if mu_a == mu_b else 0.0)
    return 0.5 * math.erfc(-(mu_a - mu_b) / math.sqrt(2.0 * var_diff))


def rank_by_score(rows: list[tuple[str, float | None]]) -> dict[str, int | None]:
    """Rank 1, 2, ... by score, best first (ties broken by name); no score, no rank."""
    scored = sorted(((name, score) for name, score in rows if score is not None), key=lambda r: (-r[1], r[0]))
    out: dict[str, int | None] = {name: None for name, _ in rows}
    out.update({name: i + 1 for i, (name, _) in enumerate(scored)})
    return out


def rank_by_intervals(intervals: dict[str, tuple[float, float] | None]) -> dict[str, int | None]:
    """Rank = 1 + the number of players whose interval lies entirely above this one's."""
    out: dict[str, int | None] = {}
    for name, iv in intervals.items():
        if iv is None:
            out[name] = None
            continue
        out[name] = 1 + sum(1 for other, o in intervals.items() if other != name and o is not None and o[0] > iv[1])
    return out


class RatingBackend(Component[RatingConfig], ABC):
    """Holds one rating per player; ``update`` takes one task's p(correct) for every player,
    ``forfeit`` a setter that set no valid task in a round.

    Built from its settings (:class:`~skate.registry.Component`): an instance of its schema
    (``EloRating(EloConfig(k=32))``, what ``rating.build(section)`` passes) or the schema's keys
    (``EloRating(k=32)``); each backend narrows :attr:`settings` to its own schema.

    Pairwise backends (TrueSkill, Bradley–Terry, Elo) turn each task into outcomes between
    pairs of players by the outcome rule; a backend that models the answers themselves
    (``uses_counts``: the item-response model) reads ``counts``, the graded samples behind each
    p(correct), and overrides :meth:`update`.
    """

    uses_counts = False  # True: the backend rates from (correct, samples) per player, not outcomes
    # True: the backend updates from a bare (a, b, result) (:meth:`_pair`), so a task's outcomes
    # can be applied in one loop without building an outcome object for each pair.
    quick_pairs = False
    says_order = True  # False: order_confidence is None (no uncertainty, e.g. Elo)

    def __init__(self, settings: RatingConfig | None = None, /, *, record_pairs: bool = False, **values: Any) -> None:
        """``record_pairs`` (an option of the backend's, no setting): update and forfeit return one
        record per pairwise update (:attr:`Applied.pairs`), for a log that keeps them
        (``events.rating_updates=pair``); building them costs more than a TrueSkill update.
        (A backend's own ``__init__`` passes it on with the settings' keys, in ``values``.)"""
        super().__init__(settings, **values)
        self.rule = PairRule.of(self.settings)
        self.record_pairs = record_pairs
        self.players: list[str] = []
        self.games: dict[str, int] = {}
        # Every outcome applied, in order, when the backend needs it (see keeps_history): it
        # grows with tasks × players², so a backend that never reads it does not keep it.
        self.history: list[PairOutcome] = []
        self.applied = 0  # pairwise updates applied so far

    @property
    def keeps_history(self) -> bool:
        """Whether the backend reads :attr:`history` (Bradley–Terry refits on it; TrueSkill
        only with ``orderings`` > 1); the base class keeps it."""
        return True

    def add_players(self, names: Sequence[str]) -> None:
        for name in names:
            if name not in self.players:
                self.players.append(name)
                self.games[name] = 0
                self._add(name)

    def outcomes(self, task_id: str, p_correct: Mapping[str, float], setter: str | None = None) -> list[PairOutcome]:
        return self.rule.task_outcomes(task_id, p_correct, self.players, setter=setter)

    def update(
        self,
        task_id: str,
        p_correct: Mapping[str, float],
        involving: set[str] | None = None,
        setter: str | None = None,
        counts: Mapping[str, tuple[float, float]] | None = None,
    ) -> Applied:
        """Apply every pairwise outcome of one task (only pairs with a player in ``involving``,
        when given); say what changed. ``setter`` (who set the task) is needed by the
        setter_vs_solver rule and ignored by the others; ``counts`` (player -> (correct,
        samples)) by backends that rate the answers themselves."""
        if (
            involving is None
            and self.quick_pairs
            and not self.record_pairs
            and not self.keeps_history
            and not self.rule.needs_setter
        ):
            return self._apply_results(task_id, self.rule.task_results(p_correct, self.players))
        return self._apply_all(task_id, self.outcomes(task_id, p_correct, setter), involving)

    def order_confidence(self) -> list[OrderPair] | None:
        """Each adjacent pair of the current ranking with the probability that its order is
        right, or None for a backend without uncertainty (Elo). Players with no data are left
        out."""
        return None

    def state(self, players: Sequence[str]) -> dict[str, dict[str, float]]:
        """The numbers of these players that move with every update, by name, for the log's
        per-task record (TrueSkill: ``{"mu": {player: μ}, "sigma": {...}}``; Elo: ``{"elo": ...}``);
        empty for a backend whose ratings wait for the table (a fit)."""
        return {}

    def forfeit(self, task_id: str, setter: str, answerers: Sequence[str], unsolved: bool = False) -> Applied:
        """A setter that set no valid task this round loses to each of ``answerers`` under the
        setter_vs_solver rule (no outcome under the others), or draws with each when its last
        task was one it could not solve itself and the rule's ``own_unsolved`` is ``tie``; say
        what changed."""
        return self._apply_all(
            task_id, self.rule.forfeit_outcomes(task_id, setter, answerers, self.players, unsolved), None
        )

    def _apply_all(self, task_id: str, outcomes: list[PairOutcome], involving: set[str] | None) -> Applied:
        done = Applied(task_id)
        moved: set[str] = set()
        keep, record = self.keeps_history, self.record_pairs
        step = self.apply if record else self._step
        games = self.games
        for o in outcomes:
            if involving is not None and o.a not in involving and o.b not in involving:
                continue
            games[o.a] += 1
            games[o.b] += 1
            moved.add(o.a)
            moved.add(o.b)
            if keep:
                self.history.append(o)
            rec = step(o)
            if record:
                done.pairs.append(rec)
            done.updates += 1
        self.applied += done.updates
        done.last = self.applied
        done.players = [n for n in self.players if n in moved]
        return done

    def _apply_results(self, task_id: str, results: list[tuple[str, str, float]]) -> Applied:
        """Apply one task's outcomes given as (a, b, result) through :meth:`_pair`: what
        :meth:`_apply_all` does when no record, history or player filter is asked for, in one
        loop (a 200-player task has 19,900 pairs)."""
        pair, games = self._pair, self.games
        moved: set[str] = set()
        for a, b, result in results:
            pair(a, b, result)
            games[a] += 1
            games[b] += 1
            moved.add(a)
            moved.add(b)
        self.applied += len(results)
        return Applied(task_id, len(results), self.applied, [p for p in self.players if p in moved])

    def _pair(self, a: str, b: str, result: float) -> Any:
        """Apply one outcome given bare (backends with :attr:`quick_pairs`)."""
        raise NotImplementedError

    def _step(self, outcome: PairOutcome) -> Any:
        """Apply one pairwise outcome without a record."""
        if self.quick_pairs:
            return self._pair(outcome.a, outcome.b, outcome.result)
        return self.apply(outcome)

    @abstractmethod
    def _add(self, name: str) -> None: ...

    @abstractmethod
    def apply(self, outcome: PairOutcome) -> dict[str, Any]:
        """Apply one pairwise outcome; return a record of the ratings after it."""

    @abstractmethod
    def _table(self) -> list[RatingRow]:
        """Players best first with rank 1, 2, ... (the backend's own ranking)."""

    def table(self) -> list[RatingRow]:
        """Players best first with rank 1, 2, ...; a player with no rated game yet (a model
        whose every call failed, a player who has not joined) is not ranked: it comes last,
        with rank None and ``no_data`` true, and its prior score is kept for reference (so are all
        of them when nobody has been rated)."""
        rows = self._table()
        played = [r for r in rows if self.games.get(r.player, 0) > 0]
        idle = [r for r in rows if self.games.get(r.player, 0) == 0]
        if not idle:
            return rows
        if not played:  # nobody rated: no order at all, not the prior's ties in roster order
            return [replace(r, rank=None, extra={**r.extra, "no_data": True}) for r in rows]
        ranks = [r.rank for r in rows]
        if ranks == list(range(1, len(rows) + 1)):  # positional ranks: close the gaps
            played = [replace(r, rank=i) for i, r in enumerate(played, 1)]
        return played + [replace(r, rank=None, extra={**r.extra, "no_data": True}) for r in idle]


# The rating group's registry: each backend registers itself (with its settings schema) in its own
# module; its capabilities are the class attributes above (says_order, uses_counts, ...).
rating: Registry[type[RatingBackend]] = Registry("rating", "skate.ratings")


def rating_name(r: Any) -> str:
    """How the user names a rating's settings (or their schema): ``rating=<name>`` (from the
    schema's registry entry)."""
    return rating.of(r).option


def rating_class(r: RatingConfig | type[RatingConfig]) -> type[RatingBackend]:
    """The backend class a rating's settings (or their schema) build (its capabilities are class
    attributes)."""
    return rating.of(r).component

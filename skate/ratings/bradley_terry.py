"""Bradley–Terry over all pairwise outcomes, fitted with ``choix``, with task-bootstrap intervals.

- **Model**: P(a beats b) = σ(θ_a − θ_b). Scores are θ in log-odds units, centred on 0 over
  the players that played; a difference of 1.0 means odds of e ≈ 2.7 to 1.
- **Ties**: a draw counts as half a win for each side, so two draws weigh as much as one win
  and one loss.
- **Regularisation**: ``alpha`` (choix's ILSR prior: every pair starts with ``alpha``
  pseudo-wins each way) keeps the score of a player that always wins or always loses finite.
- **Point estimates** come from all the data, fitted once at the end (the order of games does
  not matter).
- **Intervals** come from the bootstrap over *tasks*. A task yields one outcome for every pair
  of players, so its outcomes are correlated; resampling single outcomes would treat them as
  independent and give intervals that are too narrow. Each of ``bootstrap`` resamples draws
  the tasks with replacement (seeded by ``seed``). The interval is the central ``level``
  percentile range of the refitted scores.
- **Rank** = 1 + the number of players whose whole interval lies above this player's. Players
  with no games get no score, interval or rank.

- **Unbounded ratings.** A player with no wins (or no losses) has no maximum-likelihood rating:
  the likelihood keeps rising as its score goes to −∞ (+∞). Only the prior holds it, so its
  score says "below (above) everyone" and its number is the prior's doing. Its row says so
  (``unbounded``: "rating unbounded: 0 wins in 49 matches; the prior ... holds it at 755"), and
  every row counts the bootstrap resamples in which that player had no wins or no losses
  (``unbounded_resamples``), where its interval end rests on the prior too.

ZeroSumEval's variant (``conf/rating/zerosumeval.yaml``: ``outcome: setter_vs_solver``, ``scale:
zerosumeval``, ``point: fit``, ``draws: zerosumeval``, ``seed: 1``), following ZeroSumEval's code
(``zero_sum_eval/analysis/calculate_ratings.py`` in zero-sum-eval 0.3.0) and its paper (§3.5):

- ``scale``: ``logit`` (default) reports θ as above. ``zerosumeval`` reports
  1000 + 100 × the log-10 odds coefficient, i.e. 1000 + 100 θ / ln 10: the players that played
  average 1000, and 100 points more means odds 10 times better (P(a beats b) =
  1 / (1 + 10^((s_b − s_a) / 100))). The transform is linear, so intervals and ranks are those
  of θ, rescaled.
- ``point``: ``fit`` (default, and ZeroSumEval's reported rating) is the fit on all the data;
  ``median`` is the median of the bootstrap (ZeroSumEval's code uses it only to order its
  bootstrap columns; earlier skate took it for the reported point).
- ``draws``: ``tasks`` (default) resamples whole tasks; ``zerosumeval`` resamples single outcomes
  (each one of ZeroSumEval's matches; in ``schedule.mode=matches`` a task *is* one match) exactly
  as ZeroSumEval draws them: numpy's legacy global generator seeded once with ``seed`` (its code
  uses 1), each resample ``choice(n, n)`` with replacement, as pandas' ``sample(frac=1,
  replace=True)``; a player absent from a resample is left out of that refit. The interval is the
  same central 2.5–97.5 % range at ``level: 0.95``.
- ``role_weights`` (setter_vs_solver): what a win counts by the winner's role; a draw counts half
  a win each way, unweighted. ZeroSumEval's code counts a win 2 × the role's weight and a tie 1
  each way, the same ratio. Its published figures weight the setting role 2 (teacher, defender;
  its ``paper/utils.py``); ``calculate_ratings`` defaults to equal weights, as skate does.
- Where skate still differs: ZeroSumEval fits with an unpenalised logistic regression
  (scikit-learn), skate with ``alpha`` pseudo-wins (0.01 each way): the same fit where every
  player has a win and a loss, within rounding; where one has none, ZeroSumEval's optimiser stops
  at an arbitrary large number (and shifts everyone else to keep the mean at 1000) while skate's
  prior gives a finite one. Both are artefacts; skate flags them (above).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from skate.errors import Problem, require
from skate.ratings.base import OrderPair, RatingBackend, RatingRow, adjacent_pairs, rank_by_intervals, rating
from skate.ratings.config import BTDraws, BTPoint, BTScale, OutcomeRuleConfig, one_of
from skate.ratings.outcomes import PairOutcome


def fit_bt_many(
    comps: np.ndarray, alpha: float, initial: np.ndarray | None = None, max_iter: int = 500, tol: float = 1e-8
) -> np.ndarray:
    """θ for many win-count matrices at once (shape (B, p, p) -> (B, p)), each centred on 0.

    The same iteration as choix's ``ilsr_pairwise_dense`` (iterative Luce spectral ranking with
    every transition rate starting at ``alpha``, stopping when successive estimates differ by at
    most ``tol`` in L1 norm), run on all matrices together with numpy: the bootstrap refits
    hundreds of small matrices, and one Python call per matrix cost seconds per table.
    """
    comps = np.asarray(comps, dtype=float)
    b, p, _ = comps.shape
    # No initial estimate: all-ones weights, as choix starts.
    params = np.zeros((b, p)) if initial is None else np.tile(np.asarray(initial, dtype=float), (b, 1))
    out = np.empty((b, p))
    todo = np.arange(b)
    eye = np.eye(p, dtype=bool)
    for step in range(max_iter):
        w = np.exp(params - params.mean(axis=1, keepdims=True))
        w *= p / w.sum(axis=1, keepdims=True)
        chain = alpha + np.swapaxes(comps[todo], 1, 2) / (w[:, :, None] + w[:, None, :])
        chain[:, eye] -= chain.sum(axis=2)
        # Stationary distribution: π Q = 0 with π_last fixed, then scaled to sum to p.
        a = np.swapaxes(chain, 1, 2).copy()
        a[:, -1, :] = 0.0
        a[:, -1, -1] = 1.0
        rhs = np.zeros((len(todo), p))
        rhs[:, -1] = 1.0
        pi = np.linalg.solve(a, rhs[..., None])[..., 0]
        pi *= p / pi.sum(axis=1, keepdims=True)
        new = np.log(pi)
        new -= new.mean(axis=1, keepdims=True)
        if step:  # converged: this estimate is within tol of the previous one (as choix tests)
            done = np.abs(new - params).sum(axis=1) <= tol
            out[todo[done]] = new[done]
            todo, new = todo[~done], new[~done]
            if not len(todo):
                return out
        params = new
    raise RuntimeError(f"Bradley–Terry fit did not converge after {max_iter} iterations")


def fit_bt(comp: np.ndarray, alpha: float, initial: np.ndarray | None = None) -> np.ndarray:
    """θ from a win-count matrix (comp[i, j] = wins of i over j), centred on 0."""
    import choix

    theta = choix.ilsr_pairwise_dense(comp, alpha=alpha, initial_params=initial, max_iter=500)
    return theta - theta.mean()


def zerosumeval_draws(n: int, resamples: int, seed: int) -> np.ndarray:
    """The matches (row indices, shape (resamples, n)) of each bootstrap resample as ZeroSumEval
    draws them: numpy's legacy global generator seeded once with ``seed``, then each resample
    as pandas' ``DataFrame.sample(frac=1, replace=True)`` takes it, ``choice(n, n)`` with
    replacement."""
    rs = np.random.RandomState(seed)
    return (
        np.stack([rs.choice(n, size=n, replace=True) for _ in range(resamples)]) if n else np.zeros((resamples, 0), int)
    )


def zerosumeval_scale(theta: np.ndarray) -> np.ndarray:
    """θ (natural log-odds) on ZeroSumEval's scale: 1000 + 100 × the log-10 odds coefficient."""
    return 1000.0 + 100.0 * np.asarray(theta) / math.log(10.0)


# The settings (conf/rating/bradley_terry.yaml extends them: /schema/rating/bradley_terry).
@dataclass
class BradleyTerryConfig(OutcomeRuleConfig):
    _target_: str = "skate.ratings.bradley_terry.BradleyTerryRating"
    alpha: float = 0.01  # regularisation: pseudo-wins each way, keeps unbeaten players finite
    bootstrap: int = 1000  # resamples of whole tasks for the intervals
    level: float = 0.95  # interval coverage
    seed: int = 0
    scale: BTScale = BTScale.logit  # logit: θ; zerosumeval: 1000 + 100 θ / ln 10
    point: BTPoint = BTPoint.fit  # fit: the full-data fit; median: the bootstrap median
    draws: BTDraws = BTDraws.tasks  # tasks: whole tasks; zerosumeval: single outcomes, drawn as ZeroSumEval does
    # setter_vs_solver: what a win counts, by the winner's role (a draw is half a win each way,
    # unweighted, as in ZeroSumEval); ZeroSumEval's published figures weight setters 2 (teacher, defender)
    role_weights: dict[str, float] = field(default_factory=lambda: {"setter": 1.0, "solver": 1.0})

    def check(self) -> list[Problem]:
        weights = dict(self.role_weights)
        return [
            *super().check(),
            *require(self.bootstrap >= 1, "bootstrap", self.bootstrap, "must be >= 1"),
            *require(self.alpha > 0, "alpha", self.alpha, "must be > 0 (keeps unbeaten players finite)"),
            *require(0 < self.level < 1, "level", self.level, "must lie in (0, 1)"),
            *one_of(BTScale, "scale", self.scale),
            *one_of(BTDraws, "draws", self.draws),
            *require(
                set(weights) == {"setter", "solver"},
                "role_weights",
                weights,
                "give a weight for each role: {setter: w, solver: w}",
            ),
            *require(
                all(isinstance(w, (int, float)) and w > 0 for w in weights.values()),
                "role_weights",
                weights,
                "weights must be > 0",
            ),
            *one_of(BTPoint, "point", self.point),
        ]


@rating.register("bradley_terry", BradleyTerryConfig)
class BradleyTerryRating(RatingBackend):
    settings: BradleyTerryConfig

    def __init__(self, settings: BradleyTerryConfig | None = None, /, **values: Any) -> None:
        super().__init__(settings, **values)
        s = self.settings
        try:
            self.scale, self.point, self.draws = BTScale(s.scale), BTPoint(s.point), BTDraws(s.draws)
        except ValueError as exc:
            raise ValueError(
                f"rating.scale / rating.point / rating.draws: {exc} (scale: {', '.join(BTScale)}; "
                f"point: {', '.join(BTPoint)}; draws: {', '.join(BTDraws)})"
            ) from None
        weights = dict(s.role_weights)
        if set(weights) != {"setter", "solver"} or min(weights.values()) <= 0:
            raise ValueError(f"rating.role_weights={weights}: give {{setter: w, solver: w}}, each > 0")
        self.role_weights = {k: float(v) for k, v in weights.items()}
        alpha, bootstrap, level, seed = s.alpha, s.bootstrap, s.level, s.seed
        if alpha <= 0:
            raise ValueError(f"rating.alpha={alpha}: must be > 0 so that unbeaten players stay finite")
        if not 0 < level < 1:
            raise ValueError(f"rating.level={level}: must lie in (0, 1)")
        self.alpha, self.n_boot, self.level, self.seed = alpha, int(bootstrap), level, seed
        self.n_updates = 0
        self._cache: tuple[int, list[RatingRow]] | None = None
        self._boot: dict[str, np.ndarray] = {}  # each rated player's bootstrap scores (last table)

    def _add(self, name: str) -> None:
        pass

    def apply(self, o: PairOutcome) -> dict[str, Any]:
        self.n_updates += 1
        return {
            "update": self.n_updates,
            "task_id": o.task_id,
            "a": o.a,
            "b": o.b,
            "p_a": o.p_a,
            "p_b": o.p_b,
            "result": o.result,
        }

    def task_matrices(self, active: list[str]) -> np.ndarray:
        """One win-count matrix per task (per outcome with ``draws=zerosumeval``: each is one of
        ZeroSumEval's matches), flattened: shape (tasks, players²). A win counts the weight of the
        winner's role (``role_weights``, setter_vs_solver only); a draw half a win each way."""
        idx = {n: i for i, n in enumerate(active)}
        groups: dict[Any, int] = {}
        p = len(active)
        rows: list[np.ndarray] = []
        weighted = self.role_weights != {"setter": 1.0, "solver": 1.0}
        for k, o in enumerate(self.history):
            t = groups.setdefault(k if self.draws is BTDraws.zerosumeval else o.task_id, len(groups))
            if t == len(rows):
                rows.append(np.zeros(p * p))
            a, b = idx[o.a], idx[o.b]
            if weighted and o.setter is not None and o.result != 0.5:
                win, lose, winner = (a, b, o.a) if o.result == 1.0 else (b, a, o.b)
                rows[t][win * p + lose] += self.role_weights["setter" if winner == o.setter else "solver"]
                continue
            rows[t][a * p + b] += o.result
            rows[t][b * p + a] += 1.0 - o.result
        return np.array(rows) if rows else np.zeros((0, p * p))

    def win_loss(self, active: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Each player's outcomes won and lost outright (draws are neither)."""
        idx = {n: i for i, n in enumerate(active)}
        wins, losses = np.zeros(len(active), dtype=int), np.zeros(len(active), dtype=int)
        for o in self.history:
            if o.result != 0.5:
                win, lose = (o.a, o.b) if o.result == 1.0 else (o.b, o.a)
                wins[idx[win]] += 1
                losses[idx[lose]] += 1
        return wins, losses

    def _table(self) -> list[RatingRow]:
        if self._cache is not None and self._cache[0] == len(self.history):
            return self._cache[1]
        active = [n for n in self.players if self.games.get(n, 0) > 0]
        score: dict[str, float | None] = {n: None for n in self.players}
        interval: dict[str, tuple[float, float] | None] = {n: None for n in self.players}
        notes: dict[str, dict[str, Any]] = {}
        if len(active) >= 2:
            per_task = self.task_matrices(active)
            p = len(active)
            theta = fit_bt(per_task.sum(axis=0).reshape(p, p), self.alpha)
            boot, unbounded = self.bootstrap(per_task, p, theta)
            tail = (1 - self.level) / 2 * 100
            lo, hi = np.nanpercentile(boot, [tail, 100 - tail], axis=0)
            if self.point is BTPoint.median:
                theta = np.nanmedian(boot, axis=0)
            if self.scale is BTScale.zerosumeval:
                theta, lo, hi = (zerosumeval_scale(x) for x in (theta, lo, hi))
            self._boot = {n: boot[:, i] for i, n in enumerate(active)}
            for i, n in enumerate(active):
                score[n], interval[n] = float(theta[i]), (float(lo[i]), float(hi[i]))
            notes = self._unbounded_notes(active, score, unbounded)
        ranks = rank_by_intervals(interval)
        rows = []
        for n in self.players:
            low, high = interval[n] or (None, None)
            rows.append(
                RatingRow(n, score[n], low, high, ranks[n], {"games": self.games.get(n, 0), **notes.get(n, {})})
            )
        rows.sort(key=lambda r: (r.rank or 10**9, -(r.score or 0.0), r.player))
        self._cache = (len(self.history), rows)
        return rows

    def _unbounded_notes(
        self, active: list[str], score: Mapping[str, float | None], unbounded: np.ndarray
    ) -> dict[str, dict[str, Any]]:
        """What the table says of players whose maximum-likelihood rating does not exist: no
        wins (or no losses) in the data, so only the prior ``alpha`` holds the fit finite; and,
        for every player, in how many bootstrap resamples that happened."""
        wins, losses = self.win_loss(active)
        out: dict[str, dict[str, Any]] = {}
        for i, n in enumerate(active):
            note: dict[str, Any] = {}
            if wins[i] == 0 or losses[i] == 0:
                what = f"{wins[i]} wins" if wins[i] == 0 else f"{losses[i]} losses"
                note["unbounded"] = (
                    f"rating unbounded: {what} in {self.games.get(n, 0)} matches; the prior "
                    f"(rating.alpha={self.alpha:g} pseudo-wins each way) holds it at "
                    f"{score[n]:.{0 if self.scale is BTScale.zerosumeval else 2}f}"
                )
            if unbounded[i]:
                note["unbounded_resamples"], note["resamples"] = int(unbounded[i]), self.n_boot
            if note:
                out[n] = note
        return out

    def order_confidence(self) -> list[OrderPair]:
        """The share of task-bootstrap resamples in which the upper player of each adjacent pair
        scores above the lower one (a tie counts half)."""
        rows = self.table()
        boot = self._boot

        def above(a: str, b: str) -> float:
            both = ~(np.isnan(boot[a]) | np.isnan(boot[b]))  # resamples in which both played
            x, y = boot[a][both], boot[b][both]
            return float(np.mean(x > y) + 0.5 * np.mean(x == y)) if len(x) else 0.5

        return adjacent_pairs(rows, above)

    def bootstrap(self, per_task: np.ndarray, p: int, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Scores refitted on ``bootstrap`` resamples of whole tasks (``draws=tasks``) or of single
        outcomes (``draws=zerosumeval``): shape (resamples, players), NaN for a player absent
        from a resample under ``zerosumeval`` (ZeroSumEval leaves it out of that refit); and, per
        player, the number of resamples in which it had no wins or no losses."""
        n = len(per_task)
        if self.draws is BTDraws.zerosumeval:
            weights = np.stack(
                [np.bincount(row, minlength=n) for row in zerosumeval_draws(n, self.n_boot, self.seed)]
            ).astype(float)
        else:
            rng = np.random.default_rng(self.seed)
            picks = rng.integers(n, size=(self.n_boot, n))
            weights = np.zeros((self.n_boot, n))
            np.add.at(weights, (np.arange(self.n_boot)[:, None], picks), 1.0)
        mats = (weights @ per_task).reshape(-1, p, p)  # the win counts of each resample
        boot = fit_bt_many(mats, self.alpha, initial=theta)
        won, lost = mats.sum(axis=2), mats.sum(axis=1)
        played = (won + lost) > 0
        unbounded = (played & ((won == 0) | (lost == 0))).sum(axis=0)
        if self.draws is BTDraws.zerosumeval and not played.all():
            boot = np.where(played, boot, np.nan)
            boot -= np.nanmean(boot, axis=1, keepdims=True)  # centred over the players present
        return boot, unbounded

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

ZeroSumEval's variant (``conf/rating/zerosumeval.yaml``: ``scale: zerosumeval``, ``point:
median``, ``outcome: setter_vs_solver``):

- ``scale``: ``logit`` (default) reports θ as above. ``zerosumeval`` reports
  1000 + 100 × the log-10 odds coefficient, i.e. 1000 + 100 θ / ln 10: the players that played
  average 1000, and 100 points more means odds 10 times better (P(a beats b) =
  1 / (1 + 10^((s_b − s_a) / 100))). The transform is linear, so intervals and ranks are those
  of θ, rescaled.
- ``point``: ``fit`` (default) is the fit on all the data; ``median`` is the median of the
  task bootstrap (ZeroSumEval's point estimate), which always lies within the interval.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from skate.ratings.config import BTPoint, BTScale, OutcomeRule
from skate.ratings.base import OrderPair, RatingBackend, RatingRow, adjacent_pairs, rank_by_intervals
from skate.ratings.outcomes import PairOutcome


def fit_bt_many(comps: np.ndarray, alpha: float, initial: np.ndarray | None = None,
                max_iter: int = 500, tol: float = 1e-8) -> np.ndarray:
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


def zerosumeval_scale(theta: np.ndarray) -> np.ndarray:
    """θ (natural log-odds) on ZeroSumEval's scale: 1000 + 100 × the log-10 odds coefficient."""
    return 1000.0 + 100.0 * np.asarray(theta) / math.log(10.0)


class BradleyTerryRating(RatingBackend):
    def __init__(self, outcome: OutcomeRule | str = OutcomeRule.relative, draw_margin: float = 0.05,
                 p_thresh: float = 0.55, alpha: float = 0.01, bootstrap: int = 1000,
                 level: float = 0.95, seed: int = 0, scale: BTScale | str = BTScale.logit,
                 point: BTPoint | str = BTPoint.fit) -> None:
        super().__init__(outcome, draw_margin, p_thresh)
        try:
            self.scale, self.point = BTScale(scale), BTPoint(point)
        except ValueError as exc:
            raise ValueError(f"rating.scale / rating.point: {exc} (scale: {', '.join(BTScale)}; "
                             f"point: {', '.join(BTPoint)})") from None
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
        return {"update": self.n_updates, "task_id": o.task_id, "a": o.a, "b": o.b,
                "p_a": o.p_a, "p_b": o.p_b, "result": o.result}

    def task_matrices(self, active: list[str]) -> np.ndarray:
        """One win-count matrix per task, flattened: shape (tasks, players²)."""
        idx = {n: i for i, n in enumerate(active)}
        tasks: dict[str, int] = {}
        p = len(active)
        rows: list[np.ndarray] = []
        for o in self.history:
            t = tasks.setdefault(o.task_id, len(tasks))
            if t == len(rows):
                rows.append(np.zeros(p * p))
            a, b = idx[o.a], idx[o.b]
            rows[t][a * p + b] += o.result
            rows[t][b * p + a] += 1.0 - o.result
        return np.array(rows) if rows else np.zeros((0, p * p))

    def _table(self) -> list[RatingRow]:
        if self._cache is not None and self._cache[0] == len(self.history):
            return self._cache[1]
        active = [n for n in self.players if self.games.get(n, 0) > 0]
        score: dict[str, float | None] = {n: None for n in self.players}
        interval: dict[str, tuple[float, float] | None] = {n: None for n in self.players}
        if len(active) >= 2:
            per_task = self.task_matrices(active)
            p = len(active)
            theta = fit_bt(per_task.sum(axis=0).reshape(p, p), self.alpha)
            boot = self.bootstrap(per_task, p, theta)
            tail = (1 - self.level) / 2 * 100
            lo, hi = np.percentile(boot, [tail, 100 - tail], axis=0)
            if self.point is BTPoint.median:
                theta = np.median(boot, axis=0)
            if self.scale is BTScale.zerosumeval:
                theta, lo, hi = (zerosumeval_scale(x) for x in (theta, lo, hi))
            self._boot = {n: boot[:, i] for i, n in enumerate(active)}
            for i, n in enumerate(active):
                score[n], interval[n] = float(theta[i]), (float(lo[i]), float(hi[i]))
        ranks = rank_by_intervals(interval)
        rows = [RatingRow(n, score[n], interval[n][0] if interval[n] else None,
                          interval[n][1] if interval[n] else None, ranks[n], {"games": self.games.get(n, 0)})
                for n in self.players]
        rows.sort(key=lambda r: (r.rank or 10**9, -(r.score or 0.0), r.player))
        self._cache = (len(self.history), rows)
        return rows

    def order_confidence(self) -> list[OrderPair]:
        """The share of task-bootstrap resamples in which the upper player of each adjacent pair
        scores above the lower one (a tie counts half)."""
        rows = self.table()
        boot = self._boot

        def above(a: str, b: str) -> float:
            return float(np.mean(boot[a] > boot[b]) + 0.5 * np.mean(boot[a] == boot[b]))
        return adjacent_pairs(rows, above)

    def bootstrap(self, per_task: np.ndarray, p: int, theta: np.ndarray) -> np.ndarray:
        """Scores refitted on ``bootstrap`` resamples of whole tasks: shape (resamples, players)."""
        n_tasks = len(per_task)
        rng = np.random.default_rng(self.seed)
        picks = rng.integers(n_tasks, size=(self.n_boot, n_tasks))
        weights = np.zeros((self.n_boot, n_tasks))
        np.add.at(weights, (np.arange(self.n_boot)[:, None], picks), 1.0)
        mats = weights @ per_task  # (resamples, p²): the win counts of each resample
        return fit_bt_many(mats.reshape(-1, p, p), self.alpha, initial=theta)

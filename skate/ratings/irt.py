"""An item-response model of the answers: player ability and task difficulty fitted jointly from
the graded samples themselves, not from pairwise outcomes.

**Model** (Rasch, with task difficulty as a random effect). One answer sample of player *i* on
task *j* is correct with probability

    P(i, j) = c + (1 − c) · σ(θ_i − b_j)

where θ_i is the player's ability, b_j the task's difficulty and c the guess floor (``guess``:
0 by default; 1/4 for a game of four-option questions, if a blind guess should not count as
ability). The k_ij correct of n_ij samples are binomial given θ_i and b_j. Difficulties are drawn
from N(0, s²) over the game's tasks and integrated out (on a grid of ``grid`` points over ±6 s),
so the fit maximises the marginal likelihood of θ and s (scipy's BFGS with the analytic
gradient). A weak N(0, ``prior_sd``²) prior on each θ keeps a player who answered every sample
right (or every one wrong) finite. Every task counts, whoever answered it and however many
samples each player gave: a player the estimator did not ask is simply missing from that task.

**Scale.** θ is in logits against the game's typical task: a player of ability θ answers a task
of median difficulty (b = 0) correctly with probability c + (1 − c) σ(θ) (the table's
``p_typical``), and two players Δθ apart have odds e^Δθ to 1 of each other's success on any task
(above the floor). The table's score is θ; ``s`` (the spread of task difficulty) is in the same
units.

**Intervals.** ``interval: sandwich`` (default): the covariance H⁻¹ M H⁻¹ where M adds up each
task's score vector (the samples of one task are one cluster, as Bradley–Terry's bootstrap
resamples whole tasks): samples of one task that are correlated beyond the model (a player's
blind spot on that task, a task that is unlike the others) then do not count as independent
evidence. Each variance is the larger of the sandwich's and the curvature's (with few tasks the
sandwich alone can be too small). ``hessian``: the curvature H⁻¹ alone (every sample
independent). ``bootstrap``: ``bootstrap`` refits on whole tasks drawn with replacement. The
interval is θ ± z·sd at ``level`` (bootstrap: its percentiles); ranks follow the score.

**How sure the order is** (:meth:`IRTRating.order_confidence`): for each adjacent pair,
Φ(Δθ / sd(Δθ)) with the variance of the difference (covariances included); bootstrap: the share
of resamples in that order.

Why not an IRT library: ``girth`` (last release 2021), ``mirt`` and ``py-irt`` (pyro and torch)
fit one response per person and item with persons as the random effect; here the few players are
the fixed effects, the many tasks the random ones, and a cell holds k of n samples.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np

from skate.errors import Problem, require
from skate.ratings.base import (
    Applied,
    OrderPair,
    RatingBackend,
    RatingRow,
    adjacent_pairs,
    normal_above,
    rank_by_score,
    rating,
)
from skate.ratings.config import RatingConfig, pass_mark
from skate.ratings.outcomes import PairOutcome
from skate.runlog.records import PASS_MARK

INTERVALS = ("sandwich", "hessian", "bootstrap")
LOG_S_BOUNDS = (math.log(0.05), math.log(20.0))


# scipy is imported when a fit first needs it: the rating registry imports every backend's module
# whenever a config is composed, and scipy.optimize alone takes about half a second to import.
def expit(x: Any) -> Any:
    from scipy.special import expit as f

    return f(x)


def log_expit(x: Any) -> Any:
    from scipy.special import log_expit as f

    return f(x)


def logsumexp(x: Any, axis: int | None = None) -> Any:
    from scipy.special import logsumexp as f

    return f(x, axis=axis)


@dataclass
class Fit:
    """One fit: abilities of the players that answered, the spread of difficulty, covariances."""

    players: list[str]
    theta: np.ndarray
    s: float
    cov: np.ndarray  # of theta (players × players)
    boot: np.ndarray | None  # bootstrap thetas (resamples × players), interval=bootstrap
    loglik: float
    difficulty: dict[str, float]  # each task's posterior mean difficulty
    difficulty_sd: dict[str, float] = field(default_factory=dict)  # ... and its posterior sd


class Grid:
    """The quadrature over a standard normal: nodes x and log weights."""

    def __init__(self, points: int) -> None:
        self.x = np.linspace(-6.0, 6.0, points)
        logw = -0.5 * self.x**2
        self.logw = logw - logsumexp(logw)


def _terms(
    params: np.ndarray, K: np.ndarray, F: np.ndarray, grid: Grid, guess: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-task log marginal likelihood (J,), per-task scores (J, P+1) in (θ, log s), and the
    posterior weights of each task over the grid (J, G)."""
    p = K.shape[1]
    theta, s = params[:p], math.exp(min(max(float(params[p]), LOG_S_BOUNDS[0]), LOG_S_BOUNDS[1]))
    z = theta[None, :] - s * grid.x[:, None]  # (G, P)
    sig = expit(z)
    if guess > 0:
        logp = np.log(guess + (1.0 - guess) * sig)
        logq = math.log(1.0 - guess) + log_expit(-z)
        a = (1.0 - guess) * sig * (1.0 - sig) / (guess + (1.0 - guess) * sig)  # d log p / dz
    else:
        logp, logq, a = log_expit(z), log_expit(-z), 1.0 - sig
    ell = K @ logp.T + F @ logq.T + grid.logw[None, :]  # (J, G)
    lse = logsumexp(ell, axis=1)
    post = np.exp(ell - lse[:, None])
    g_theta = K * (post @ a) - F * (post @ sig)  # (J, P)
    m = K @ a.T - F @ sig.T  # (J, G): d ell / d shift of every player at each node
    g_logs = -(post * m * grid.x[None, :]).sum(axis=1) * s
    return lse, np.column_stack([g_theta, g_logs]), post


# The settings (conf/rating/irt.yaml extends them: /schema/rating/irt).
@dataclass
class IRTConfig(RatingConfig):
    """The item-response model (skate.ratings.irt): abilities and task difficulties fitted
    jointly from the graded samples, not from pairwise outcomes (so it has no outcome rule)."""

    _target_: str = "skate.ratings.irt.IRTRating"
    guess: float = 0.0  # the guess floor c in P = c + (1 - c) sigmoid(theta - b); e.g. 0.25 for 4 options
    prior_sd: float = 5.0  # a weak N(0, prior_sd^2) prior on each ability: all-right players stay finite
    interval: str = "sandwich"  # sandwich (clustered by task) | hessian | bootstrap (whole tasks)
    level: float = 0.95  # interval coverage
    bootstrap: int = 200  # refits, for interval=bootstrap
    grid: int = 121  # quadrature points over the task difficulties
    seed: int = 0
    p_thresh: float = PASS_MARK  # the pass mark games use (a setter solving its own task); not a rating rule

    def check(self) -> list[Problem]:
        return [
            *super().check(),
            *pass_mark(self.p_thresh),
            *require(self.bootstrap >= 1, "bootstrap", self.bootstrap, "must be >= 1"),
            *require(0 < self.level < 1, "level", self.level, "must lie in (0, 1)"),
            *require(0.0 <= self.guess < 1.0, "guess", self.guess, "the guess floor must lie in [0, 1)"),
            *require(self.prior_sd > 0, "prior_sd", self.prior_sd, "must be > 0"),
            *require(self.interval in INTERVALS, "interval", self.interval, f"must be one of {', '.join(INTERVALS)}"),
            *require(self.grid >= 21, "grid", self.grid, "must be >= 21 quadrature points"),
        ]


@rating.register("irt", IRTConfig)
class IRTRating(RatingBackend):
    uses_counts = True

    settings: IRTConfig

    def __init__(self, settings: IRTConfig | None = None, /, **values: Any) -> None:
        super().__init__(settings, **values)
        s = self.settings
        guess, prior_sd, interval, level = s.guess, s.prior_sd, s.interval, s.level
        if not 0.0 <= guess < 1.0:
            raise ValueError(f"rating.guess={guess}: must lie in [0, 1)")
        if prior_sd <= 0:
            raise ValueError(f"rating.prior_sd={prior_sd}: must be > 0")
        if interval not in INTERVALS:
            raise ValueError(f"rating.interval={interval!r}: give one of {', '.join(INTERVALS)}")
        if not 0 < level < 1:
            raise ValueError(f"rating.level={level}: must lie in (0, 1)")
        self.guess, self.prior_sd, self.interval, self.level = float(guess), float(prior_sd), interval, level
        self.n_boot, self.seed = int(s.bootstrap), s.seed
        self.grid = Grid(int(s.grid))
        self.z = NormalDist().inv_cdf(0.5 + level / 2)
        self.counts: dict[str, dict[str, tuple[float, float]]] = {}  # task -> player -> (correct, samples)
        self.n_tasks = 0
        self._fit: tuple[int, Fit | None] | None = None
        self._version = 0
        self._start: dict[str, float] = {}  # last abilities, to start the next fit from

    @property
    def keeps_history(self) -> bool:
        return False  # it keeps the counts instead

    def _add(self, name: str) -> None:
        pass

    def apply(self, outcome: PairOutcome) -> dict[str, Any]:  # pragma: no cover - never called
        raise TypeError("the item-response model rates answers, not pairwise outcomes")

    def update(
        self,
        task_id: str,
        p_correct: Mapping[str, float],
        involving: set[str] | None = None,
        setter: str | None = None,
        counts: Mapping[str, tuple[float, float]] | None = None,
    ) -> Applied:
        """Take one task's graded samples (``counts``: player -> (correct, samples)). A task seen
        again (players who joined later answering it) gains their counts. Logs no pairwise
        update: the round's table carries the ratings."""
        if counts is None:
            raise ValueError(
                f"task {task_id}: the item-response model needs the graded samples behind "
                "each p(correct) (counts), not only p(correct)"
            )
        cell = self.counts.get(task_id)
        if cell is None:
            cell = self.counts[task_id] = {}
            self.n_tasks += 1
        for player, (k, n) in counts.items():
            if n <= 0 or player not in self.games:
                continue
            if involving is not None and player not in involving and player in cell:
                continue
            if player not in cell:
                self.games[player] += 1
            cell[player] = (k, n)
        self._version += 1
        return Applied(task_id, last=self.applied)

    def forfeit(self, task_id: str, setter: str, answerers: Any, unsolved: bool = False) -> Applied:
        return Applied(task_id, last=self.applied)  # no answers, nothing to rate

    # ------------------------------------------------------------------ the fit
    def matrices(self, players: list[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
        """Task ids, correct counts K and wrong counts F (tasks × players) over ``players``."""
        idx = {n: i for i, n in enumerate(players)}
        ids = [t for t, cell in self.counts.items() if any(p in idx for p in cell)]
        K = np.zeros((len(ids), len(players)))
        N = np.zeros((len(ids), len(players)))
        for j, t in enumerate(ids):
            for player, (k, n) in self.counts[t].items():
                if player in idx:
                    K[j, idx[player]], N[j, idx[player]] = k, n
        return ids, K, N - K

    def _solve(self, K: np.ndarray, F: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, float]:
        p = K.shape[1]
        prec = 1.0 / self.prior_sd**2

        def objective(params: np.ndarray) -> tuple[float, np.ndarray]:
            lse, scores, _ = _terms(params, K, F, self.grid, self.guess)
            theta = params[:p]
            grad = -scores.sum(axis=0)
            grad[:p] += prec * theta
            return float(-lse.sum() + 0.5 * prec * theta @ theta), grad

        # BFGS (the spread's log is clipped to LOG_S_BOUNDS inside the likelihood): with a
        # handful of parameters it takes a third of L-BFGS-B's time here.
        from scipy.optimize import minimize

        res = minimize(objective, start, jac=True, method="BFGS", options={"maxiter": 1000, "gtol": 1e-6})
        x = res.x.copy()
        x[p] = min(max(float(x[p]), LOG_S_BOUNDS[0]), LOG_S_BOUNDS[1])
        return x, float(-res.fun)

    def fit(self) -> Fit | None:
        """The model fitted on every task so far (None with fewer than two players answering)."""
        if self._fit is not None and self._fit[0] == self._version:
            return self._fit[1]
        players = [n for n in self.players if self.games.get(n, 0) > 0]
        result = None
        if len(players) >= 2:
            result = self._fit_players(players)
            self._start = {n: float(t) for n, t in zip(players, result.theta, strict=True)}
            self._start["log s"] = math.log(result.s)
        self._fit = (self._version, result)
        return result

    def _fit_players(self, players: list[str]) -> Fit:
        ids, K, F = self.matrices(players)
        p = len(players)
        start = np.array([self._start.get(n, 0.0) for n in players] + [self._start.get("log s", 0.0)])
        params, loglik = self._solve(K, F, start)
        lse, scores, post = _terms(params, K, F, self.grid, self.guess)
        s = math.exp(params[p])
        mean = post @ (s * self.grid.x)
        sd = np.sqrt(np.maximum(post @ (s * self.grid.x) ** 2 - mean**2, 0.0))
        difficulty = dict(zip(ids, mean.tolist(), strict=True))
        hess = self._hessian(params, K, F)
        hess_inv = np.linalg.pinv(hess)
        cov = hess_inv[:p, :p]
        boot = None
        if self.interval == "sandwich":
            j = len(ids)
            meat = scores.T @ scores * (j / (j - 1) if j > 1 else 1.0)
            sandwich = (hess_inv @ meat @ hess_inv)[:p, :p]
            # The larger of the two for each variance and each variance of a difference.
            var_h, var_s = np.diag(cov), np.diag(sandwich)
            diff_h = var_h[:, None] + var_h[None, :] - 2 * cov
            diff_s = var_s[:, None] + var_s[None, :] - 2 * sandwich
            big = np.maximum(diff_h, diff_s)
            var = np.maximum(var_h, var_s)
            cov = (var[:, None] + var[None, :] - big) / 2  # a covariance with those variances
        elif self.interval == "bootstrap":
            rng = np.random.default_rng(self.seed)
            j = len(ids)
            boot = np.empty((self.n_boot, p))
            for b in range(self.n_boot):
                pick = rng.integers(j, size=j)
                boot[b] = self._solve(K[pick], F[pick], params)[0][:p]
        return Fit(players, params[:p], s, cov, boot, loglik, difficulty, dict(zip(ids, sd.tolist(), strict=True)))

    def _hessian(self, params: np.ndarray, K: np.ndarray, F: np.ndarray, eps: float = 1e-5) -> np.ndarray:
        """The curvature of the penalised negative log-likelihood, by central differences of
        the analytic gradient."""
        p = K.shape[1]

        def grad(x: np.ndarray) -> np.ndarray:
            g = -_terms(x, K, F, self.grid, self.guess)[1].sum(axis=0)
            g[:p] += x[:p] / self.prior_sd**2
            return g

        h = np.empty((len(params), len(params)))
        for i in range(len(params)):
            step = np.zeros(len(params))
            step[i] = eps
            h[i] = (grad(params + step) - grad(params - step)) / (2 * eps)
        return (h + h.T) / 2

    # ------------------------------------------------------------------ the table
    def _table(self) -> list[RatingRow]:
        fit = self.fit()
        score: dict[str, float | None] = {n: None for n in self.players}
        extra: dict[str, dict[str, Any]] = {n: {"games": self.games.get(n, 0)} for n in self.players}
        bounds: dict[str, tuple[float | None, float | None]] = {n: (None, None) for n in self.players}
        if fit is not None:
            tail = (1 - self.level) / 2 * 100
            for i, n in enumerate(fit.players):
                theta = float(fit.theta[i])
                sd = math.sqrt(max(float(fit.cov[i, i]), 0.0))
                if fit.boot is not None:
                    lo, hi = (float(v) for v in np.percentile(fit.boot[:, i], [tail, 100 - tail]))
                else:
                    lo, hi = theta - self.z * sd, theta + self.z * sd
                score[n], bounds[n] = theta, (lo, hi)
                extra[n].update(
                    sd=sd,
                    p_typical=self.guess + (1 - self.guess) * float(expit(theta)),
                    samples=int(sum(c[n][1] for c in self.counts.values() if n in c)),
                )
        ranks = rank_by_score([(n, score[n]) for n in self.players])
        rows = [RatingRow(n, score[n], bounds[n][0], bounds[n][1], ranks[n], extra[n]) for n in self.players]
        return sorted(rows, key=lambda r: (r.rank or 10**9, r.player))

    def order_confidence(self) -> list[OrderPair]:
        rows = self.table()
        fit = self.fit()
        if fit is None:
            return []
        idx = {n: i for i, n in enumerate(fit.players)}

        def above(a: str, b: str) -> float:
            i, k = idx[a], idx[b]
            if fit.boot is not None:
                d = fit.boot[:, i] - fit.boot[:, k]
                return float(np.mean(d > 0) + 0.5 * np.mean(d == 0))
            var = float(fit.cov[i, i] + fit.cov[k, k] - 2 * fit.cov[i, k])
            return normal_above(float(fit.theta[i]), float(fit.theta[k]), var)

        return adjacent_pairs(rows, above)

    def task_difficulty(self) -> dict[str, float]:
        """Each task's posterior mean difficulty b_j (logits; 0 = the typical task)."""
        fit = self.fit()
        return dict(fit.difficulty) if fit is not None else {}

    def summary(self) -> dict[str, Any]:
        """The fit's own numbers: tasks, spread of difficulty, log-likelihood."""
        fit = self.fit()
        return {
            "tasks": self.n_tasks,
            "difficulty_sd": fit.s if fit else None,
            "loglik": fit.loglik if fit else None,
            "interval": self.interval,
            "guess": self.guess,
        }

"""The board's ratings: the item-response model of ``rating=irt`` over the bank, on an anchored
scale, and one model's ability against fixed task difficulties.

**Full refit** (:func:`refit`): for each game, and overall (every task of every game), the
Rasch model with random task difficulty (:class:`skate.ratings.irt.IRTRating`) fitted on every
response in the bank: each model's ability θ with its interval, each task's posterior mean
difficulty b and its sd (stored with the task, on its game's scale).

**How much a response counts.** A model's correct-of-n on a task enters every fit as its share
right over at most :data:`EFFECTIVE_SAMPLES` samples (:func:`effective`). Without this, the tasks a
game's adaptive estimator asked at length, up to 200 samples where a player was unsure, would
outweigh the rest. A newcomer asked differently would then be measured on another scale: with
every sample counted, newcomers came out one rank off their replay's, outwards
(docs/benchmarks/leaderboard.md).

**Anchoring.** The Rasch scale has no origin of its own: a fit puts the typical task at 0, so
adding a model (and its tasks) would move every score a little. Each refit is therefore shifted
so that the models of the previous snapshot keep their mean score (and the task difficulties
move with them): what a model added changes is the incumbents' order and spread as the data
say, not the board's zero. The first fit sets the zero: the typical task of the bank.

**Placing one model** (:func:`ability`): with the task difficulties held fixed, one model's
ability is a one-dimensional fit (Newton's method on the binomial log-likelihood, under a normal
prior: while a model is placed, the board's own spread of abilities, so that its first few
answers, all right or all wrong, do not throw it past the whole board); its sd is the larger of the model's (the inverse
square root of the information) and the sandwich's (each task's samples one cluster), as for the
board's own intervals. The incumbents do not move while a model is placed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Connection

from skate.leaderboard.store import OVERALL, Store
from skate.ratings.base import normal_above
from skate.ratings.irt import IRTRating

PRIOR_SD = 5.0
LEVEL = 0.95


@dataclass(frozen=True)
class Ability:
    theta: float
    sd: float
    tasks: int
    samples: int


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, x))))


# One task a model answered: (difficulty b, correct k, samples n[, b's sd or None]).
Item = tuple[float, float, float] | tuple[float, float, float, float | None]


def ability(items: Sequence[Item], prior_sd: float = PRIOR_SD, prior_mean: float = 0.0) -> Ability:
    """One model's ability from ``items``: (difficulty b, correct k, samples n[, b's sd]), the
    difficulties fixed, each known to within its sd (its posterior from the board's fit: a task
    every incumbent got right is known only to be easy, not how easy). Each task's likelihood is
    averaged over its difficulty's normal (Gauss–Hermite, 9 points), so a barely known difficulty
    does not pass for a precise one (plugging in the posterior mean, shrunk towards the typical
    task, stretches a newcomer's ability outwards). The posterior mode under
    N(prior_mean, prior_sd²), and its sd: the larger of the model's and the sandwich's, each task
    one cluster, as for the board's own intervals."""
    import numpy as np

    if not items:
        return Ability(prior_mean, prior_sd, 0, 0)
    b = np.array([float(it[0]) for it in items])[:, None]
    k = np.array([float(it[1]) for it in items])[:, None]
    n = np.array([float(it[2]) for it in items])[:, None]
    sd = np.array([float(it[3]) if len(it) > 3 and it[3] is not None else 0.0 for it in items])[:, None]
    nodes, weights = np.polynomial.hermite_e.hermegauss(9)
    logw = np.log(weights / weights.sum())[None, :]
    shift = b + sd * nodes[None, :]  # (tasks, nodes): the difficulties each task may have
    prec = 1.0 / prior_sd**2

    def terms(theta: float) -> tuple[np.ndarray, np.ndarray]:
        """Each task's score and curvature of its log-likelihood (averaged over its difficulty)."""
        z = theta - shift
        logp, logq = -np.logaddexp(0.0, -z), -np.logaddexp(0.0, z)
        ell = k * logp + (n - k) * logq + logw
        r = np.exp(ell - ell.max(axis=1, keepdims=True))
        r /= r.sum(axis=1, keepdims=True)  # the task's weights over its possible difficulties
        p = np.exp(logp)
        g, h = k - n * p, -n * p * (1.0 - p)
        score = (r * g).sum(axis=1)
        return score, (r * (h + g * g)).sum(axis=1) - score**2

    theta = prior_mean
    for _ in range(100):
        score, curv = terms(theta)
        grad = score.sum() - prec * (theta - prior_mean)
        info = max(prec - curv.sum(), prec)
        step = max(-1.0, min(1.0, grad / info))
        theta += step
        if abs(step) < 1e-9:
            break
    score, curv = terms(theta)
    info = max(prec - curv.sum(), prec)
    m = len(items)
    meat = float((score**2).sum()) * (m / (m - 1) if m > 1 else 1.0)
    var = max(1.0 / info, meat / info**2)
    return Ability(float(theta), math.sqrt(var), m, int(n.sum()))


# A response counts as at most this many samples (its share right kept). A model's samples of one
# task agree far beyond independent draws, and models were asked different numbers of them (a
# game's adaptive estimator asks up to 200 where a player is unsure, 10 where it is sure): counted
# in full, a few tasks asked at length would outweigh the rest, and a newcomer asked differently
# would be measured on another scale.
EFFECTIVE_SAMPLES = 10


def effective(correct: float, samples: float) -> tuple[float, float]:
    """A response as the board's fits count it (:data:`EFFECTIVE_SAMPLES`)."""
    m = min(float(samples), EFFECTIVE_SAMPLES)
    return correct * m / samples, m


def above(a: tuple[float, float], b: tuple[float, float]) -> float:
    """P(a's ability above b's), each (θ, sd), taken as independent normals."""
    return normal_above(a[0], b[0], a[1] ** 2 + b[1] ** 2)


UNLOCKED_FITS = 3  # fits a refit makes without the write lock before it fits holding it


def refit(store: Store, why: str = "refit") -> dict[str, list[dict[str, Any]]]:
    """Fit every game and the whole bank again, anchored to the last snapshots; store each
    game's task difficulties and a snapshot of each table, all in one transaction. Returns the
    tables by game (``""``: overall).

    It fits first without holding the write lock, then writes holding it, if the bank is as it
    read it (:meth:`Store.version`); if not, an add's answers or another snapshot came meanwhile,
    and it fits again under the lock. So a refit during an add fits every response stored when it
    writes, the newcomer's so far included, waiting for a write under way; the add's own snapshot
    then extends the refit's board. A bank that moved during a fit is fitted again without the
    lock first (up to :data:`UNLOCKED_FITS` fits in all), so the lock is held for a fit only when
    an add wrote during the last one."""
    version = store.version()
    fits = _fits(store)
    for _ in range(UNLOCKED_FITS - 1):  # moved while it fitted: again, still unlocked (a fit can take minutes)
        if (now := store.version()) == version:
            break
        version, fits = now, _fits(store)
    with store.transaction() as conn:
        if store.version(conn) != version:
            fits = _fits(store, conn)
        for game, (rows, difficulties, record) in fits.items():
            if game != OVERALL:
                store.set_difficulty(conn, difficulties)
            store.snapshot(conn, game, why, record, rows)
        store.set_refit_due(conn, False)
    return {game: rows for game, (rows, _, _) in fits.items()}


def _fits(
    store: Store, conn: Connection | None = None
) -> dict[str, tuple[list[dict[str, Any]], dict[int, tuple[float, float | None]], dict[str, Any]]]:
    """Each game's fit and the overall one, read through ``conn`` when given: (its table, its
    tasks' difficulties by row id, the fit's own numbers)."""
    out = {}
    for game in [*store.games(conn), OVERALL]:
        cells = store.responses(game or None, conn)  # OVERALL: every game's
        backend = IRTRating()
        backend.add_players(sorted({r.model for r in cells}))
        by_task: dict[int, dict[str, tuple[float, float]]] = {}
        for r in cells:
            by_task.setdefault(r.task, {})[r.model] = effective(r.correct, r.samples)
        for task, counts in by_task.items():
            backend.update(str(task), {m: k / n for m, (k, n) in counts.items()}, counts=counts)
        fit = backend.fit()
        if fit is None:
            continue
        _, previous = store.board(game, conn)
        shift = _anchor(
            {r["model"]: r["score"] for r in previous if r["score"] is not None},
            dict(zip(fit.players, fit.theta.tolist(), strict=True)),
        )
        rows = []
        for row in backend.table():
            tasks_of = sum(1 for counts in by_task.values() if row.player in counts)
            rows.append(
                {
                    "model": row.player,
                    "score": _plus(row.score, shift),
                    "lo": _plus(row.lo, shift),
                    "hi": _plus(row.hi, shift),
                    "sd": row.extra.get("sd"),
                    "rank": row.rank,
                    "tasks": tasks_of,
                }
            )
        difficulties = {int(t): (b + shift, fit.difficulty_sd.get(t)) for t, b in fit.difficulty.items()}
        out[game] = (
            rows,
            difficulties,
            {"tasks": len(by_task), "difficulty_sd": fit.s, "shift": shift, "loglik": fit.loglik},
        )
    return out


def _anchor(previous: dict[str, float], now: dict[str, float]) -> float:
    """The shift that gives the models of the previous snapshot their previous mean score."""
    common = [m for m in now if m in previous]
    if not common:
        return 0.0
    return sum(previous[m] - now[m] for m in common) / len(common)


def _plus(x: float | None, shift: float) -> float | None:
    return None if x is None else x + shift


def difficulty(items: Sequence[tuple[float, float, float]], spread: float) -> tuple[float, float]:
    """One task's difficulty (and sd) from ``items`` (ability θ, correct k, samples n) of models
    whose abilities are fixed, under the N(0, spread²) the game's tasks are drawn from:
    P(correct) = σ(θ − b) = σ(−b − (−θ)), so it is :func:`ability` with the signs turned."""
    got = ability([(-theta, k, n) for theta, k, n in items], prior_sd=max(spread, 1e-3))
    return -got.theta, got.sd

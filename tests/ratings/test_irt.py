"""The item-response model: it recovers abilities the data were drawn with, its intervals are
honest, and it reads the graded samples of every game and of runs played before it existed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import approx_fprime

from skate.ratings.irt import IRTRating, _terms


def simulate(theta, tasks, rng, guess=0.0, samples=(1, 6), cell_sd=0.0, s=1.5):
    """Counts drawn from the model itself (cell_sd > 0 adds a player-by-task effect the model
    does not have: the same luck shared by every sample of a cell)."""
    names = [f"p{i}" for i in range(len(theta))]
    data = []
    for j in range(tasks):
        b = rng.normal(0.0, s)
        n = rng.integers(samples[0], samples[1] + 1, size=len(theta))
        z = np.asarray(theta) - b + rng.normal(0.0, cell_sd, size=len(theta)) if cell_sd else np.asarray(theta) - b
        p = guess + (1 - guess) / (1 + np.exp(-z))
        k = rng.binomial(n, p)
        data.append((f"t{j}", {names[i]: (int(k[i]), int(n[i])) for i in range(len(theta))}))
    return names, data


def fitted(names, data, **kw):
    r = IRTRating(**kw)
    r.add_players(names)
    for task, counts in data:
        assert r.update(task, {}, counts=counts).updates == 0  # no pairwise updates to log
    return r, {row.player: row for row in r.table()}


@pytest.mark.parametrize("guess", [0.0, 0.25])
def test_it_recovers_the_abilities_the_answers_were_drawn_with(guess):
    theta = np.array([1.6, 0.8, 0.0, -0.8, -1.6])
    names, data = simulate(theta, 300, np.random.default_rng(1), guess=guess)
    r, rows = fitted(names, data, guess=guess)
    est = np.array([rows[n].score for n in names])
    assert [row.player for row in r.table()] == names  # ranked in the true order
    # Differences are identified (the typical task's difficulty anchors the level)
    assert est - est.mean() == pytest.approx(theta - theta.mean(), abs=0.25)
    assert r.fit().s == pytest.approx(1.5, abs=0.35)
    assert all(rows[n].lo < rows[n].score < rows[n].hi for n in names)
    assert rows["p0"].p_typical == pytest.approx(guess + (1 - guess) / (1 + math.exp(-rows["p0"].score)))


def test_the_gradient_is_the_derivative_of_the_likelihood():
    names, data = simulate([1.0, 0.0, -1.0], 40, np.random.default_rng(2), guess=0.25)
    r, _ = fitted(names, data)
    _, K, F = r.matrices(names)
    x = np.array([0.7, -0.1, -0.9, math.log(1.3)])
    f = lambda v: _terms(v, K, F, r.grid, 0.25)[0].sum()  # noqa: E731
    g = _terms(x, K, F, r.grid, 0.25)[1].sum(axis=0)
    assert approx_fprime(x, f, 1e-6) == pytest.approx(g, rel=1e-4, abs=1e-4)


def test_order_confidence_is_calibrated_when_the_model_holds():
    """Over many small games, an adjacent pair called right with confidence c is right about a
    fraction c of the time (binned)."""
    rng = np.random.default_rng(3)
    calls = []
    for _ in range(40):
        theta = np.sort(rng.normal(0, 0.6, 4))[::-1]
        names, data = simulate(theta, 20, rng, samples=(2, 2))
        r, _ = fitted(names, data, interval="hessian")
        truth = dict(zip(names, theta, strict=True))
        for pair in r.order_confidence():
            calls.append((pair.confidence, truth[pair.above] > truth[pair.below]))
    conf = np.array([c for c, _ in calls])
    right = np.array([ok for _, ok in calls])
    sure = conf >= 0.9
    assert right[sure].mean() >= 0.85  # said >= 90%: right at least 85% of the time
    unsure = conf < 0.75
    assert right[unsure].mean() < 0.85  # said < 75%: and indeed often wrong
    assert abs(right.mean() - conf.mean()) < 0.08


def test_the_sandwich_widens_intervals_when_samples_of_a_task_share_their_luck():
    """A player-by-task effect makes the many samples of one cell one piece of evidence: the
    sandwich (clustered by task) says so, the curvature alone does not. (Over 80 such games the
    difference θ0 − θ2 spread with sd 0.32; the sandwich said 0.31 on average, the curvature 0.12.)"""
    rng = np.random.default_rng(4)
    names, data = simulate([0.5, 0.0, -0.5], 40, rng, samples=(20, 20), cell_sd=1.5)
    curvature, by_curvature = fitted(names, data, interval="hessian")
    sandwich, by_sandwich = fitted(names, data, interval="sandwich")

    def sd_of_difference(r, i, k):
        cov = r.fit().cov
        return math.sqrt(cov[i, i] + cov[k, k] - 2 * cov[i, k])

    for i, k in ((0, 1), (1, 2), (0, 2)):
        assert sd_of_difference(sandwich, i, k) > 1.5 * sd_of_difference(curvature, i, k)
    for n in names:
        assert by_sandwich[n].score == pytest.approx(by_curvature[n].score)
        assert by_sandwich[n].sd >= by_curvature[n].sd


def test_bootstrap_intervals_hold_the_point_and_say_how_sure_the_order_is():
    names, data = simulate([1.5, 0.0, -1.5], 40, np.random.default_rng(5))
    r, rows = fitted(names, data, interval="bootstrap", bootstrap=40)
    assert all(rows[n].lo < rows[n].score < rows[n].hi for n in names)
    assert [p.above for p in r.order_confidence()] == ["p0", "p1"]
    assert all(p.confidence > 0.95 for p in r.order_confidence())


def test_a_player_right_every_time_stays_finite_and_one_never_asked_is_not_ranked():
    r = IRTRating()
    r.add_players(["ace", "mid", "idle"])
    for j in range(10):
        r.update(f"t{j}", {}, counts={"ace": (3, 3), "mid": (j % 3, 3)})
    rows = {row.player: row for row in r.table()}
    assert math.isfinite(rows["ace"].score) and rows["ace"].rank == 1
    assert rows["ace"].score > rows["mid"].score
    assert (rows["idle"].score, rows["idle"].rank) == (None, None) and rows["idle"].no_data


def test_players_missing_from_tasks_and_late_answers_to_old_tasks_count():
    """A skipped player is missing from that task; a player who answers a task later (a staged
    game's newcomer) adds its counts to the same task."""
    r = IRTRating()
    r.add_players(["a", "b", "late"])
    r.update("t1", {}, counts={"a": (2, 2), "b": (0, 2)})
    r.update("t2", {}, counts={"a": (1, 2)})
    r.update("t1", {}, counts={"a": (2, 2), "b": (0, 2), "late": (1, 2)}, involving={"late"})
    assert r.counts["t1"] == {"a": (2, 2), "b": (0, 2), "late": (1, 2)}
    assert r.games == {"a": 2, "b": 1, "late": 1}
    assert r.n_tasks == 2
    assert {row.player for row in r.table() if row.score is not None} == {"a", "b", "late"}


def test_it_needs_the_graded_samples_and_refuses_bad_settings():
    r = IRTRating()
    r.add_players(["a", "b"])
    with pytest.raises(ValueError, match="counts"):
        r.update("t1", {"a": 1.0, "b": 0.0})
    for kw, key in (
        ({"guess": 1.0}, "rating.guess"),
        ({"prior_sd": 0}, "rating.prior_sd"),
        ({"interval": "x"}, "rating.interval"),
        ({"level": 1.0}, "rating.level"),
    ):
        with pytest.raises(ValueError, match=key):
            IRTRating(**kw)

"""The board's fits: one model's ability against fixed difficulties, and the anchored refit."""

from __future__ import annotations

import numpy as np
import sqlalchemy as sa
from scipy.stats import kendalltau

import skate.leaderboard.fit as fit
from skate.leaderboard.bank import import_run
from skate.leaderboard.database import models
from skate.leaderboard.fit import ability, difficulty, refit
from skate.leaderboard.store import Store
from skate.runlog.events import read_run


def test_one_ability_against_fixed_difficulties_is_recovered_with_an_honest_sd():
    rng = np.random.default_rng(0)
    hits = 0
    for _rep in range(40):
        b = rng.normal(0, 1.5, size=60)
        k = rng.binomial(2, 1 / (1 + np.exp(-(0.8 - b))))
        got = ability(list(zip(b.tolist(), k.tolist(), [2] * 60, strict=False)))
        hits += abs(got.theta - 0.8) <= 1.96 * got.sd
    assert hits >= 34  # about 95 % of 40 intervals cover the truth
    # a task's difficulty from fixed abilities is the same fit with the signs turned
    b_hat, sd = difficulty([(1.0, 3, 4), (-1.0, 1, 4)], spread=5.0)
    assert abs(b_hat) < 1e-6 and sd > 0


def test_the_refit_keeps_the_incumbents_mean_and_orders_them_by_skill(runs_to_bank, tmp_path):
    store = Store.open(tmp_path / "b.db")
    import_run(store, runs_to_bank[0])
    first = {r["model"]: r["score"] for r in refit(store)["mathquiz"]}
    import_run(store, runs_to_bank[1])
    second = {r["model"]: r["score"] for r in refit(store)["mathquiz"]}
    assert abs(np.mean(list(first.values())) - np.mean(list(second.values()))) < 1e-6  # anchored
    truth = read_run(runs_to_bank[0]).true_skill
    names = sorted(second)
    tau = kendalltau([second[n] for n in names], [truth[n] for n in names]).statistic
    assert tau >= 0.85
    snap, rows = store.board("mathquiz")
    assert snap["fit"]["tasks"] == len(store.tasks()) and [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    assert all(t.difficulty is not None for t in store.tasks())


def test_a_bank_that_moves_during_a_refit_is_fitted_again_before_the_lock_is_taken(runs_to_bank, tmp_path, monkeypatch):
    """An add's answer stored while the refit fits: the refit fits again without the write lock
    (a fit of a large bank takes minutes, and adds wait for the lock), and writes the second fit,
    the answer in it."""
    store = Store.open(tmp_path / "b.db")
    import_run(store, runs_to_bank[0])
    calls: list[bool] = []  # whether each fit read through the lock's connection
    real = fit._fits

    def fits(store_, conn=None):
        calls.append(conn is not None)
        if len(calls) == 1:  # an add writes one answer while the first fit runs
            with store.transaction() as c:
                c.execute(sa.insert(models).values(name="newcomer", kind="simulated", spec="{}", added=0.0, how="add"))
                newcomer = c.execute(sa.select(models.c.id).where(models.c.name == "newcomer")).scalar_one()
                assert store.record(c, newcomer, 1, 1, 2, "add")
        return real(store_, conn)

    monkeypatch.setattr(fit, "_fits", fits)
    before = store.version()
    refit(store)
    assert calls == [False, False]  # fitted again unlocked; the bank then held still: no fit under the lock
    assert store.version()[0] == before[0] + 1
    assert "newcomer" in {r["model"] for r in store.board("mathquiz")[1]}  # its answer is in the fit written

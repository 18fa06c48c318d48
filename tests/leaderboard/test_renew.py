"""Renewing the bank: old and over-exposed tasks retire (never asked again, still counted), and
a short game among the incumbents refills a band of ability that runs low."""

from __future__ import annotations

import time

import pytest
import sqlalchemy as sa

import skate.leaderboard.renew as renew
from skate.leaderboard.bank import import_run
from skate.leaderboard.database import tasks
from skate.leaderboard.fit import refit
from skate.leaderboard.renew import describe, refresh, retire, thin_bands
from skate.leaderboard.settings import RefreshSettings
from skate.leaderboard.store import Store, StoreError


@pytest.fixture
def board(runs_to_bank, tmp_path):
    store = Store.open(tmp_path / "b.db")
    import_run(store, runs_to_bank[0])
    refit(store)
    return store


def test_old_and_over_exposed_tasks_retire_and_are_never_asked_again(board):
    banked = board.tasks("mathquiz")
    old, rest = banked[0], banked[1:]
    with board.transaction() as conn:
        conn.execute(sa.update(tasks).where(tasks.c.id == old.id).values(created=time.time() - 200 * 86_400))
    assert retire(board, "mathquiz", max_age_days=180, max_exposure=50) == 1
    assert [t.id for t in board.tasks("mathquiz", retired=True)] == [old.id]
    assert old.id not in {t.id for t in board.candidates("mathquiz", "someone", old.difficulty, 4, 10_000)}
    # every task of this run was answered by its 6 players: an exposure cap of 6 retires them all
    assert retire(board, "mathquiz", max_age_days=180, max_exposure=6) == len(rest)
    assert retire(board, "mathquiz", max_age_days=180, max_exposure=6) == 0
    # retired tasks still count: the refit rates the same players on the same responses
    assert {r["model"] for r in refit(board)["mathquiz"]} == {r["model"] for r in board.board("mathquiz")[1]}
    with pytest.raises(StoreError, match="positive age"):
        retire(board, "mathquiz", max_age_days=0, max_exposure=6)


def test_a_thin_band_gets_a_short_game_among_the_incumbents_nearest_it(board, tmp_path):
    before = board.counts()
    # enough tasks everywhere: nothing is played
    quiet = refresh(board, RefreshSettings(min_per_band=0, runs_dir=tmp_path / "fresh"))
    assert quiet.played == [] and board.counts()["runs"] == before["runs"]
    assert "no game played" in describe(quiet)[-1]
    # every band thin: each gets its game, banked and fitted
    wanted = RefreshSettings(min_per_band=10_000, players=3, rounds=1, runs_dir=tmp_path / "fresh")
    thin = thin_bands(board, "mathquiz", wanted.min_per_band, wanted.max_placed)
    got = refresh(board, wanted)
    assert len(got.played) == len(thin) >= 1 and got.added >= 1
    after = board.counts()
    assert after["runs"] == before["runs"] + len(thin) and after["tasks"] == before["tasks"] + got.added
    snap, _ = board.board("mathquiz")
    assert snap["why"] == "refresh"
    new = [t for t in board.tasks("mathquiz") if t.run_id > 1]
    assert new and all(t.difficulty is not None for t in new)
    assert any("new tasks banked" in line for line in describe(got))


def test_a_refresh_cut_short_before_its_refit_refits_when_run_again(board, tmp_path, monkeypatch):
    def killed(*_, **__):
        raise KeyboardInterrupt  # the process dies after banking its games, before fitting them

    monkeypatch.setattr(renew, "refit", killed)
    with pytest.raises(KeyboardInterrupt):
        refresh(board, RefreshSettings(min_per_band=10_000, players=3, rounds=1, runs_dir=tmp_path / "fresh"))
    assert board.refit_due()
    monkeypatch.undo()
    # run again: every band has its tasks now, so no game is played, but the owed refit is made
    again = refresh(board, RefreshSettings(min_per_band=0, runs_dir=tmp_path / "fresh"))
    assert again.played == [] and not board.refit_due()
    assert board.board("mathquiz")[0]["why"] == "refresh"

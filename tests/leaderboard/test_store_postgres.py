"""The store on a real PostgreSQL server (tests/leaderboard/conftest.py starts one), and a board
shared by several processes adding at once, on PostgreSQL and on a SQLite file."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from skate.cli.leaderboard import main
from skate.leaderboard.bank import import_run
from skate.leaderboard.database import (
    SCHEMA_VERSION,
    adds,
    meta,
    models,
    ratings,
    responses,
    snapshots,
    tasks,
)
from skate.leaderboard.fit import refit
from skate.leaderboard.store import Store, StoreError
from tests.leaderboard.conftest import interrupt_then_resume

GAME = "mathquiz"


def test_a_store_is_made_by_url_and_one_made_by_a_newer_skate_is_refused(postgres_url, postgres_server):
    with Store.open(postgres_url) as store:
        assert store.engine.dialect.name == "postgresql"
        with store.engine.connect() as conn:
            assert {"meta", "models", "runs", "tasks", "responses", "adds", "snapshots", "ratings"} <= set(
                sa.inspect(conn).get_table_names()
            )
        assert store.counts() == dict.fromkeys(("models", "runs", "tasks", "responses", "snapshots", "adds"), 0)
    with Store.open(postgres_url, create=False) as store:  # opened again: its tables are kept
        with store.transaction() as conn:
            conn.execute(sa.update(meta).where(meta.c.key == "schema_version").values(value=str(SCHEMA_VERSION + 1)))
    with pytest.raises(StoreError, match="made by a newer skate.*upgrade skate"):
        Store.open(postgres_url)
    with pytest.raises(StoreError, match="is not a leaderboard store yet"):
        Store.open(postgres_server.database(), create=False)
    nowhere = postgres_url.replace(str(postgres_server.socket_dir), str(postgres_server.socket_dir / "none"))
    with pytest.raises(StoreError, match="cannot reach the leaderboard"):
        Store.open(nowhere)


def test_import_twice_refit_and_show(runs_to_bank, postgres_url, capsys):
    assert main(["import", str(runs_to_bank[0]), str(runs_to_bank[1]), "--store", postgres_url]) == 0
    assert capsys.readouterr().out.count("mathquiz,") == 2
    with Store.open(postgres_url) as store:
        before = store.counts()
        assert before["tasks"] > 0 and before["responses"] > 0 and before["snapshots"] == 2  # the game's, overall
        fitted = store.tasks(GAME)
        assert all(t.difficulty is not None and not t.retired for t in fitted)
        assert {t.id for t in store.tasks(GAME, retired=False)} == {t.id for t in fitted}
        assert store.tasks(GAME, retired=True) == []
    assert main(["import", str(runs_to_bank[1]), "--store", postgres_url]) == 0
    assert "on the board already, nothing changed" in capsys.readouterr().out
    with Store.open(postgres_url) as store:
        assert store.counts() == before
        _, rows = store.board(GAME)
    assert main(["refit", "--store", postgres_url]) == 0
    assert main(["show", "--store", postgres_url]) == 0
    shown = capsys.readouterr().out
    assert shown.count("rank  model") == 2 and "overall:" in shown
    with Store.open(postgres_url) as store:
        _, again = store.board(GAME)
        assert store.counts()["snapshots"] == 4
    # refit over the same bank, anchored to the last board: the same table
    assert [r["model"] for r in again] == [r["model"] for r in rows]
    assert [r["score"] for r in again] == pytest.approx([r["score"] for r in rows], abs=1e-6)
    assert rows[0]["model"] == "sim-ace" and rows[-1]["model"] == "sim-novice"


def test_writers_take_turns_so_a_run_imported_twice_at_once_is_banked_once(runs_to_bank, postgres_url):
    """Two imports of one run wait while another write transaction is open, then go one after
    the other: the second sees the first's run (under READ COMMITTED alone both would find it
    new, and the second would fail on the runs table's unique key)."""
    store = Store.open(postgres_url)
    got: list[object] = []

    def bank() -> None:
        try:
            got.append(import_run(store, runs_to_bank[0]))
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            got.append(exc)

    waiting = sa.text("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
    with store.transaction():
        threads = [threading.Thread(target=bank) for _ in range(2)]
        for th in threads:
            th.start()
        deadline = time.monotonic() + 60
        with store.engine.connect() as conn:
            while conn.execute(waiting).scalar_one() < 2:
                assert time.monotonic() < deadline and all(th.is_alive() for th in threads), (
                    f"the imports did not wait for the open write transaction: {got}"
                )
                conn.rollback()
                time.sleep(0.01)
        assert got == []
    for th in threads:
        th.join()
    assert sorted(g.already for g in got) == [False, True], got
    assert store.counts()["runs"] == 1
    store.close()


@pytest.fixture
def pg_board(runs_to_bank, postgres_url):
    store = Store.open(postgres_url)
    for r in runs_to_bank:
        import_run(store, r)
    refit(store)
    yield store
    store.close()


def test_an_interrupted_add_goes_on_where_it_stopped(pg_board, tmp_path, monkeypatch):
    interrupt_then_resume(pg_board, tmp_path, monkeypatch, at=4)


# ------------------------------------------------------------------ several processes at once
# Each process runs skate's command line (skate.cli.main, what `skate` and `python -m skate` run)
# once all of them have imported it, so that their adds overlap rather than follow one another's
# start-up.
WORKER = """
import sys, time
from pathlib import Path
import skate.leaderboard.place
from skate.cli import main
Path(sys.argv[1]).touch()
while not Path(sys.argv[2]).exists():
    time.sleep(0.01)
main(["leaderboard", "add", *sys.argv[3:]])
"""


def _add_at_once(where: str, skills: dict[str, float], runs_dir: Path, max_placed: int) -> None:
    go = runs_dir / "go"
    runs_dir.mkdir()
    procs = {}
    for name, skill in skills.items():
        procs[name] = subprocess.Popen(
            [
                sys.executable,
                "-c",
                WORKER,
                str(runs_dir / f"{name}.ready"),
                str(go),
                f"simulated:{skill}",
                "--name",
                name,
                "--store",
                where,
                "--runs-dir",
                str(runs_dir),
                "--set-rounds",
                "1",
                "--max-placed",
                str(max_placed),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    while not all((runs_dir / f"{n}.ready").exists() for n in skills):
        assert all(p.poll() is None for p in procs.values()), {n: p.communicate() for n, p in procs.items()}
        time.sleep(0.01)
    go.touch()
    for name, p in procs.items():
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, f"{name}: {err[-3000:]}"
        assert out.startswith(f"{name}: rank "), out


def _assert_consistent(store: Store, added: list[str], max_placed: int) -> None:
    with store.engine.connect() as conn:
        status = dict(
            conn.execute(sa.select(models.c.name, adds.c.status).join(adds, adds.c.model_id == models.c.id)).all()
        )
        assert status == dict.fromkeys(added, "done")
        twice = conn.execute(
            sa.select(responses.c.model_id, responses.c.task_id)
            .group_by(responses.c.model_id, responses.c.task_id)
            .having(sa.func.count() > 1)
        ).all()
        assert twice == []
        answered = {
            t: (n, n_add)
            for t, n, n_add in conn.execute(
                sa.select(
                    responses.c.task_id, sa.func.count(), sa.func.sum(sa.case((responses.c.how == "add", 1), else_=0))
                ).group_by(responses.c.task_id)
            )
        }
        for tid, exposure, placed in conn.execute(sa.select(tasks.c.id, tasks.c.exposure, tasks.c.placed)):
            assert (exposure, placed) == answered.get(tid, (0, 0)), f"task {tid}"
            assert placed <= max_placed, f"task {tid}"
        last = conn.execute(sa.select(sa.func.max(snapshots.c.id)).where(snapshots.c.game == GAME)).scalar_one()
        on_board = set(
            conn.execute(
                sa.select(models.c.name)
                .join(ratings, ratings.c.model_id == models.c.id)
                .where(ratings.c.snapshot_id == last)
            ).scalars()
        )
        everyone = set(conn.execute(sa.select(models.c.name)).scalars())
    assert on_board == everyone and set(added) <= everyone
    assert sum(placed for _, placed in answered.values()) >= len(added)  # each was placed on banked tasks


@pytest.mark.parametrize("backend", ["postgresql", "sqlite"])
def test_adds_from_several_processes_at_once_leave_the_store_consistent(backend, runs_to_bank, tmp_path, request):
    if backend == "postgresql":
        where = request.getfixturevalue("postgres_server").database()
        skills = {"p-low": 0.35, "p-mid": 0.5, "p-high": 0.7}
    else:
        where, skills = str(tmp_path / "board.db"), {"s-low": 0.4, "s-high": 0.6}
    with Store.open(where) as store:
        for r in runs_to_bank:
            import_run(store, r)
        refit(store)
    _add_at_once(where, skills, tmp_path / "adds", max_placed=1)
    with Store.open(where, create=False) as store:
        _assert_consistent(store, list(skills), max_placed=1)

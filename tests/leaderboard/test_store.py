"""The store: made on first use, refused when it is not one or is newer, exposure kept in
transactions."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from skate.leaderboard.bank import import_run
from skate.leaderboard.database import SCHEMA_VERSION, meta
from skate.leaderboard.store import Store, StoreError


def test_a_store_made_by_a_newer_skate_or_another_file_is_refused(tmp_path):
    path = tmp_path / "b.db"
    Store.open(path).close()
    with Store.open(path) as store:
        with store.transaction() as conn:
            conn.execute(sa.update(meta).where(meta.c.key == "schema_version").values(value=str(SCHEMA_VERSION + 1)))
    with pytest.raises(StoreError, match="made by a newer skate.*upgrade skate"):
        Store.open(path)
    text = tmp_path / "notes.db"
    text.write_text("not a database\n" * 100)
    with pytest.raises(StoreError, match="is not a leaderboard store"):
        Store.open(text)
    assert text.read_text().startswith("not a database")  # left as it was
    with pytest.raises(StoreError, match="no leaderboard at"):
        Store.open(tmp_path / "none.db", create=False)
    with pytest.raises(StoreError, match="is a folder"):
        Store.open(tmp_path)


def test_a_task_is_shown_to_at_most_max_placed_models_being_added(runs_to_bank, tmp_path):
    store = Store.open(tmp_path / "b.db")
    import_run(store, runs_to_bank[0])
    task = store.tasks()[0]
    banked = store.tasks()
    with store.transaction() as conn:
        store.set_difficulty(conn, {t.id: (0.0, None) for t in banked})
        ids = [
            store.ensure_model(conn, f"new{i}", "simulated", {"name": f"new{i}", "skill": 0.5}, "add") for i in range(3)
        ]
    with store.transaction() as conn:
        assert store.record(conn, ids[0], task.id, 1, 2, "add", max_placed=2)
        assert not store.record(conn, ids[0], task.id, 1, 2, "add", max_placed=2)  # answered already
        assert store.record(conn, ids[1], task.id, 0, 2, "add", max_placed=2)
        assert not store.record(conn, ids[2], task.id, 0, 2, "add", max_placed=2)  # the cap is reached
    after = store.tasks(ids=[task.id])[0]
    assert (after.placed, after.exposure) == (2, task.exposure + 2)
    assert task.id not in {t.id for t in store.candidates(task.game, "new2", 0.0, 2, 1000)}
    assert task.id in {t.id for t in store.candidates(task.game, "new2", 0.0, 3, 1000)}
    assert task.id not in {t.id for t in store.candidates(task.game, "new0", 0.0, 3, 1000)}  # it answered it

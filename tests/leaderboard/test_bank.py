"""Banking finished runs: every rated task and response once, whatever is imported again."""

from __future__ import annotations

import json
import shutil

import pytest

from skate.leaderboard.bank import import_run
from skate.leaderboard.store import Store, StoreError
from skate.runlog.events import RatedTask, read_run


def test_a_run_is_banked_once_from_any_path(runs_to_bank, tmp_path):
    store = Store.open(tmp_path / "b.db")
    got = import_run(store, runs_to_bank[0])
    rated = [t for t in read_run(runs_to_bank[0]).rating_stream() if isinstance(t, RatedTask)]
    assert got.tasks == len(rated) > 0
    assert got.responses == sum(len(t.counts) for t in rated)
    assert sorted(got.models) == sorted(read_run(runs_to_bank[0]).players)
    before = store.counts()
    copy = tmp_path / "copy"
    shutil.copytree(runs_to_bank[0], copy)
    for again in (runs_to_bank[0], copy):
        assert import_run(store, again).already
    assert store.counts() == before
    # each banked task can be asked again: its body is the task event's fields
    task = store.tasks()[0]
    assert {"prompt", "answer", "setter", "task_id"} <= set(task.body)
    assert task.exposure == len(read_run(runs_to_bank[0]).players)


def test_what_cannot_be_banked_is_refused_in_one_line_and_nothing_is_lost(runs_to_bank, tmp_path):
    store = Store.open(tmp_path / "b.db")
    import_run(store, runs_to_bank[0])
    before = store.counts()
    unfinished = tmp_path / "unfinished"
    shutil.copytree(runs_to_bank[1], unfinished)
    lines = (unfinished / "events.jsonl").read_text().splitlines()
    (unfinished / "events.jsonl").write_text("\n".join(line for line in lines if '"run_end"' not in line) + "\n")
    with pytest.raises(StoreError, match="has not finished.*resume="):
        import_run(store, unfinished)
    with pytest.raises(StoreError, match="no events.jsonl"):
        import_run(store, tmp_path)
    other = tmp_path / "other"  # a log of another format: JSON lines, but no run_start first
    other.mkdir()
    (other / "events.jsonl").write_text('{"step": 1, "loss": 0.5}\n')
    with pytest.raises(StoreError, match="has no run_start"):
        import_run(store, other)
    # a player of the same name played by another model: refused, and the whole run left out
    clash = tmp_path / "clash"
    shutil.copytree(runs_to_bank[1], clash)
    lines = (clash / "events.jsonl").read_text().splitlines()
    start = json.loads(lines[0])
    start["config"]["players"]["simulated"][0]["skill"] = 0.1
    (clash / "events.jsonl").write_text("\n".join([json.dumps(start), *lines[1:]]) + "\n")
    with pytest.raises(StoreError, match="give the new one another name"):
        import_run(store, clash)
    assert store.counts() == before

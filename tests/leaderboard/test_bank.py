"""Banking finished runs: every rated task and response once, whatever is imported again."""

from __future__ import annotations

import json
import shutil

import pytest

import skate.leaderboard.bank as bank
from skate.leaderboard.bank import describe_import, import_run, import_runs
from skate.leaderboard.store import DiskFull, Imported, Store, StoreError
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


def test_runs_are_banked_in_turn_a_refused_one_said_and_the_rest_still_banked(runs_to_bank, tmp_path):
    store = Store.open(tmp_path / "b.db")
    got = list(import_runs(store, [runs_to_bank[0], tmp_path, runs_to_bank[1], runs_to_bank[0]]))
    assert [type(g) for g in got] == [Imported, StoreError, Imported, Imported]
    assert "no events.jsonl" in str(got[1]) and not got[2].already and got[3].already
    assert store.refit_due()  # the caller refits
    first = describe_import(got[0])
    assert first.startswith(f"{runs_to_bank[0]}: mathquiz, {got[0].tasks} tasks, {got[0].responses} responses")
    assert first.endswith(f"; new models: {', '.join(got[0].models)}")
    assert describe_import(got[2]) == f"{runs_to_bank[1]}: mathquiz, {got[2].tasks} tasks, {got[2].responses} responses"
    assert describe_import(got[3]) == f"{runs_to_bank[0]}: on the board already, nothing changed"


def test_a_full_disk_stops_the_import_of_every_run(runs_to_bank, tmp_path, monkeypatch):
    def full(store, run_dir, refit_due=False):
        raise DiskFull("the disk is full")

    monkeypatch.setattr(bank, "import_run", full)
    runs = import_runs(Store.open(tmp_path / "b.db"), runs_to_bank)
    with pytest.raises(DiskFull):
        next(runs)

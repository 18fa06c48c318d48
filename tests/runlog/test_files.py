"""The event log's replay (resuming a run), read one recorded line at a time."""

from __future__ import annotations

import json

import pytest

from skate.runlog import events as ev
from skate.runlog.files import EventLog, LogWriteError, RatingLog


def recorded(path):
    with EventLog(path) as log:
        log.write(ev.RunStarted(game="g", rounds=2, seed=1))
        log.write(ev.RoundStarted(round=1))
        log.write(ev.ModelCallVoid(player="a", model="m", kind="server"))
        log.write(ev.TaskSet(task_id="r001-a", round=1, setter="a", prompt="p", answer="1"))
        log.write(ev.RoundEnded(round=1, tasks=1))
        log.write(ev.RunStopped(round=2, reason="SIGINT"))
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"event": "round_st')  # torn by a kill
    return path.read_bytes()


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_replay_writes_nothing_it_finds_recorded_then_appends(tmp_path):
    path = tmp_path / "events.jsonl"
    original = recorded(path)
    with EventLog(path, replay=True) as log:
        # nothing is touched before the first event (a run refused while it is built leaves its log)
        assert path.read_bytes() == original and not (tmp_path / "events.interrupted-1.jsonl").exists()
        assert log.kept_kinds == {"run_start", "round_start", "llm_void", "task", "round_end"}
        log.write(ev.RunStarted(game="g", rounds=2, seed=1))
        assert (tmp_path / "events.interrupted-1.jsonl").read_bytes() == original  # kept as it was
        assert [r["event"] for r in lines(path)] == ["run_start", "round_start", "llm_void", "task", "round_end"]
        before = path.read_bytes()
        log.write(ev.RoundStarted(round=1))
        log.write(ev.ModelCallVoid(player="b", model="m", kind="timeout"))  # timing: not compared, not written
        log.write(ev.TaskSet(task_id="r001-a", round=1, setter="a", prompt="p", answer="1"))
        assert log.replaying and path.read_bytes() == before
        log.write(ev.RoundEnded(round=1, tasks=1))
        assert not log.replaying and log.replayed == 4
        log.write(ev.RoundStarted(round=2))
    assert [r["event"] for r in lines(path)] == [
        "run_start",
        "round_start",
        "llm_void",
        "task",
        "round_end",
        "round_start",
    ]


def test_a_replay_with_more_rounds_rewrites_the_first_line_and_a_difference_cuts_the_rest(tmp_path):
    path = tmp_path / "events.jsonl"
    recorded(path)
    ts = json.loads(path.read_text().splitlines()[0])["ts"]
    with EventLog(path, replay=True) as log:
        log.write(ev.RunStarted(game="g", rounds=5, seed=1))  # resumed with game.rounds=5
        assert lines(path)[0]["rounds"] == 5 and lines(path)[0]["ts"] == ts and len(lines(path)) == 5
        log.write(ev.RoundStarted(round=1))
        log.write(ev.TaskSet(task_id="r001-a", round=1, setter="a", prompt="p", answer="2"))  # differs
        assert log.diverged == 2 and not log.replaying
    assert [(r["event"], r.get("answer")) for r in lines(path)] == [
        ("run_start", None),
        ("round_start", None),
        ("task", "2"),
    ]


def test_the_log_keeps_pairs_as_a_resumed_log_began_else_as_asked(tmp_path):
    fresh = EventLog(tmp_path / "new" / "events.jsonl")
    assert fresh.keeps_pairs("pair") and not fresh.keeps_pairs(RatingLog.task)
    fresh.close()
    with pytest.raises(LogWriteError, match="is closed"):
        fresh.write(ev.RunStarted(game="g", rounds=2, seed=1))
    assert not (tmp_path / "new").exists()  # closed before its first event: nothing written, even late
    path = tmp_path / "events.jsonl"
    with EventLog(path) as log:
        log.write(ev.RunStarted(game="g", rounds=2, seed=1))
        log.write(ev.RatingUpdated(task_id="t", a="x", b="y", result=1.0))
        log.write(ev.RunStopped(round=1, reason="SIGINT"))
    resumed = EventLog(path, replay=True)
    assert resumed.keeps_pairs("task") and resumed.keeps_pairs("pair")  # the log began with one per pair
    resumed.close()
    path.write_text(path.read_text().splitlines()[0] + "\n")  # no rating yet: as asked
    assert not EventLog(path, replay=True).keeps_pairs("task")

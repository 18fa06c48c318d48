"""A whole game from its settings: files left behind, ranking vs true skill, determinism."""

from __future__ import annotations

import json

import pytest

import skate
from skate.players.config import SimPlayerConfig as Sim
from skate.runlog.files import format_table, read_events
from skate.runner import RunExists, run_game

# COP's small game: three simulated players, 12 rounds, no report (and logger=none, in config).
SMALL = {
    "game.rounds": 12,
    "report": False,
    "players.simulated": [
        Sim(name="hi", skill=0.85, pitch=-0.2),
        Sim(name="mid", skill=0.6),
        Sim(name="lo", skill=0.35, pitch=0.2),
    ],
}


def config(values=None, **choices):
    """The small game's settings, settled and checked (``skate.config``): ``values`` (dotted keys)
    over SMALL's, ``choices`` of config groups (``aug="no_info"``) over ``logger="none"``."""
    return skate.config(values={**SMALL, **(values or {})}, **{"logger": "none", **choices})


def strip_volatile(events):
    out = []
    for e in events:
        e = {k: v for k, v in e.items() if k != "ts"}
        if "summary" in e:
            e["summary"] = {k: v for k, v in e["summary"].items() if k != "elapsed_s"}
        out.append(e)
    return out


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    result = run_game(config({"seed": 11}), out)
    return out, result


def test_ranking_matches_true_skill(small_run):
    out, result = small_run
    assert [r["player"] for r in result.table] == ["hi", "mid", "lo"]


def test_ratings_json(small_run):
    out, result = small_run
    rows = json.loads((out / "ratings.json").read_text())
    assert rows == result.table
    assert [r["rank"] for r in rows] == [1, 2, 3]
    for r in rows:
        assert set(r) == {"player", "score", "lo", "hi", "rank", "mu", "sigma", "games", "true_skill"}
        assert r["score"] == r["mu"] and r["lo"] < r["mu"] < r["hi"]
        assert r["sigma"] < 25 / 3
    assert {r["player"]: r["true_skill"] for r in rows} == {"hi": 0.85, "mid": 0.6, "lo": 0.35}
    table = format_table(rows)
    assert all(name in table for name in ("hi", "mid", "lo"))


def test_event_log_records_the_whole_game(small_run):
    out, result = small_run
    events = read_events(out)
    kinds = [e["event"] for e in events]
    assert kinds[0] == "run_start" and kinds[-1] == "run_end"
    start = events[0]
    assert start["seed"] == 11 and start["config"]["game"]["rounds"] == 12
    assert {p["name"]: p["true_skill"] for p in start["players"]} == {"hi": 0.85, "mid": 0.6, "lo": 0.35}
    tasks = [e for e in events if e["event"] == "task"]
    attempts = [e for e in events if e["event"] == "attempt"]
    assert len(tasks) == result.summary.tasks >= 30
    assert sum(a["valid"] for a in attempts) == len(tasks)
    assert all(a["reason"] for a in attempts if not a["valid"])
    for t in tasks:
        assert t["prompt"] and t["answer"] and len(t["distractors"]) == 9
    estimates = [e for e in events if e["event"] == "estimate"]
    assert len(estimates) == 3 * len(tasks)
    assert all(e["n"] >= 10 and 0 <= e["p"] <= 1 for e in estimates)
    rated = [e for e in events if e["event"] == "rated"]  # the ratings once per task
    assert [r["task_id"] for r in rated] == [t["task_id"] for t in tasks] and not any(
        e["event"] == "rating" for e in events
    )
    assert all(r["updates"] == 3 for r in rated)  # 3 unique pairs per task
    assert [r["update"] for r in rated] == list(range(3, 3 * len(tasks) + 1, 3))
    assert all(set(r["state"]) == {"mu", "sigma"} and list(r["state"]["mu"]) == ["hi", "mid", "lo"] for r in rated)
    final = {row["player"]: row["mu"] for row in result.table}
    assert rated[-1]["state"]["mu"] == final  # the last task's numbers are the table's
    assert events[-1]["ratings"] == result.table


def test_same_seed_same_run_different_seed_different_run(small_run, tmp_path):
    out, _ = small_run
    run_game(config({"seed": 11}), tmp_path / "again")
    first, again = strip_volatile(read_events(out)), strip_volatile(read_events(tmp_path / "again"))
    assert first == again
    run_game(config({"seed": 12}), tmp_path / "other")
    other = strip_volatile(read_events(tmp_path / "other"))
    assert [e for e in other if e["event"] == "task"] != [e for e in first if e["event"] == "task"]


@pytest.mark.parametrize("strategy", ["no_info", "full_context"])
def test_other_strategies_and_absolute_rule_play_through(tmp_path, strategy):
    result = run_game(
        config({"game.rounds": 3, "rating.outcome": "absolute"}, aug=strategy, estimator="fixed_n"), tmp_path
    )
    assert result.summary.tasks >= 6
    est = [e for e in read_events(tmp_path) if e["event"] == "estimate"]
    assert {e["n"] for e in est} == {20}


def test_an_existing_log_is_neither_overwritten_nor_appended_to(tmp_path):
    """A folder holds one run (tests/test_runner_one_run.py): a second is refused, the log kept."""
    (tmp_path / "events.jsonl").write_text('{"event": "earlier"}\n')
    with pytest.raises(RunExists, match="already holds a run"):
        run_game(config({"game.rounds": 1}), tmp_path)
    assert read_events(tmp_path) == [{"event": "earlier"}]

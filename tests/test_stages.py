"""Staged games (SKATE §6.1/§6.2): players join, answer what came before, then play."""

from __future__ import annotations

import pytest

from skate.config import ConfigError, validate
from skate.runner import run_game
from skate.store import read_events
from tests.test_game import config

STAGES = ("stages=[{name: base, rounds: 3}, {name: watch, join: [hi], setters: [], rounds: 0},"
          " {name: play, rounds: 2}]")


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    out = tmp_path_factory.mktemp("staged")
    result = run_game(config("seed=2", STAGES), out)
    return out, result, read_events(out)


def test_a_newcomer_answers_every_earlier_task_and_only_its_pairs_are_rated(staged):
    out, result, events = staged
    base_tasks = [e for e in events if e["event"] == "task" and e["round"] <= 3]
    assert {t["setter"] for t in base_tasks} == {"mid", "lo"}  # hi had not joined
    join = next(e for e in events if e["event"] == "join")
    assert join == {**join, "stage": "watch", "players": ["hi"], "tasks": len(base_tasks)}
    late = [e for e in events if e["event"] == "estimate" and e.get("joined") == "watch"]
    assert {e["task_id"] for e in late} == {t["task_id"] for t in base_tasks} and {e["player"] for e in late} == {"hi"}
    i = events.index(join)
    at_join = [e for e in events[i:] if e["event"] == "rating"][: len(base_tasks) * 2]
    assert all("hi" in (e["a"], e["b"]) for e in at_join)  # mid vs lo was not rated again


def test_stage_snapshots_rank_only_the_players_in_the_game(staged):
    _, _, events = staged
    ends = {e["stage"]: e for e in events if e["event"] == "stage_end"}
    assert [r["player"] for r in ends["base"]["ratings"]] == ["mid", "lo"]
    assert {r["player"] for r in ends["watch"]["ratings"]} == {"hi", "mid", "lo"}
    assert [r["stage_rank"] for r in ends["play"]["ratings"]] == [1, 2, 3]


def test_setters_follow_the_stage(staged):
    _, result, events = staged
    late = [e for e in events if e["event"] == "task" and e["round"] > 3]
    assert {t["setter"] for t in late} == {"hi", "mid", "lo"}
    assert result.summary["tasks_by_setter"]["hi"] == 2


@pytest.mark.parametrize(("override", "says"), [
    ("stages=[{name: a, join: [nobody], rounds: 1}]", "not in the game"),
    ("stages=[{name: a, join: [hi], rounds: 1}, {name: b, join: [hi], rounds: 1}]", "joins only once"),
    ("stages=[{name: a, rounds: 0}]", "at least one round"),
])
def test_bad_stages_say_what_to_fix(override, says):
    with pytest.raises(ConfigError, match=says):
        validate(config(override))


def test_the_report_shows_the_ranking_of_each_stage(staged):
    from skate.report import build_report

    out, _, _ = staged
    page = build_report(out).read_text()
    assert "Rankings by stage" in page and "mid &gt; lo" in page

"""Staged games (SKATE §6.1/§6.2): players join, answer what came before, then play."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

import skate
from skate.errors import ConfigError
from skate.players.config import cohort_roles
from skate.runlog.files import read_events
from skate.runner import run_game
from skate.settings.config import StageConfig as Stage
from skate.settings.config import resolve_stages, validate
from tests.test_runner_game import config

STAGES = [
    Stage(name="base", rounds=3),
    Stage(name="watch", join=["hi"], setters=[], rounds=0),
    Stage(name="play", rounds=2),
]


@pytest.fixture(scope="module")
def small():
    """The small game's settings (tests/test_runner_game.py), settled and checked once: a test
    gives them other stages and checks them again (:func:`validate`, where stages are resolved)."""
    return config()


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    out = tmp_path_factory.mktemp("staged")
    result = run_game(config({"seed": 2, "stages": STAGES}), out)
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
    assert result.summary.tasks_by_setter["hi"] == 2


@pytest.mark.parametrize(
    ("stages", "says"),
    [
        ([Stage(name="a", join=["nobody"], rounds=1)], "neither a player nor a role"),
        ([Stage(name="a", join=["hi"], rounds=1), Stage(name="b", join=["hi"], rounds=1)], "joins only once"),
        ([Stage(name="a", rounds=0)], "at least one round"),
    ],
)
def test_bad_stages_say_what_to_fix(small, stages, says):
    with pytest.raises(ConfigError, match=says):
        validate(dataclasses.replace(small, stages=stages))


def test_the_report_shows_the_ranking_of_each_stage(staged):
    from skate.report import build_report

    out, _, _ = staged
    page = build_report(out).read_text()
    assert "Rankings by stage" in page and "mid &gt; lo" in page


# ------------------------------------------------------------------ players named by role
ROOT = Path(__file__).resolve().parents[1]
STAGED = sorted(p.stem for p in (ROOT / "conf" / "experiment").glob("*.yaml") if "stages:" in p.read_text())
KEYS = {"OPENAI_API_KEY": "x", "ANTHROPIC_API_KEY": "x", "GEMINI_API_KEY": "x"}
STRONGEST_TWO = {
    "simulated": {"sim-ace", "sim-strong"},
    "paper_six": {"claude-sonnet-4", "claude-3.5-sonnet"},
    "paper_four": {"claude-3.5-sonnet", "gemini-2.0-flash"},
}


def test_a_simulated_cohort_has_roles_from_its_skills_and_declared_roles_win(small):
    players = small.players  # hi 0.85, mid 0.6, lo 0.35
    assert cohort_roles(players) == {"strongest": "hi", "second": "mid", "third": "lo", "weakest": "lo"}
    assert cohort_roles(dataclasses.replace(players, roles={"strongest": "mid"}))["strongest"] == "mid"


def test_stages_name_players_by_role_and_answer_only_leaves_the_rest_setting(small):
    by_role = dataclasses.replace(
        small,
        stages=[
            Stage(name="a", rounds=1),
            Stage(name="b", join=["strongest"], answer_only=["strongest"], rounds=1),
            Stage(name="c", answer_only=["weakest"], rounds=1),
        ],
    )
    validate(dataclasses.replace(by_role))  # checked (a copy: validate settles its stages to name players)
    assert resolve_stages(by_role) == [
        {"name": "a", "join": [], "setters": None, "rounds": 1},
        {"name": "b", "join": ["hi"], "setters": ["mid", "lo"], "rounds": 1},
        {"name": "c", "join": [], "setters": ["mid", "hi"], "rounds": 1},
    ]


@pytest.mark.parametrize(
    ("stages", "says"),
    [
        (
            [Stage(name="a", rounds=1), Stage(name="b", join=["fifth"], rounds=1)],
            "'fifth' is neither a player nor a role of this cohort",
        ),
        ([Stage(name="a", rounds=1), Stage(name="b", setters=["hi"], answer_only=["lo"], rounds=1)], "not both"),
        ([Stage(name="a", answer_only=["hi"], rounds=1), Stage(name="b", join=["hi"], rounds=1)], "not in the game"),
        ([Stage(name="a", rounds=1), Stage(name="b", join=["mid", "lo"], rounds=1)], "at least 2 players"),
    ],
)
def test_bad_roles_say_what_to_fix(small, stages, says):
    with pytest.raises(ConfigError, match=says):
        validate(dataclasses.replace(small, stages=stages))


def test_a_cohort_without_the_role_is_told_what_to_add(monkeypatch):
    for k, v in {**KEYS, "DEEPSEEK_API_KEY": "x", "XAI_API_KEY": "x"}.items():
        monkeypatch.setenv(k, os.environ.get(k, v))

    def added(roles=None):  # the frontier cohort: models, and no roles declared
        return skate.config(experiment="added_models_xy", players="frontier", values={"players.roles": roles or {}})

    with pytest.raises(
        ConfigError, match=r"stages\[1\] \(add_second\)\.join: 'second'.*add `roles: \{second: <player>\}`"
    ):
        added()
    settled = added({"second": "gpt-5-mini", "strongest": "gemini-2.5-pro"})
    assert [st.join for st in settled.stages] == [[], ["gpt-5-mini"], ["gemini-2.5-pro"]]
    with pytest.raises(ConfigError, match="players.roles.second='gpt-5'.*names no player"):
        skate.config(experiment="added_models_xy", players="paper_six", values={"players.roles.second": "gpt-5"})


def test_the_staged_presets_are_all_named_by_role():
    assert {"added_models_xy", "added_models_yx", "weaker_judges"} <= set(STAGED)
    for name in STAGED:
        text = (ROOT / "conf" / "experiment" / f"{name}.yaml").read_text()
        assert "sim-" not in text.split("stages:")[1], f"{name} names a simulated player in its stages"


@pytest.mark.parametrize("cohort", ["simulated", "paper_six", "paper_four", "subset_b"])
@pytest.mark.parametrize("preset", STAGED)
def test_every_stage_preset_resolves_with_any_cohort(preset, cohort, monkeypatch):
    for k, v in KEYS.items():
        monkeypatch.setenv(k, os.environ.get(k, v))
    settled = skate.config(experiment=preset, players=cohort, logger="none")  # settings only: no model is called
    joined = [n for st in settled.stages for n in st.join]  # the stages resolved (by validate)
    names = [p.name for p in [*settled.players.simulated, *settled.players.llm]]
    assert set(joined) <= set(names) and len(joined) == len(set(joined))
    if cohort in STRONGEST_TWO:  # the paper's protocol: the two strongest join, the rest play first
        assert set(joined) == STRONGEST_TWO[cohort]


def test_the_added_models_presets_add_the_two_strongest_in_both_orders():
    orders = {}
    for preset in ("added_models_xy", "added_models_yx"):
        orders[preset] = [n for st in skate.config(experiment=preset, players="simulated").stages for n in st.join]
    assert orders == {"added_models_xy": ["sim-strong", "sim-ace"], "added_models_yx": ["sim-ace", "sim-strong"]}


def test_weaker_judges_lets_the_second_strongest_set_before_the_strongest():
    stages = {st.name: st for st in skate.config(experiment="weaker_judges", players="simulated").stages}
    assert stages["strong_answer"].setters == [] and set(stages["strong_answer"].join) == {"sim-ace", "sim-strong"}
    assert "sim-strong" in stages["second_sets"].setters and "sim-ace" not in stages["second_sets"].setters
    assert stages["strongest_sets"].setters is None


def test_a_game_records_the_players_its_roles_named(tmp_path):
    from skate.runner import run_game

    out = tmp_path / "run"
    run_game(config({"stages": [Stage(name="a", rounds=1), Stage(name="b", join=["strongest"], rounds=1)]}), out)
    events = read_events(out)
    assert events[0]["config"]["stages"][1]["join"] == ["hi"]
    assert next(e for e in events if e["event"] == "join")["players"] == ["hi"]


def test_the_settings_name_players_and_the_stages_are_resolved_once(monkeypatch):
    """Building a staged game's settings resolves its stages once (in validate), and the settings
    (what the run records) name players, not roles; answer_only becomes the setters it leaves."""
    import skate.settings.config

    calls = []
    real = skate.settings.config.resolve_stages
    monkeypatch.setattr(skate.settings.config, "resolve_stages", lambda cfg: calls.append(1) or real(cfg))
    settings = skate.config(experiment="weaker_judges", players="simulated")
    assert len(calls) == 1
    names = {p.name for p in settings.players.simulated}
    for st in settings.stages:
        assert set(st.join) <= names and (st.setters is None or set(st.setters) <= names) and st.answer_only == []
    by_name = {st.name: st for st in settings.stages}
    assert set(by_name["strong_answer"].join) == {"sim-ace", "sim-strong"}
    assert "sim-strong" in by_name["second_sets"].setters and "sim-ace" not in by_name["second_sets"].setters
    assert skate.settings.config.validate(settings).stages == settings.stages  # settled settings check again unchanged

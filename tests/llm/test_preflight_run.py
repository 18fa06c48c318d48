"""Preflight in a run, and what a run reports about a model that dies mid-game (issue 14)."""

from __future__ import annotations

import json

import pytest

from skate.errors import ConfigError
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.runlog.files import format_table, read_events
from skate.runner import run_game
from tests.llm.conftest import SKILLS, llm_config


def test_a_misspelt_model_stops_the_run_before_round_one(tmp_path):
    with FakeLLMServer({n: FakeModel(s) for n, s in SKILLS.items()}, strict=True) as srv:
        cfg = llm_config(
            srv.api_base,
            tmp_path / "cache",
            {"llm.preflight": True, "players.llm.2.model": "hosted_vllm/loww"},
            game="mathquiz",
        )
        with pytest.raises(ConfigError) as err:
            run_game(cfg, tmp_path / "run")
        message = str(err.value)
        assert "'low'" in message and "hosted_vllm/loww" in message and "does not serve this model" in message
        assert "llm.preflight=false" in message
        assert srv.stats.requests <= 3  # one probe per distinct model, no game call
        assert not (tmp_path / "run" / "events.jsonl").exists()  # nothing started


def test_a_dead_model_is_reported_each_round_and_not_ranked(tmp_path):
    models = {**{n: FakeModel(s) for n, s in SKILLS.items()}, "low": FakeModel(0.3, {"down": 1.0})}
    with FakeLLMServer(models) as srv:
        cfg = llm_config(
            srv.api_base,
            tmp_path / "cache",
            {
                "game.rounds": 2,
                "llm.max_retries": 0,
                "llm.outage_wait_s": 0,
            },  # void, not waited for (an outage: tests/llm/test_outage*.py)
            game="mathquiz",
        )
        result = run_game(cfg, tmp_path / "run")
    events = read_events(tmp_path / "run")
    silent = [e for e in events if e["event"] == "player_void"]
    assert [(e["round"], e["player"]) for e in silent] == [(1, "low"), (2, "low")]
    assert all(e["estimates"] > 0 for e in silent)
    rows = {r["player"]: r for r in result.table}
    assert rows["low"]["rank"] is None and rows["low"]["no_data"] is True
    assert [r["player"] for r in result.table][-1] == "low"
    assert "no data" in format_table(result.table).splitlines()[-1]
    saved = json.loads((tmp_path / "run" / "ratings.json").read_text())
    assert saved[-1]["player"] == "low" and saved[-1]["rank"] is None


def test_a_budget_stopped_run_resumes_with_more_budget_and_repeats_no_call(tmp_path):
    """The calls made before the stop come from the response cache; the resumed run ends as
    the same game played in one go (with a budget large enough)."""
    from skate.cli.play import resume
    from skate.runlog.files import comparable

    prices = {n: {"input_per_mtok": 100.0, "output_per_mtok": 100.0} for n in SKILLS}  # added to llm.prices' own
    game = {"game.rounds": 4, "llm.prices": prices}
    with FakeLLMServer({n: FakeModel(s) for n, s in SKILLS.items()}) as srv:
        whole = llm_config(srv.api_base, tmp_path / "cache-whole", {**game, "llm.budget_usd": 1000}, game="mathquiz")
        run_game(whole, tmp_path / "whole")
        needed = srv.stats.requests
        stopped = llm_config(srv.api_base, tmp_path / "cache", {**game, "llm.budget_usd": 2}, game="mathquiz")
        result = run_game(stopped, tmp_path / "run")
        assert "Budget" in result.summary.stopped
        before = srv.stats.requests - needed
        assert 0 < before < needed
        assert resume(str(tmp_path / "run"), ["llm.budget_usd=1000"]) == 0
        after = srv.stats.requests - needed - before
    # every call made before the stop was served from the cache (at most the calls cut off in
    # flight by the stop are asked again)
    assert before + after <= needed + 8
    runs = [
        [comparable(json.loads(x)) for x in (tmp_path / d / "events.jsonl").read_text().splitlines()]
        for d in ("whole", "run")
    ]
    strip = [[{k: v for k, v in e.items() if k != "config"} for e in r] for r in runs]  # budgets differ
    assert strip[0] == strip[1]

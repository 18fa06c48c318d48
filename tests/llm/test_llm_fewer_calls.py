"""experiment=fewer_calls with language-model players against the fake server: a player the
estimator does not ask sends no request, and the game ends when its ranking is settled."""

from __future__ import annotations

import json

import skate
from skate.runlog.files import read_events
from skate.runner import run_game
from tests.llm.conftest import llm_players


def test_the_preset_ranks_the_models_and_every_request_is_one_it_logged(server, tmp_path):
    cfg = skate.config(
        values={
            "game.rounds": 40,
            "estimator.first": 2,
            "estimator.max_samples": 2,
            "report": False,
            "players.simulated": [],
            "players.llm": llm_players(server.api_base),
            "llm.cache_dir": str(tmp_path / "cache"),
            "llm.preflight": False,
        },
        experiment="fewer_calls",
        logger="none",
    )
    result = run_game(cfg, tmp_path / "run")
    assert [r["player"] for r in result.table] == ["ace", "mid", "low"]
    events = read_events(tmp_path / "run")
    end = events[-1]
    assert end["event"] == "run_end" and end["ended"] == "settled"
    estimates = [e for e in events if e["event"] == "estimate"]
    skipped = [e for e in estimates if e.get("skipped")]
    assert skipped, "once a pair is sure, its players are not asked"
    attempts = sum(e["event"] == "attempt" for e in events)
    usage = json.loads((tmp_path / "run" / "usage.json").read_text())["total"]
    # every sample the log holds was one completion the server gave, and no skipped player asked
    assert usage["samples"] == attempts + sum(e["n"] + e["void"] for e in estimates)
    assert usage["calls"] == server.stats.requests

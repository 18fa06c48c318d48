"""Whole games with LLM players served over HTTP on loopback: play, faults, cache, concurrency, budget."""

from __future__ import annotations

import json

from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.runlog.files import read_events
from skate.runner import run_game
from tests.conftest import REQUIRED_SANDBOXES  # noqa: F401  (same sandbox rules as every game)
from tests.llm.conftest import SKILLS, llm_config


def kinds(events, kind):
    return [e for e in events if e["event"] == kind]


def strip_volatile(events):
    out = []
    for e in events:
        e = {k: v for k, v in e.items() if k not in ("ts", "usage")}
        if "summary" in e:
            e["summary"] = {k: v for k, v in e["summary"].items() if k not in ("elapsed_s", "usage")}
        out.append(e)
    return out


def test_llm_players_play_a_whole_game(server, tmp_path):
    cfg = llm_config(server.api_base, tmp_path / "cache", {"estimator.n": 10, "game.rounds": 4, "report": True})
    result = run_game(cfg, tmp_path / "run")
    assert [r["player"] for r in result.table] == ["ace", "mid", "low"]  # the fake skills' order
    events = read_events(tmp_path / "run")
    start = events[0]
    assert start["event"] == "run_start"
    assert {p["name"]: p["model"] for p in start["players"]} == {n: f"openai/{n}" for n in SKILLS}
    assert len(kinds(events, "task")) == 12 and kinds(events, "run_end")
    assert all(e["n"] == 10 and e["void"] == 0 for e in kinds(events, "estimate"))
    usage = json.loads((tmp_path / "run" / "usage.json").read_text())
    total = usage["total"]
    assert total["calls"] == server.stats.requests > 0
    assert total["samples"] == 12 + 12 * 3 * 10  # one per setting attempt, ten per estimate
    assert total["prompt_tokens"] > 0 and total["completion_tokens"] > 0
    assert set(usage["players"]) == set(SKILLS)
    assert "usage" in kinds(events, "round_end")[-1]
    page = (tmp_path / "run" / "report" / "index.html").read_text()
    assert "cost_per_player.png" in page and "Model usage and cost" in page


def test_faults_are_retried_or_void_and_never_count_as_losses(tmp_path):
    models = {
        "ace": FakeModel(
            0.9, {"rate_limit": 0.1, "server_error": 0.1, "malformed": 0.05, "slow": 0.03, "no_option": 0.1}
        ),
        "mid": FakeModel(0.6),
        "low": FakeModel(0.3, {"down": 1.0}),
    }
    with FakeLLMServer(models, retry_after_s=0.01, slow_s=1.0) as srv:
        # llm.outage_wait_s=0: a model down all game is void, not waited for (tests/llm/test_outage*.py)
        cfg = llm_config(
            srv.api_base, tmp_path / "cache", {"llm.max_retries": 3, "llm.outage_wait_s": 0}, each={"timeout_s": 0.3}
        )
        result = run_game(cfg, tmp_path / "run")
        faults = dict(srv.stats.by_fault)
    events = read_events(tmp_path / "run")
    assert kinds(events, "run_end")  # the game completed
    assert {"rate_limit", "server_error", "malformed", "no_option", "down"} <= set(faults)
    # The model that is down: every call void, every attempt void, no estimate, no rating game.
    low_attempts = [a for a in kinds(events, "attempt") if a["player"] == "low"]
    assert low_attempts and all(a["reason"] == "void" for a in low_attempts)
    low_estimates = [e for e in kinds(events, "estimate") if e["player"] == "low"]
    assert low_estimates and all(e["p"] is None and e["n"] == 0 and e["void"] > 0 for e in low_estimates)
    assert all("low" not in r["state"]["mu"] for r in kinds(events, "rated"))
    low_row = next(r for r in result.table if r["player"] == "low")
    assert (low_row["mu"], round(low_row["sigma"], 3)) == (25.0, 8.333)
    voids = kinds(events, "llm_void")
    assert voids and {v["kind"] for v in voids if v["player"] == "low"} == {"server"}
    # The flaky model: retried through its faults; replies naming no option are wrong, not void.
    ace = [e for e in kinds(events, "estimate") if e["player"] == "ace"]
    assert all(e["n"] > 0 for e in ace)
    assert sum(e["unparsable"] for e in ace) > 0
    usage = result.summary.usage["players"]
    assert usage["ace"]["retries"] > 0 and usage["mid"]["void"] == 0
    # Every valid task was rated between the players that answered it.
    tasks = kinds(events, "task")
    rated = kinds(events, "rated")  # one pair (ace, mid) per task
    assert [r["task_id"] for r in rated] == [t["task_id"] for t in tasks]
    assert all(r["updates"] == 1 and list(r["state"]["mu"]) == ["ace", "mid"] for r in rated)


def test_a_finished_run_replays_from_the_cache_without_a_model_call(tmp_path):
    with FakeLLMServer({n: FakeModel(s) for n, s in SKILLS.items()}) as srv:
        cfg = llm_config(srv.api_base, tmp_path / "cache")
        run_game(cfg, tmp_path / "first")
        first_requests = srv.stats.requests
        second = run_game(cfg, tmp_path / "second")
        assert srv.stats.requests == first_requests  # not one request more
        assert second.summary.usage["total"]["cached"] == second.summary.usage["total"]["samples"]
        assert strip_volatile(read_events(tmp_path / "first")) == strip_volatile(read_events(tmp_path / "second"))
        off = run_game(llm_config(srv.api_base, tmp_path / "cache", {"llm.cache": False}), tmp_path / "third")
        assert srv.stats.requests == 2 * first_requests and off.summary.usage["total"]["cached"] == 0


def test_errors_are_never_cached(tmp_path):
    models = {"ace": FakeModel(0.9, {"down": 1.0}), "mid": FakeModel(0.6)}
    with FakeLLMServer(models) as srv:
        cfg = llm_config(
            srv.api_base, tmp_path / "cache", {"llm.max_retries": 0, "llm.outage_wait_s": 0}, names=("ace", "mid")
        )
        run_game(cfg, tmp_path / "a")
        srv.brain.models["ace"] = FakeModel(0.9)  # the model comes back
        before = srv.stats.by_model.get("ace", 0)
        again = run_game(cfg, tmp_path / "b")
        assert srv.stats.by_model["ace"] > before
        assert again.summary.usage["players"]["ace"]["void"] == 0


def test_calls_overlap_up_to_the_concurrency_limit(tmp_path):
    with FakeLLMServer({n: FakeModel(s) for n, s in SKILLS.items()}, latency_s=0.05) as srv:
        run_game(llm_config(srv.api_base, tmp_path / "c", {"llm.concurrency": 4, "game.rounds": 1}), tmp_path / "r")
        assert 2 <= srv.stats.max_in_flight <= 4
    with FakeLLMServer({n: FakeModel(s) for n, s in SKILLS.items()}, latency_s=0.05) as srv:
        run_game(llm_config(srv.api_base, tmp_path / "d", {"llm.concurrency": 1, "game.rounds": 1}), tmp_path / "s")
        assert srv.stats.max_in_flight == 1


def test_a_budget_stops_the_run_cleanly(tmp_path):
    with FakeLLMServer({n: FakeModel(s) for n, s in SKILLS.items()}) as srv:
        prices = {n: {"input_per_mtok": 100.0, "output_per_mtok": 100.0} for n in SKILLS}  # added to llm.prices' own
        cfg = llm_config(
            srv.api_base, tmp_path / "cache", {"game.rounds": 20, "llm.budget_usd": 5, "llm.prices": prices}
        )
        result = run_game(cfg, tmp_path / "run")
    events = read_events(tmp_path / "run")
    stopped = kinds(events, "run_stopped")
    assert stopped and "BudgetExceeded" in stopped[0]["reason"]
    assert kinds(events, "run_end") and result.summary.stopped is not None
    assert result.summary.usage["total"]["cost_usd"] >= 5
    completed = kinds(events, "round_end")
    assert 1 <= len(completed) < 20
    # Ratings come only from completed rounds.
    rated = {r["task_id"] for r in kinds(events, "rating")}
    in_completed = {t["task_id"] for t in kinds(events, "task") if t["round"] <= len(completed)}
    assert rated <= in_completed
    assert (tmp_path / "run" / "ratings.json").exists()

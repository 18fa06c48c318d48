"""Whole games of reasoning models on the loopback fake server, one of each kind a provider
returns: OpenAI's rules (a model no table knows: its refusals learnt), thinking in
``reasoning_content`` and in ``reasoning``, and thinking inline in ``<think>`` holding decoys;
then Anthropic's and Gemini's APIs through LiteLLM's own clients; and a budget their thinking
spends, resumed with a larger one."""

from __future__ import annotations

import collections
import json

import pytest

import skate
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.players.config import LLMPlayerConfig
from skate.runlog.files import read_events
from skate.runner import resume_settings, run_game
from tests.conftest import REQUIRED_SANDBOXES  # noqa: F401  (same sandbox rules as every game)

# The inline thinker is the strongest: read from inside its thinking, it would rank last.
KINDS = {
    "house": ("openai", FakeModel(0.55, thinking="hidden", rules="openai_reasoning")),
    "deep": ("hosted_vllm", FakeModel(0.75, thinking="reasoning_content")),
    "parsed": ("hosted_vllm", FakeModel(0.35, thinking="reasoning")),
    "r1": ("hosted_vllm", FakeModel(0.95, thinking="inline")),
}


def cohort(base, entries, **extra):
    return [
        LLMPlayerConfig(name=n, model=f"{p}/{m}", api_base=base, api_key_env="SKATE_FAKE_KEY", **extra)
        for n, p, m in entries
    ]


def game(base, cache, entries, values=None, **extra):
    return skate.config(
        values={
            "game.rounds": 4,
            "report": False,
            "players.simulated": [],
            "players.llm": cohort(base, entries, **extra),
            "estimator.n": 4,
            "llm.cache_dir": str(cache),
            "llm.backoff_s": 0.01,
            "llm.max_backoff_s": 0.05,
            **(values or {}),
        },
        logger="none",
        estimator="fixed_n",
    )


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("SKATE_FAKE_KEY", "k")


def of(events, kind):
    return [e for e in events if e["event"] == kind]


def played(tmp_path, name, models, entries):
    with FakeLLMServer(models) as srv:
        result = run_game(game(srv.api_base, tmp_path / f"{name}-cache", entries), tmp_path / name)
        stats = srv.stats
    return result, read_events(tmp_path / name), stats


def test_four_kinds_of_reasoning_model_play_right(tmp_path):
    entries = [(n, p, n) for n, (p, _) in KINDS.items()]
    result, events, stats = played(tmp_path, "run", {n: m for n, (_, m) in KINDS.items()}, entries)
    assert [r["player"] for r in result.table] == ["r1", "deep", "house", "parsed"]  # the skills' order
    usage = json.loads((tmp_path / "run" / "usage.json").read_text())
    assert usage["total"]["void"] == 0 and not of(events, "llm_void")
    # The model with OpenAI's rules: each parameter refused once (max_tokens, temperature, stop), never again.
    adjusted = collections.Counter((e["model"], e["param"]) for e in of(events, "llm_adjusted"))
    assert set(adjusted) == {("openai/house", "max_tokens"), ("openai/house", "temperature"), ("openai/house", "stop")}
    assert max(adjusted.values()) == 1 and stats.refused_param == 3
    house = next(p for p in events[0]["players"] if p["name"] == "house")
    assert house["temperature"] == 1.0 and house["temperature_asked"] == 0.7
    # Thinking counted apart, for every kind (the inline thinker's as its share of what it wrote).
    per = usage["players"]
    assert all(per[n]["thinking_tokens"] > 0.5 * per[n]["completion_tokens"] for n in KINDS)
    assert abs(usage["total"]["thinking_tokens"] - stats.thinking_tokens) < 0.05 * stats.thinking_tokens
    kept = [json.loads(line) for line in (tmp_path / "run" / "thinking.jsonl").read_text().splitlines()]
    assert {x["player"] for x in kept} == {"deep", "parsed", "r1"}  # OpenAI's keep theirs hidden
    assert all("Draft:" in x["thinking"] and "Draft:" not in x["answer"] for x in kept)

    # The inline thinker sets and answers exactly as the same model that does not think: no decoy is read.
    twin = {**{n: m for n, (_, m) in KINDS.items()}, "r1": FakeModel(0.95)}
    _, plain, _ = played(tmp_path, "plain", twin, entries)
    assert [(t["task_id"], t["setter"]) for t in of(plain, "task")] == [
        (t["task_id"], t["setter"]) for t in of(events, "task")
    ]
    assert [(e["task_id"], e["p"]) for e in of(plain, "estimate") if e["player"] == "r1"] == [
        (e["task_id"], e["p"]) for e in of(events, "estimate") if e["player"] == "r1"
    ]
    assert sum(t["setter"] == "r1" for t in of(events, "task")) == 4


@pytest.mark.parametrize("provider", ["anthropic", "gemini"])
def test_anthropic_and_gemini_models_think_through_litellm(provider, tmp_path):
    names = {
        "anthropic": ["claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-5"],
        "gemini": ["gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite"],
    }[provider]
    models = {n: FakeModel(s, thinking="reasoning_content") for n, s in zip(names, (0.9, 0.6, 0.3), strict=False)}
    with FakeLLMServer(models) as srv:
        base = srv.api_base.removesuffix("/v1") if provider == "anthropic" else srv.api_base
        setting = {"thinking_budget": 2048} if provider == "anthropic" else {"reasoning_effort": "low"}
        settings = game(base, tmp_path / "cache", [(n, provider, n) for n in names], {"game.rounds": 3}, **setting)
        result = run_game(settings, tmp_path / "run")
        assert getattr(srv.stats, provider) == srv.stats.requests > 0 and srv.stats.refused_param == 0
    events = read_events(tmp_path / "run")
    assert [r["player"] for r in result.table] == names
    total = result.summary.usage["total"]
    assert total["void"] == 0 and total["thinking_tokens"] > 0.5 * total["completion_tokens"] and total["cost_usd"] > 0
    if provider == "anthropic":  # extended thinking runs at temperature 1, with max_tokens above the budget
        assert all(p["temperature"] == 1.0 and p["max_tokens"] == 2048 + 4096 for p in events[0]["players"])


def test_a_budget_spent_by_thinking_stops_the_run_and_a_larger_one_completes_the_same_game(tmp_path):
    names = [
        ("mini", "openai", "gpt-5-mini"),
        ("reasoner", "deepseek", "deepseek-reasoner"),
        ("o4", "openai", "o4-mini"),
    ]
    models = {
        "gpt-5-mini": FakeModel(0.9, thinking="hidden", rules="openai_reasoning", thinking_tokens=1500),
        "deepseek-reasoner": FakeModel(0.6, thinking="reasoning_content", thinking_tokens=1500),
        "o4-mini": FakeModel(0.3, thinking="hidden", rules="openai_reasoning", thinking_tokens=1500),
    }
    with FakeLLMServer(models) as srv:
        whole = run_game(game(srv.api_base, tmp_path / "c1", names), tmp_path / "whole")
        cost = whole.summary.usage["total"]["cost_usd"]
        stopped = run_game(
            game(srv.api_base, tmp_path / "c2", names, {"llm.budget_usd": float(f"{cost / 3:.6f}")}), tmp_path / "run"
        )
        assert stopped.summary.stopped and "Budget" in stopped.summary.stopped
        spent = stopped.summary.usage["total"]
        assert spent["thinking_tokens"] > 0.5 * spent["completion_tokens"] and spent["cost_usd"] >= cost / 3
        resumed = run_game(
            resume_settings(tmp_path / "run", {"llm.budget_usd": round(cost * 3, 6)}), tmp_path / "run", resume=True
        )
    assert resumed.summary.stopped is None

    def game_events(folder):
        return [
            {k: v for k, v in e.items() if k not in ("ts", "usage", "summary")}
            for e in read_events(folder)
            if e["event"] not in ("run_start", "run_stopped", "llm_adjusted", "llm_void", "run_end")
        ]

    assert game_events(tmp_path / "run") == game_events(tmp_path / "whole")
    assert [(r["player"], r["score"]) for r in resumed.table] == [(r["player"], r["score"]) for r in whole.table]

"""``skate play ... --estimate``: a game's cost per model before it is played, calling no model;
from the counts of earlier runs where the models have played (within 30% of what the fake
server then counts, on two estimators), typical counts otherwise, and said which."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import skate
from skate.llm.counts import counts_path, entries
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.players.config import LLMPlayerConfig
from skate.runner import run_game
from skate.tools.estimate import estimate, expected_samples
from tests.conftest import REQUIRED_SANDBOXES  # noqa: F401  (same sandbox rules as every game)

FAKE = {
    "house": FakeModel(0.85, thinking="hidden", rules="openai_reasoning", thinking_tokens=600),
    "deep": FakeModel(0.6, thinking="reasoning_content", thinking_tokens=600),
    "r1": FakeModel(0.35, thinking="inline", thinking_tokens=600),
}


def settings(base, cache, values=None, **choices):
    llm = [
        LLMPlayerConfig(
            name=n,
            model=f"{'openai' if m.rules else 'hosted_vllm'}/{n}",
            api_base=base,
            api_key_env="SKATE_TEST_NO_KEY",
        )
        for n, m in FAKE.items()
    ]
    return skate.config(
        values={
            "report": False,
            "players.simulated": [],
            "players.llm": llm,
            "llm.cache_dir": f"{cache}/responses",
            "game.rounds": 3,
            **(values or {}),
        },
        **{"logger": "none", **choices},
    )


@pytest.mark.parametrize(
    ("estimator", "values"),
    [
        ("fixed_n", {"estimator.n": 6}),
        ("algorithm1", {"estimator.sigma_star": 0.12, "estimator.n_step": 4, "estimator.max_samples": 24}),
    ],
)
def test_the_estimate_of_models_that_have_played_is_within_30_percent(estimator, values, tmp_path):
    with FakeLLMServer(FAKE) as srv:
        run_game(settings(srv.api_base, tmp_path, {"seed": 0, **values}, estimator=estimator), tmp_path / "first")
        kept = list(entries(counts_path(tmp_path / "responses")))
        later = settings(srv.api_base, tmp_path, {"seed": 1, **values}, estimator=estimator)
        guess = estimate(later)
        st = srv.stats
        before = (st.requests, st.prompt_tokens, st.completion_tokens, st.thinking_tokens)
        run_game(later, tmp_path / "second")
        counted = [
            b - a
            for a, b in zip(
                before, (st.requests, st.prompt_tokens, st.completion_tokens, st.thinking_tokens), strict=False
            )
        ]
    assert {e["model"] for e in kept} == {"openai/house", "hosted_vllm/deep", "hosted_vllm/r1"}
    assert all(m.tokens_from.startswith("1 earlier run") for m in guess.models)
    guessed = [
        sum(getattr(m, k) for m in guess.models)
        for k in ("calls", "prompt_tokens", "completion_tokens", "thinking_tokens")
    ]
    for g, c in zip(guessed, counted, strict=False):
        assert 0.7 * c <= g <= 1.3 * c, (guessed, counted)


def skate_command(*args, cwd):
    return subprocess.run([sys.executable, "-m", "skate", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_the_estimate_of_hosted_models_needs_no_key_and_calls_nothing(tmp_path):
    llm = (
        "players.llm=[{name: g5, model: openai/gpt-5-mini}, {name: opus, model: anthropic/claude-opus-4-5, "
        "thinking_budget: 4000}, {name: mine, model: openai/my-own-model}, "
        "{name: box, model: hosted_vllm/qwen3, api_base: 'http://127.0.0.1:9/v1'}]"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "skate",
            "--estimate",
            "players.simulated=[]",
            llm,
            f"llm.cache_dir={tmp_path}/responses",
            "game.rounds=10",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "no model called" in out and "10 rounds, 4 players" in out
    rows = {
        line.split()[0]: line.split()
        for line in out.splitlines()
        if line.split()[:1] in (["g5"], ["opus"], ["mine"], ["box"])
    }
    assert float(rows["g5"][-1].replace(",", "")) > 0 and float(rows["opus"][-1].replace(",", "")) > 0
    assert rows["mine"][-1] == "?" and rows["box"][-1] == "0.00"  # no price anywhere; a local server costs nothing
    assert float(rows["box"][-2].replace(",", "")) == 0 and float(rows["opus"][-2].replace(",", "")) > 0  # thinking
    assert "typical counts for cop" in out and "no price for that model" in out
    assert not counts_path(tmp_path / "responses").exists()  # nothing was played


def test_an_estimate_of_a_config_that_cannot_play_says_why_in_one_line(tmp_path):
    res = skate_command("--estimate", "game.rounds=0", cwd=tmp_path)
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "game.rounds" in res.stderr
    res = skate_command("--estimate", cwd=tmp_path)  # the simulated cohort calls no model
    assert res.returncode == 0 and "costs nothing" in res.stdout


def test_the_estimator_s_own_samples_per_estimate(tmp_path):
    def per(values=None, **choices):
        return expected_samples(skate.config(values=values, **choices), 6)

    assert per({"estimator.n": 20}, estimator="fixed_n") == 20 and per(estimator="greedy") == 1
    algorithm1 = per()  # the paper's: about p(1-p)/0.05^2 over p spread on [0, 1], in tens, at least 10
    assert 55 <= algorithm1 <= 80
    assert per(estimator="decided") < algorithm1 and per(experiment="fewer_calls") <= 6


def test_a_run_keeps_each_model_s_counts_beside_the_cache(tmp_path):
    with FakeLLMServer(FAKE) as srv:
        run_game(
            settings(srv.api_base, tmp_path, {"estimator.n": 2, "game.rounds": 1}, estimator="fixed_n"), tmp_path / "r"
        )
    kept = {e["model"]: e for e in entries(counts_path(tmp_path / "responses"))}
    house = kept["openai/house"]
    assert house["game"] == "cop" and house["estimator"] == "fixed_n" and house["rounds"] == 1 and house["players"] == 3
    assert house["set"]["calls"] >= 1 and house["answer"]["thinking_tokens"] > 0


def test_the_frontier_cohort_names_reasoning_models_litellm_knows_and_plays_adaptive(monkeypatch):
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY"):
        monkeypatch.setenv(var, "k")
    s = skate.config(players="frontier")
    assert type(s.estimator).__name__ == "AdaptiveConfig"
    assert {c.model.split("/")[0] for c in s.players.llm} == {"openai", "anthropic", "gemini", "deepseek", "xai"}
    guess = estimate(s)
    assert all(
        m.usd and m.usd > 0 and m.thinking_tokens > 0 and m.price_from == "LiteLLM's model map" for m in guess.models
    )
    # the paper's cohort is as it was
    assert type(skate.config(players="paper_six").estimator).__name__ == "Algorithm1Config"


def test_a_hosted_reasoning_cohort_with_no_budget_is_told_how_to_see_its_cost(monkeypatch, caplog):
    from types import SimpleNamespace

    from skate.players.config import spec_of_config
    from skate.settings.build import _say_what_thinking_costs

    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY"):
        monkeypatch.setenv(var, "k")
    for choices, values, said in (
        ({"estimator": "algorithm1"}, {}, "estimator=algorithm1 asks more"),
        ({}, {}, "--estimate"),
        ({}, {"llm.budget_usd": 5}, None),
    ):
        s = skate.config(values=values, players="frontier", **choices)
        players = [SimpleNamespace(name=c.name, spec=spec_of_config(c)) for c in s.players.llm]
        caplog.clear()
        with caplog.at_level("WARNING", logger="skate.settings.build"):
            _say_what_thinking_costs(s, players)
        lines = [r.getMessage() for r in caplog.records]
        assert (said in lines[0] and len(lines) == 1) if said else not lines

"""estimator=logprobs against the fake server, which serves log-probabilities: one call per
(player, task), p(correct) read from the labels' probabilities, the same as sampling would find,
and every way a read cannot be made falling back to sampling with one line per model."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

import skate
from skate.errors import ConfigError
from skate.estimators.base import Sampler
from skate.games.base import GameEnv
from skate.games.cop.rules import COPGame
from skate.llm import LLMClient, ModelSpec, RetryPolicy
from skate.llm.choices import ChoiceRead
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.players.config import SimPlayerConfig
from skate.players.llm import LLMPlayer
from skate.runlog.files import read_events
from skate.runlog.records import Task
from skate.runner import run_game
from tests.conftest import REQUIRED_SANDBOXES  # noqa: F401  (same sandbox rules as every game)
from tests.llm.conftest import llm_players


def logprobs_config(base, cache_dir, values=None, names=("ace", "mid", "low"), each=None):
    return skate.config(
        values={
            "report": False,
            "players.simulated": [],
            "players.llm": llm_players(base, names, **(each or {})),
            "llm.cache_dir": str(cache_dir),
            "llm.backoff_s": 0.01,
            "llm.max_backoff_s": 0.05,
            "llm.preflight": False,
            **(values or {}),
        },
        estimator="logprobs",
        logger="none",
    )


def _game(tmp_path, models, values=None, rounds=2):
    with FakeLLMServer(models) as srv:
        run = tmp_path / "run"
        cfg = logprobs_config(
            srv.api_base, tmp_path / "cache", {"game.rounds": rounds, **(values or {})}, names=tuple(models)
        )
        run_game(cfg, run)
        return srv, run, read_events(run)


def test_one_call_per_player_and_task_and_every_estimate_read(tmp_path):
    models = {"ace": FakeModel(0.9), "mid": FakeModel(0.6), "low": FakeModel(0.3)}
    srv, run, events = _game(tmp_path, models, rounds=3)
    estimates = [e for e in events if e["event"] == "estimate"]
    tasks = [e for e in events if e["event"] == "task"]
    attempts = [e for e in events if e["event"] == "attempt"]
    assert tasks and len(estimates) == 3 * len(tasks)
    assert all(e["read"] is True and e["n"] == 4 and 0 <= e["p"] <= 1 for e in estimates)
    assert all(e["correct"] == pytest.approx(4 * e["p"]) for e in estimates)
    # every request was a setter's attempt or one read: one call per (player, task), n = 1
    assert srv.stats.requests == len(attempts) + len(estimates)
    assert all(entry["n"] == 1 for entry in srv.log)
    end = events[-1]["summary"]
    assert end["read_estimates"] == len(estimates) and end["samples"] == 0
    usage = json.loads((run / "usage.json").read_text())["players"]
    assert sum(u["calls"] for u in usage.values()) == srv.stats.requests
    # the better model reads as more often right, on average over the tasks
    mean = {m: np.mean([e["p"] for e in estimates if e["player"] == m]) for m in models}
    assert mean["ace"] > mean["mid"] > mean["low"]


def _cop_task(game: COPGame) -> Task:
    program = "xs = [3, 1, 2]\nys = xs\nys.sort()\nprint(xs)"
    return Task(
        task_id="r001-x",
        round=1,
        setter="x",
        prompt=program,
        answer="[1, 2, 3]",
        data={
            "distractors": [
                "[3, 1, 2]",
                "[2, 1, 3]",
                "[1, 2]",
                "None",
                "[3, 2, 1]",
                "[]",
                "[1, 3, 2]",
                "(1, 2, 3)",
                "[1]",
            ]
        },
    )


@pytest.mark.parametrize("skill", [0.9, 0.5])
def test_a_read_agrees_with_the_frequency_of_200_samples(skill):
    """The same player, the same task: p(correct) read in one call and the share right of 200
    sampled answers (fresh option orders) differ by sampling noise only."""
    game = COPGame()
    modules = game.modules(GameEnv(sandbox=None))  # type: ignore[arg-type]
    with FakeLLMServer({"m": FakeModel(skill)}) as srv:
        spec = ModelSpec("openai/m", api_base=srv.api_base, api_key_env="SKATE_TEST_NO_KEY")
        player = LLMPlayer("m", spec, LLMClient(retry=RetryPolicy(max_retries=0)), modules)
        task = _cop_task(game)
        assert game.config.n_options == 4  # 3 of the 9 wrong answers each time
        sampler = Sampler(game, task, player.answer, read_choices=player.read_choices)
        got = sampler.read(np.random.default_rng(0))
        before = srv.stats.requests
        correct, unparsable, void = sampler(200, np.random.default_rng(1))
    assert got.p is not None and unparsable == void == 0
    assert abs(got.p - correct / 200) < 0.1
    assert before == 1


def test_with_several_orders_a_model_that_always_picks_the_first_label_reads_its_share_not_all_or_nothing():
    """A model whose reads put all their probability on label A (a position bias): one order
    reads 1 or 0 as the right option falls first or not; eight orders (each drawn from the task
    alone, the first the same) read the share of them in which it falls first."""
    game = COPGame()
    task = _cop_task(game)
    asked = []

    def first_label(queries, rng, min_mass=0.5):
        asked.extend(queries)
        return [ChoiceRead(probs=(1.0, 0.0, 0.0, 0.0)) for _ in queries]

    sampler = Sampler(game, task, lambda qs, rng: [0] * len(qs), read_choices=first_label)
    one = sampler.read(np.random.default_rng(0)).p
    eight = sampler.read(np.random.default_rng(0), orders=8).p
    assert one in (0.0, 1.0)
    assert len(asked) == 9 and asked[1] == asked[0] and len(set(asked[1:])) > 1  # the first order is the one read alone
    firsts = [game.grade(task, q, 0) for q in asked[1:]]
    assert eight == pytest.approx(sum(firsts) / 8) and 0 < eight < 1


def test_a_game_with_several_orders_makes_that_many_reads_per_player_and_task(tmp_path):
    models = {"ace": FakeModel(0.9), "low": FakeModel(0.3)}
    srv, run, events = _game(tmp_path, models, {"estimator.orders": 3}, rounds=2)
    estimates = [e for e in events if e["event"] == "estimate"]
    attempts = [e for e in events if e["event"] == "attempt"]
    assert estimates and all(e["read"] is True and e["n"] == 4 for e in estimates)
    assert srv.stats.requests == len(attempts) + 3 * len(estimates)


@pytest.mark.parametrize(
    "fault, says",
    [
        ("no_logprobs", "the provider gave no log-probabilities"),
        ("refuse_logprobs", "the provider refused log-probabilities"),
        ("few_logprobs", "is not among the 2 alternatives"),
        ("chatty", "does not start with a label"),
    ],
)
def test_what_cannot_be_read_is_sampled_and_said_once_per_model(fault, says, tmp_path, caplog):
    models = {"ace": FakeModel(0.9), "odd": FakeModel(0.6, {fault: 1.0})}
    with caplog.at_level(logging.WARNING, logger="skate.players.llm"):
        srv, run, events = _game(tmp_path, models, {"estimator.fallback": 3})
    estimates = [e for e in events if e["event"] == "estimate"]
    odd = [e for e in estimates if e["player"] == "odd"]
    assert odd and all(e["read"] is False and e["n"] == 3 for e in odd)
    assert all(e["read"] is True for e in estimates if e["player"] == "ace")
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("odd (openai/odd)")]
    assert len(lines) == 1 and says in lines[0] and "sampled instead" in lines[0]
    if fault in (
        "no_logprobs",
        "refuse_logprobs",
    ):  # not asked again once known: the reads of round 1 (at once), then samples only
        reads = [entry for entry in srv.log if entry["model"] == "odd" and entry["max_tokens"] == 4]
        first_round = [e for e in events if e["event"] == "task" and e["round"] == 1]
        assert 1 <= len(reads) <= len(first_round) < len(odd)


def test_a_failed_read_is_void_never_wrong(tmp_path):
    models = {"ace": FakeModel(0.9), "dead": FakeModel(0.6, {"down": 1.0})}
    _, _, events = _game(tmp_path, models, {"llm.max_retries": 0, "llm.outage_wait_s": 0})  # void, not waited for
    dead = [e for e in events if e["event"] == "estimate" and e["player"] == "dead"]
    assert dead and all(e["p"] is None and e["void"] == 1 and e["n"] == 0 for e in dead)


def test_simulated_players_are_sampled_beside_read_models(tmp_path):
    with FakeLLMServer({"ace": FakeModel(0.9)}) as srv:
        cfg = logprobs_config(
            srv.api_base,
            tmp_path / "cache",
            {"game.rounds": 2, "players.simulated": [SimPlayerConfig(name="sim", skill=0.5)]},
            names=("ace",),
        )
        run_game(cfg, tmp_path / "run")
    estimates = [e for e in read_events(tmp_path / "run") if e["event"] == "estimate"]
    assert {e["read"] for e in estimates if e["player"] == "sim"} == {False}
    assert {e["read"] for e in estimates if e["player"] == "ace"} == {True}


@pytest.mark.parametrize(
    "choices, values, says",
    [
        ({"game": "mathquiz"}, {}, "answers are exact_match, not an option"),
        ({"game": "pyjail"}, {}, "answers are executed, not an option"),
        ({}, {"game.reasoning": True}, "game.reasoning=true asks for the working first"),
        ({}, {"estimator.weight": 0}, "estimator.weight=0 is invalid"),
        ({}, {"estimator.min_mass": 1.5}, "must lie in (0, 1]"),
        ({}, {"estimator.orders": 0}, "estimator.orders=0 is invalid: give the reads per (player, task), from 1 to 24"),
    ],
)
def test_where_it_does_not_apply_the_config_says_so(choices, values, says):
    with pytest.raises(ConfigError, match=says.replace("(", r"\(").replace(")", r"\)").replace("]", r"\]")):
        skate.config(values=values, estimator="logprobs", **choices)


def test_setter_extra_body_goes_with_setting_requests_only(tmp_path):
    """players.llm's setter_extra_body (the local cohort's repeat penalty) is sent with each setting
    request, never with an answer or a read."""
    with FakeLLMServer({"ace": FakeModel(0.9), "mid": FakeModel(0.5)}) as srv:
        cfg = logprobs_config(
            srv.api_base,
            tmp_path / "cache",
            {"game.rounds": 1},
            names=("ace", "mid"),
            each={"setter_extra_body": {"repeat_penalty": 1.1}},
        )
        run_game(cfg, tmp_path / "run")
    setting = [e for e in srv.log if e["max_tokens"] != 4]
    reading = [e for e in srv.log if e["max_tokens"] == 4]
    assert setting and all("repeat_penalty" in e["fields"] and "stop" in e["fields"] for e in setting)
    assert reading and not any("repeat_penalty" in e["fields"] for e in reading)


def test_a_model_biased_to_the_first_label_reads_all_or_nothing_with_one_order_and_between_with_eight(tmp_path):
    """``first_label``: a read of one order is decided by where the right option falls; eight
    orders spread the bias as sampling would."""

    def reads(orders):
        models = {"ace": FakeModel(0.9), "biased": FakeModel(0.5, {"first_label": 1.0})}
        _, _, events = _game(tmp_path / f"o{orders}", models, {"estimator.orders": orders}, rounds=2)
        return [e["p"] for e in events if e["event"] == "estimate" and e["player"] == "biased"]

    one, eight = reads(1), reads(8)
    assert one and all(p < 0.15 or p > 0.85 for p in one)
    assert any(0.15 < p < 0.85 for p in eight)

"""Prompt optimisation (issue 13, :mod:`skate.optimize`): DSPy's optimisers compile each language-model
player's modules through the bridge (:class:`skate.llm.bridge.SkateLM`) against the fake server on
loopback, before the game; the compiled programs are saved, reused and keyed on everything that
shapes them; their calls are the run's usage and obey its budget; the config is checked up front.

MathQuiz throughout (no sandboxed code), with small training sets, one round and two samples per
estimate, so that the file stays fast. The fake model ``low`` has skill 0.1 and a demo gain of
0.8: a request that carries few-shot demonstrations is played with skill 0.9, so optimising its
answerer must lift the metric.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

import skate
import skate.llm  # environment defaults before dspy is imported

# isort: split
import dspy
import numpy as np
import pytest

from skate.embedders import HashingEmbedder, NoveltyIndex
from skate.errors import ConfigError
from skate.games.base import GameEnv
from skate.games.mathquiz.generator import KINDS, generate_question, solve
from skate.games.mathquiz.modules import MathQuizSetter
from skate.games.mathquiz.rules import MathQuizGame
from skate.llm.fake_replies import count_demos
from skate.llm.fake_server import FakeLLMServer, FakeModel, read_request
from skate.optimize.config import Plan, compare_table, plans
from skate.optimize.items import render_prediction, setter_items, setter_metric
from skate.optimize.programs import OPTIMIZE_SUFFIX, ProgramStore
from skate.optimize.standalone import run_optimize
from skate.runlog.files import read_events
from skate.runner import run_game
from skate.settings.options import composed
from tests.llm.conftest import llm_config

MODELS = {"ace": FakeModel(0.9), "mid": FakeModel(0.6), "low": FakeModel(0.1, demo_gain=0.8)}


class MessageServer(FakeLLMServer):
    """The fake server, keeping every answered request's model and full message list."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.requests: list[tuple[str, list[dict[str, Any]]]] = []
        lock = threading.Lock()
        reply = self.brain.reply

        def record(name: str, messages: list[dict[str, Any]], seed: int, index: int) -> str:
            if index == 0:
                with lock:
                    self.requests.append((name, messages))
            return reply(name, messages, seed, index)

        self.brain.reply = record  # type: ignore[method-assign]


# optimizer.players.mid.name=none: mid keeps its prompts
MID_AS_IT_IS = {"optimizer.players.mid.name": "none"}


def config(
    srv: FakeLLMServer,
    root: Path,
    values: dict[str, Any] | None = None,
    *,
    optimizer: str = "bootstrap_fewshot",
    names: tuple[str, ...] = ("ace", "mid", "low"),
    cache: str = "cache",
    store: str = "programs",
    each: dict[str, Any] | None = None,
    **choices: str,
):
    """A small MathQuiz run (``game``: another) of fake models whose prompt store and response cache
    live in ``root``, as settings (no preflight call: the tests count the server's requests);
    ``values`` over its own, ``each``: keys every player gets."""
    return llm_config(
        srv.api_base,
        root / cache,
        {
            "game.rounds": 1,
            "estimator.n": 2,
            "llm.preflight": False,
            "optimizer.train": 8,
            "optimizer.val": 8,
            "optimizer.store": str(root / store),
            **(values or {}),
        },
        names=names,
        each=each,
        **{"game": "mathquiz", "estimator": "fixed_n", "optimizer": optimizer, **choices},
    )


def events_of(run: Path, kind: str) -> list[dict[str, Any]]:
    return [e for e in read_events(run) if e["event"] == kind]


def usage_of(run: Path) -> dict[str, Any]:
    return json.loads((run / "usage.json").read_text())


def last_user(messages: list[dict[str, Any]]) -> str:
    return next(str(m["content"]) for m in reversed(messages) if m["role"] == "user")


def answer_requests(srv: MessageServer, question: str) -> list[tuple[str, list[dict[str, Any]]]]:
    """The requests that asked to answer ``question`` (a MathQuiz answerer's only input)."""
    out = []
    for name, messages in srv.requests:
        inputs, _ = read_request(last_user(messages))
        if set(inputs) == {"question"} and inputs["question"].strip() == question.strip():
            out.append((name, messages))
    return out


# ------------------------------------------------------------------- one optimised game, shared
@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """ace and low optimise their answerers with BootstrapFewShot, then all three play one round;
    mid is left as it is (``optimizer.players.mid.name=none``)."""
    root = tmp_path_factory.mktemp("shared")
    with MessageServer(MODELS) as srv:
        cfg = config(srv, root, MID_AS_IT_IS)
        result = run_game(cfg, root / "run1")
        yield {
            "srv": srv,
            "cfg": cfg,
            "root": root,
            "run": root / "run1",
            "result": result,
            "requests": srv.stats.requests,
        }


def test_bootstrap_fewshot_lifts_the_metric_when_demonstrations_help(shared):
    opt = {e["player"]: e for e in events_of(shared["run"], "optimize")}
    assert sorted(opt) == ["ace", "low"]  # mid: name=none
    for e in opt.values():
        assert (e["role"], e["optimizer"], e["model"]) == ("answerer", "bootstrap_fewshot", f"openai/{e['player']}")
        assert (e["train"], e["val"]) == (8, 8) and e["calls"] > 0 and e["demos"] > 0 and e["reused"] is False
        assert e["key"] and not e["stopped"] and e["prompt_tokens"] > 0 and e["completion_tokens"] > 0
        assert 0 <= e["metric_before"] <= 1 and 0 <= e["metric_after"] <= 1
    low = opt["low"]
    # skill 0.1 without demos, 0.9 with them: the held-out metric must rise, and by a lot
    assert low["metric_after"] > low["metric_before"]
    assert low["metric_after"] - low["metric_before"] >= 0.4, low
    # optimisation ran after run_start and before the game's first round
    kinds = [e["event"] for e in read_events(shared["run"])]
    assert kinds.index("run_start") < kinds.index("optimize") < kinds.index("round_start")
    summary = shared["result"].summary
    assert [r["player"] for r in summary.optimization] == ["ace", "low"]
    # the store holds one program per optimised player, under the events' keys
    store = ProgramStore(shared["root"] / "programs")
    for e in opt.values():
        saved = store.load(e["key"])
        assert saved is not None and saved["player"] == e["player"] and saved["role"] == "answerer"
        assert len(saved["state"]["demos"]) == e["demos"]
        assert (saved["metric_before"], saved["metric_after"]) == (e["metric_before"], e["metric_after"])


def test_demonstrations_reach_the_games_answer_requests_of_optimised_players_only(shared):
    srv: MessageServer = shared["srv"]
    tasks = events_of(shared["run"], "task")
    assert tasks
    store = ProgramStore(shared["root"] / "programs")
    opt = {e["player"]: e for e in events_of(shared["run"], "optimize")}
    demo_questions = {p: [d["question"] for d in store.load(e["key"])["state"]["demos"]] for p, e in opt.items()}
    seen = {"ace": 0, "mid": 0, "low": 0}
    for t in tasks:
        for name, messages in answer_requests(srv, t["prompt"]):
            seen[name] += 1
            if name == "mid":
                assert count_demos(messages) == 0, "mid was not optimised: it plays with the default prompt"
            else:
                assert count_demos(messages) == opt[name]["demos"] > 0
                before = "\n".join(str(m["content"]) for m in messages[:-1])
                assert all(q in before for q in demo_questions[name])  # the stored demos, in the request
    assert all(seen.values()), seen  # every player answered game questions


def test_usage_counts_the_optimisation_under_its_own_key_and_in_the_total(shared):
    usage = usage_of(shared["run"])
    opt = {e["player"]: e for e in events_of(shared["run"], "optimize")}
    players = usage["players"]
    assert f"mid{OPTIMIZE_SUFFIX}" not in players
    for name, e in opt.items():
        u = players[f"{name}{OPTIMIZE_SUFFIX}"]
        assert u["calls"] == e["calls"] > 0  # answerer-only: every call of the step is the player's own
        assert u["prompt_tokens"] == e["prompt_tokens"] and u["completion_tokens"] == e["completion_tokens"]
    total = usage["total"]
    assert total["calls"] == sum(u["calls"] for u in players.values()) == shared["requests"]
    assert total["calls"] > sum(e["calls"] for e in opt.values())  # the game's own calls come on top


def test_a_second_identical_run_reuses_every_program_with_no_call(shared):
    srv: MessageServer = shared["srv"]
    root = shared["root"]
    first = {e["player"]: e for e in events_of(shared["run"], "optimize")}
    before = srv.stats.requests
    again = run_game(shared["cfg"], root / "run2")
    # Not one request reached the server: no optimisation call, and every game request was the
    # first run's own (the same messages, demos included), answered by the response cache.
    assert srv.stats.requests == before
    second = {e["player"]: e for e in events_of(root / "run2", "optimize")}
    assert sorted(second) == sorted(first)
    for name, e in second.items():
        assert e["reused"] is True and e["calls"] == 0 and e["prompt_tokens"] == e["completion_tokens"] == 0
        assert e["cost_usd"] == 0 and not e["stopped"]
        for k in ("key", "demos", "train", "val", "metric_before", "metric_after"):
            assert e[k] == first[name][k], k
    players = usage_of(root / "run2")["players"]
    assert all(u["calls"] == 0 for u in players.values())
    assert all(players.get(f"{n}{OPTIMIZE_SUFFIX}", {"calls": 0})["calls"] == 0 for n in first)
    assert again.table == shared["result"].table
    assert len(list((root / "programs").glob("*.json"))) == 2


def test_a_reused_program_with_a_cold_cache_asks_only_game_questions(shared, tmp_path):
    """The same store with an empty response cache: the game's requests reach the server again,
    with the stored demos, but no optimisation request does."""
    srv: MessageServer = shared["srv"]
    root = shared["root"]
    store = ProgramStore(root / "programs")
    first = {e["player"]: e for e in events_of(shared["run"], "optimize")}
    practice = {d["question"] for e in first.values() for d in store.load(e["key"])["state"]["demos"]}
    start = len(srv.requests)
    run_game(config(srv, root, MID_AS_IT_IS, cache=f"cold-{tmp_path.name}"), tmp_path / "run")
    new = srv.requests[start:]
    assert new and all(e["reused"] for e in events_of(tmp_path / "run", "optimize"))
    usage = usage_of(tmp_path / "run")["players"]
    assert not any(k.endswith(OPTIMIZE_SUFFIX) and u["calls"] for k, u in usage.items())
    game_texts = {a["text"].strip() for a in events_of(tmp_path / "run", "attempt")}  # valid or not
    for name, messages in new:
        inputs, _ = read_request(last_user(messages))
        if set(inputs) == {"question"}:  # an answer request (a setter's self-check too): a game question
            assert inputs["question"].strip() in game_texts and inputs["question"] not in practice
            if name == "mid":
                assert count_demos(messages) == 0
            else:  # the program loaded from the store: its demos, in the request
                saved = store.load(first[name]["key"])["state"]["demos"]
                before = "\n".join(str(m["content"]) for m in messages[:-1])
                assert count_demos(messages) == len(saved) and all(d["question"] in before for d in saved)


@pytest.mark.parametrize("damage", ["another version", "not json", "a state DSPy refuses"])
def test_a_stored_program_another_version_wrote_is_compiled_anew_saying_so(shared, tmp_path, caplog, damage):
    """A store file of another format, an unreadable one, or a state the module cannot take: one
    line naming the file, and the program is compiled again (the game is played as before)."""
    import shutil

    srv: MessageServer = shared["srv"]
    store_dir = tmp_path / "programs"
    shutil.copytree(shared["root"] / "programs", store_dir)
    first = {e["player"]: e for e in events_of(shared["run"], "optimize")}
    path = store_dir / f"{first['ace']['key']}.json"
    record = json.loads(path.read_text())
    if damage == "another version":
        path.write_text(json.dumps({k: v for k, v in record.items() if k != "format"}))
    elif damage == "not json":
        path.write_text("{ torn")
    else:
        path.write_text(json.dumps({**record, "state": {"demos": 7}}))
    cfg = config(srv, shared["root"], MID_AS_IT_IS, store=str(store_dir))
    with caplog.at_level("WARNING", logger="skate.optimize"):
        run_game(cfg, tmp_path / "run")
    lines = [r.getMessage() for r in caplog.records if str(path) in r.getMessage()]
    assert len(lines) == 1 and "anew" in lines[0]
    again = {e["player"]: e for e in events_of(tmp_path / "run", "optimize")}
    assert again["ace"]["reused"] is False and again["low"]["reused"] is True
    assert json.loads(path.read_text())["format"] == record["format"]  # written again, whole


def test_an_answerer_whose_answers_are_sessions_is_refused_in_one_line(tmp_path):
    with FakeLLMServer(MODELS) as srv:
        cfg = config(srv, tmp_path, {"optimizer.roles": ["answerer"]}, names=("ace", "mid"), game="pyjail")
        with pytest.raises(ConfigError) as exc:
            run_optimize(cfg, tmp_path / "out")
    assert "optimizer.roles=[setter]" in str(exc.value) and "\n" not in str(exc.value)


def test_optimizing_takes_settings_and_says_how_to_make_a_composed_config_into_them(tmp_path):
    cfg = composed(game="mathquiz", optimizer="bootstrap_fewshot", logger="none")  # a DictConfig, not settings
    with pytest.raises(TypeError, match="build_settings"):
        run_optimize(cfg, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_model_served_on_this_machine_finds_its_programs_on_another_port(tmp_path):
    """``skate local`` serves each model on a free port, a new one every time: a program compiled
    against the model on one port is the same model's on the next (a provider's address is kept)."""
    with FakeLLMServer(MODELS) as first:
        compiled = run_optimize(
            config(first, tmp_path, {"optimizer.train": 4, "optimizer.val": 2}, names=("ace", "mid")), tmp_path / "one"
        )
    with FakeLLMServer(MODELS) as second:
        assert second.api_base != first.api_base
        cfg = config(second, tmp_path, {"optimizer.train": 4, "optimizer.val": 2}, names=("ace", "mid"), cache="cache2")
        again = run_optimize(cfg, tmp_path / "two")
        assert second.stats.requests == 0
    assert [r.key for r in again] == [r.key for r in compiled] and all(r.reused for r in again)


# ------------------------------------------------------------------------- recompilation
def test_a_changed_training_set_or_setting_compiles_a_new_program(tmp_path):
    with FakeLLMServer(MODELS) as srv:

        def once(tag: str, values: dict[str, Any] | None = None) -> dict[str, Any]:
            cfg = config(srv, tmp_path, {**MID_AS_IT_IS, **(values or {})}, names=("ace", "mid"))
            (record,) = run_optimize(cfg, tmp_path / tag)
            return record.fields()

        base = once("base")
        assert base["reused"] is False and base["calls"] > 0
        same = once("same")
        assert same["reused"] is True and same["key"] == base["key"] and same["calls"] == 0
        seed = once("seed", {"optimizer.seed": 1})  # other training items
        train = once("train", {"optimizer.train": 6})  # fewer training items
        demos = once("demos", {"optimizer.settings.max_bootstrapped_demos": 2})  # another setting
        keys = [base["key"], seed["key"], train["key"], demos["key"]]
        assert len(set(keys)) == 4
        for r in (seed, train, demos):
            assert r["reused"] is False and r["calls"] > 0
        assert train["train"] == 6
        assert sorted(p.stem for p in (tmp_path / "programs").glob("*.json")) == sorted(keys)
        # each is reused in turn
        assert once("seed-again", {"optimizer.seed": 1})["reused"] is True


# ----------------------------------------------------------------------------- optimisers
def test_mipro_v2_light_compiles_through_the_bridge_and_the_game_runs(tmp_path):
    with MessageServer(MODELS) as srv:
        cfg = config(
            srv,
            tmp_path,
            {
                "optimizer.train": 6,
                "optimizer.val": 4,
                **MID_AS_IT_IS,
                "optimizer.settings.max_bootstrapped_demos": 1,
                "optimizer.settings.max_labeled_demos": 1,
            },
            optimizer="mipro_v2",
            names=("ace", "mid"),
        )
        assert plans(cfg.optimizer, "ace")["answerer"].settings["auto"] == "light"
        result = run_game(cfg, tmp_path / "run")
    (e,) = events_of(tmp_path / "run", "optimize")
    assert e["player"] == "ace" and e["optimizer"] == "mipro_v2" and not e["stopped"] and e["reused"] is False
    assert e["calls"] > 0 and (e["train"], e["val"]) == (6, 4)
    assert e["metric_before"] is not None and e["metric_after"] is not None
    assert usage_of(tmp_path / "run")["players"][f"ace{OPTIMIZE_SUFFIX}"]["calls"] == e["calls"]
    # MIPROv2's own questions (the instruction proposer) went through the bridge to the server
    assert any("proposed_instruction" in last_user(m) for n, m in srv.requests if n == "ace")
    saved = ProgramStore(tmp_path / "programs").load(e["key"])
    assert saved["state"]["signature"]["instructions"]
    assert events_of(tmp_path / "run", "run_end") and len(result.table) == 2


def test_random_search_with_two_candidates_compiles(tmp_path):
    with FakeLLMServer(MODELS) as srv:
        cfg = config(
            srv,
            tmp_path,
            {
                "optimizer.train": 6,
                "optimizer.val": 4,
                "optimizer.players.ace.name": "none",
                "optimizer.settings.num_candidate_programs": 2,
            },
            optimizer="bootstrap_fewshot_random_search",
            names=("ace", "low"),
        )
        (r,) = run_optimize(cfg, tmp_path / "out")
    assert r.player == "low" and r.optimizer == "bootstrap_fewshot_random_search" and not r.stopped
    assert r.calls > 0 and r.demos > 0 and r.metric_after is not None
    assert r.metric_after > r.metric_before  # low learns from demos
    assert ProgramStore(tmp_path / "programs").load(r.key)["settings"]["num_candidate_programs"] == 2


# ------------------------------------------------------------------------------- budget
def test_the_budget_stops_optimisation_and_the_game_cleanly(tmp_path):
    prices = {f"llm.prices.{n}": {"input_per_mtok": 1000.0, "output_per_mtok": 1000.0} for n in MODELS}
    with FakeLLMServer(MODELS) as srv:
        # what optimising ace alone costs, with no budget
        probe = config(
            srv, tmp_path, {**prices, "optimizer.settings.num_threads": 1}, cache="probe-cache", store="probe-programs"
        )
        first = run_optimize(probe, tmp_path / "probe")[0]
        assert first.player == "ace" and first.cost_usd > 0
        # a budget that ace's optimisation fits in but mid's does not
        budget = 1.5 * first.cost_usd
        cfg = config(srv, tmp_path, {**prices, "optimizer.settings.num_threads": 1, "llm.budget_usd": budget})
        result = run_game(cfg, tmp_path / "run")  # no exception
    opt = {e["player"]: e for e in events_of(tmp_path / "run", "optimize")}
    assert sorted(opt) == ["ace", "low", "mid"]
    assert not opt["ace"]["stopped"] and opt["ace"]["calls"] == first.calls
    assert opt["mid"]["stopped"].startswith("budget") and 0 < opt["mid"]["calls"]
    assert opt["low"]["stopped"].startswith("budget") and opt["low"]["calls"] == 0
    assert opt["low"]["stopped"] == opt["mid"]["stopped"]
    # what was stopped is not stored (a later run must not reuse a half-made program)
    stored = {p.stem for p in (tmp_path / "programs").glob("*.json")}
    assert stored == {opt["ace"]["key"]}
    # the game stops at once: the budget is spent
    assert result.summary.stopped is not None and "Budget" in result.summary.stopped
    assert events_of(tmp_path / "run", "run_stopped") and not events_of(tmp_path / "run", "round_end")
    assert events_of(tmp_path / "run", "run_end")
    usage = usage_of(tmp_path / "run")
    spent = usage["total"]["cost_usd"]
    assert spent >= budget
    per_call = usage["players"][f"mid{OPTIMIZE_SUFFIX}"]["cost_usd"] / opt["mid"]["calls"]
    assert spent <= budget + 3 * per_call  # only calls already past the check go out after it
    assert usage["players"][f"mid{OPTIMIZE_SUFFIX}"]["calls"] == opt["mid"]["calls"]
    for key in (f"low{OPTIMIZE_SUFFIX}", "low", "ace", "mid"):  # no request after the budget was spent
        assert usage["players"].get(key, {"calls": 0})["calls"] == 0, key


# -------------------------------------------------------------------------------- setter
def test_the_setters_are_optimised_on_mathquiz(tmp_path):
    with FakeLLMServer(MODELS) as srv:
        cfg = config(
            srv,
            tmp_path,
            {
                "optimizer.roles": ["setter"],
                "optimizer.train": 4,
                "optimizer.val": 4,
                "optimizer.settings.max_bootstrapped_demos": 2,
                "optimizer.settings.max_labeled_demos": 0,
            },
            names=("ace", "mid"),
        )
        records = run_optimize(cfg, tmp_path / "out")
    assert [(r.player, r.role) for r in records] == [("ace", "setter"), ("mid", "setter")]
    for r in records:
        assert not r.stopped and r.calls > 0 and (r.train, r.val) == (4, 4)
        assert 0 <= r.metric_before <= 1 and 0 <= r.metric_after <= 1
    assert (tmp_path / "out" / "optimize.jsonl").exists()


def test_setters_learn_from_labelled_demonstrations_shown_without_the_rules(tmp_path):
    """A setter's training items carry the game's valid tasks as labelled replies (MathQuiz: the
    generator's questions, each with its own target); the compiled setter's requests show each
    demonstration as its target and situation and a reply in the plain format, never the rules
    again; the optimisation's setting requests carry the game's stop sequences and setter options;
    the event reports the valid and separating shares before and after."""
    with MessageServer(MODELS) as srv:
        cfg = config(
            srv,
            tmp_path,
            {
                "optimizer.roles": ["setter"],
                "optimizer.train": 3,
                "optimizer.val": 2,
                "optimizer.settings.max_bootstrapped_demos": 0,
                "optimizer.settings.max_labeled_demos": 2,
            },
            names=("ace", "mid"),
            each={"setter_extra_body": {"repeat_penalty": 1.1}},
        )
        records = run_optimize(cfg, tmp_path / "out")
        log = list(srv.log)
    assert [(r.player, r.labelled, r.demos) for r in records] == [("ace", 3, 2), ("mid", 3, 2)]
    for r in records:
        assert r.valid_before is not None and r.valid_after is not None
        assert 0 <= r.valid_before <= 1 and 0 <= r.valid_after <= 1
    saved = [json.loads(p.read_text()) for p in (tmp_path / "programs").glob("*.json")]
    demos = [d for rec in saved for d in rec["state"]["demos"]]
    assert len(demos) == 4
    for d in demos:  # each a valid question for its own target, from the generator
        assert solve(d["question"]) == int(d["target"])
    # the setting requests that carried them: demonstrations are target + situation -> question
    with_demos = [
        m
        for _, m in srv.requests
        if "[[ ## rules ## ]]" in last_user(m) and sum(x["role"] == "assistant" for x in m) == 2
    ]
    assert with_demos, "no setting request carried the compiled demonstrations"
    messages = with_demos[0]
    shown = [m["content"] for m in messages[1:-1]]
    for user, reply in zip(shown[::2], shown[1::2], strict=True):
        assert "[[ ## target ## ]]" in user and "[[ ## situation ## ]]" in user
        assert "[[ ## rules ## ]]" not in user and "[[ ## guidance ## ]]" not in user
        assert reply.startswith("QUESTION:")
    # the optimisation's setting requests are sent as the game sends them; answers are not
    setting = [e for e in log if "stop" in e["fields"]]
    assert setting and all("repeat_penalty" in e["fields"] for e in setting)
    assert any("stop" not in e["fields"] for e in log)  # the metric's answers
    event = next(
        e
        for e in map(json.loads, (tmp_path / "out" / "optimize.jsonl").read_text().splitlines())
        if e["event"] == "optimize"
    )
    assert {"valid_before", "valid_after", "separating_before", "separating_after", "labelled"} <= set(event)


def test_a_setter_that_copies_its_demonstrations_writes_nothing_new(tmp_path):
    """The Qwen models copied a demonstration word for word (the fake fault ``copy_demo``): the
    metric scores a copy 0, and in the game (COP: a copied program runs as well as its original)
    a copy of one of the setter's demonstrations, which its prompt shows as one of its own
    replies, is not unique."""
    models = {**MODELS, "copier": FakeModel(0.9, faults={"copy_demo": 1.0})}
    with FakeLLMServer(models) as srv:
        cfg = config(
            srv,
            tmp_path,
            {
                "optimizer.roles": ["setter"],
                "optimizer.train": 2,
                "optimizer.val": 2,
                "optimizer.settings.max_bootstrapped_demos": 1,
                "optimizer.settings.max_labeled_demos": 2,
                "optimizer.players.ace.name": "none",
            },
            names=("ace", "copier"),
            game="cop",
        )
        run_game(cfg, tmp_path / "run")
    (record,) = events_of(tmp_path / "run", "optimize")
    assert record["player"] == "copier" and record["demos"] >= 1
    assert record["valid_before"] > 0 and record["valid_after"] == 0
    attempts = [a for a in events_of(tmp_path / "run", "attempt") if a["player"] == "copier"]
    assert attempts and all(a["reason"] == "not_unique" for a in attempts)
    assert any(a["valid"] for a in events_of(tmp_path / "run", "attempt") if a["player"] == "ace")


def test_items_with_the_same_inputs_are_samples_of_their_own(tmp_path):
    """COP's setters have no assignment: every round-1 item asks the same thing. Each item is its
    own sample (its own seed), so the held-out items are not one cached reply scored again."""
    with MessageServer(MODELS) as srv:
        cfg = config(
            srv,
            tmp_path,
            {
                "optimizer.roles": ["setter"],
                "optimizer.train": 1,
                "optimizer.val": 3,
                "optimizer.settings.max_bootstrapped_demos": 1,
                "optimizer.settings.max_labeled_demos": 0,
                **MID_AS_IT_IS,
            },
            names=("ace", "mid"),
            game="cop",
        )
        run_optimize(cfg, tmp_path / "out")
        seeds = [e["seed"] for e in srv.log if "stop" in e["fields"]]
    assert len(seeds) >= 4 and len(set(seeds)) == len(seeds)


def test_demonstrations_that_do_not_fit_the_context_are_dropped_saying_so(tmp_path, caplog):
    with FakeLLMServer(MODELS) as srv:
        cfg = config(
            srv,
            tmp_path,
            {
                "optimizer.roles": ["setter"],
                "optimizer.train": 3,
                "optimizer.val": 1,
                "optimizer.settings.max_bootstrapped_demos": 0,
                "optimizer.settings.max_labeled_demos": 3,
                **MID_AS_IT_IS,
            },
            names=("ace", "mid"),
            each={"max_tokens": 64, "context_tokens": 1500},
        )
        with caplog.at_level("WARNING", logger="skate.optimize"):
            (record,) = run_optimize(cfg, tmp_path / "out")
    assert record.demos_dropped >= 1 and record.demos == 3 - record.demos_dropped
    warned = [r.getMessage() for r in caplog.records if "did not fit" in r.getMessage()]
    assert len(warned) == 1 and "context_tokens" in warned[0] and "ace" in warned[0]


def test_bad_demonstration_sources_are_refused():
    msg = refused({"optimizer.demos": ["practice", "teachers"]})
    assert "optimizer.demos" in msg and "simulated" in msg
    msg = refused({"optimizer.demo_difficulty": [0.5, 0.2]})
    assert "optimizer.demo_difficulty" in msg and "[lo, hi]" in msg


def test_demonstrations_can_be_kept_to_a_band_of_difficulty():
    """``optimizer.demo_difficulty``: only demonstrations the game's own measure puts in the band
    (a weak setter shown questions it can still solve)."""
    from skate.optimize.items import setter_demos

    game = MathQuizGame(rounds=1)
    env = GameEnv(sandbox=None, seed=0)  # type: ignore[arg-type]
    sim = game.simulation(env)
    easy = setter_demos(game, env, 4, np.random.default_rng(0), sources=("practice",), difficulty=(0.0, 0.2))
    hard = setter_demos(game, env, 4, np.random.default_rng(0), sources=("practice",), difficulty=(0.6, 1.0))
    assert easy and hard
    assert all(sim.difficulty(d.proposal.question) <= 0.2 for d in easy)
    assert all(sim.difficulty(d.proposal.question) >= 0.6 for d in hard)
    for d in easy + hard:  # each still a question for its own target
        assert solve(d.proposal.question) == d.assignment["target"]


class StubPlayer:
    """Answers a MathQuiz question right (the generator's reader) or always with 0."""

    def __init__(self, name: str, right: bool) -> None:
        self.name, self.right, self.asked = name, right, 0

    def answer(self, queries, rng):
        self.asked += len(queries)
        return [str(solve(q.prompt)) if self.right else "0" for q in queries]


def test_the_setter_metric_runs_the_games_validation():
    game = MathQuizGame(rounds=1)
    module = MathQuizSetter()
    env = GameEnv(sandbox=None, seed=0)  # type: ignore[arg-type]
    me, good, bad = StubPlayer("ace", True), StubPlayer("mid", True), StubPlayer("low", False)
    items = setter_items(game, module, "ace", ("ace", "mid", "low"), "hist_perf", 2, 1, np.random.default_rng(0))
    assert (len(items.train), len(items.val)) == (2, 1)
    example = items.train[0]
    target = int(items.by_id[example.skate_id].assignment["target"])
    assert example.target == str(target)  # the setter's own inputs
    novelty = NoveltyIndex(HashingEmbedder(dim=1024, threshold=0.2))
    seen = generate_question(KINDS[0], 0.5, target + 1, np.random.default_rng(3))
    _, _, vec = novelty.check("ace", seen)
    novelty.add("ace", vec)

    def score(question: str, others) -> float:
        metric = setter_metric(game, module, me, others, items, env, novelty, seed=0)
        return metric(example, dspy.Prediction(question=question))

    question = generate_question(KINDS[1], 0.5, target, np.random.default_rng(1))
    assert solve(question) == target
    # a valid, unique task that the setter solves and no other player does scores 1
    assert score(question, [bad]) == 1.0
    assert score(question, [good, bad]) == 0.75
    assert score(question, [good]) == 0.5
    # a question that states its target is rejected before anyone answers it
    asked = me.asked
    assert score(f"What is {target} plus 0?", [bad]) == 0.0
    assert me.asked == asked
    assert score("", [bad]) == 0.0  # no question
    wrong = generate_question(KINDS[1], 0.5, target + 7, np.random.default_rng(2))
    assert score(wrong, [bad]) == 0.0  # the setter's own answer is not the target
    assert score(seen, [bad]) == 0.0  # a task for another target, however unique


def test_a_task_too_like_the_history_scores_zero():
    game = MathQuizGame(rounds=1)
    module = MathQuizSetter()
    env = GameEnv(sandbox=None, seed=0)  # type: ignore[arg-type]
    items = setter_items(game, module, "ace", ("ace", "low"), "hist_perf", 1, 0, np.random.default_rng(0))
    (example,) = items.train
    target = int(items.by_id[example.skate_id].assignment["target"])
    question = generate_question(KINDS[2], 0.5, target, np.random.default_rng(5))
    novelty = NoveltyIndex(HashingEmbedder(dim=1024, threshold=0.2))
    metric = setter_metric(game, module, StubPlayer("ace", True), [StubPlayer("low", False)], items, env, novelty, 0)
    assert metric(example, dspy.Prediction(question=question)) == 1.0
    _, _, vec = novelty.check("ace", question)
    novelty.add("ace", vec)  # now the history holds this very question
    assert metric(example, dspy.Prediction(question=question)) == 0.0


# ---------------------------------------------------------------------------------- plans
def planned(values: dict[str, Any], optimizer: str = "bootstrap_fewshot"):
    """A MathQuiz game of three fake models (no server: nothing is played) under ``optimizer``."""
    return llm_config(
        "http://127.0.0.1:9/v1",
        Path("/nonexistent-cache"),
        {"optimizer.store": "/nonexistent-store", **values},
        game="mathquiz",
        optimizer=optimizer,
    )


def refused(values: dict[str, Any], optimizer: str = "bootstrap_fewshot") -> str:
    with pytest.raises(ConfigError) as exc:
        planned(values, optimizer=optimizer)
    msg = str(exc.value)
    assert "\n" not in msg and len(msg) < 600, msg
    return msg


def test_plans_merge_run_role_and_player_settings_in_that_order():
    o = planned(
        {
            "optimizer.answerer.max_labeled_demos": 2,
            "optimizer.players.ace.settings": {"max_bootstrapped_demos": 3, "max_labeled_demos": 3, "max_rounds": 2},
            "optimizer.players.ace.answerer.max_labeled_demos": 1,
            "optimizer.players.low.name": "none",
            "optimizer.players.mid.roles": ["answerer", "setter"],
            "optimizer.setter.max_rounds": 3,
        }
    ).optimizer
    ace, mid, low = (plans(o, n) for n in ("ace", "mid", "low"))
    run = {"max_bootstrapped_demos": 4, "max_labeled_demos": 4, "max_rounds": 1, "num_threads": 4}
    assert ace == {
        "answerer": Plan(
            "bootstrap_fewshot", {**run, "max_bootstrapped_demos": 3, "max_labeled_demos": 1, "max_rounds": 2}
        )
    }
    assert mid == {
        "answerer": Plan("bootstrap_fewshot", {**run, "max_labeled_demos": 2}),
        "setter": Plan("bootstrap_fewshot", {**run, "max_rounds": 3}),
    }
    assert low == {}  # name: none skips the player


def test_a_player_may_choose_its_own_optimizer_under_none():
    o = planned({"optimizer.players.mid.name": "bootstrap_fewshot"}, optimizer="none").optimizer
    assert plans(o, "ace") == {}
    assert plans(o, "mid") == {"answerer": Plan("bootstrap_fewshot", {})}


def test_a_player_may_switch_to_another_optimizer_under_a_preset():
    o = planned({"optimizer.players.ace.name": "mipro_v2"}).optimizer
    assert plans(o, "ace") == {"answerer": Plan("mipro_v2", {})}  # not bootstrap's settings


def test_bad_optimizer_configs_are_refused_naming_the_key():
    assert "optimizer.players.ace" in (m := refused({"optimizer.players.ace.colour": "red"})) and "colour" in m
    assert "bogus" in (m := refused({"optimizer.settings.bogus": 1})) and "BootstrapFewShot" in m
    assert "bogus" in refused({"optimizer.players.mid.answerer.bogus": 1})
    assert "auto" in (m := refused({"optimizer.settings.auto": "fast"}, optimizer="mipro_v2")) and "light" in m
    assert "num_trials" in refused({"optimizer.settings.auto": None}, optimizer="mipro_v2")
    assert "optimizer.compare" in refused({"optimizer.compare": True}, optimizer="none")
    assert "optimizer.players" in (m := refused({"optimizer.players.zed.name": "none"})) and "zed" in m
    assert "judge" in refused({"optimizer.players.ace.roles": ["judge"]})
    assert "optimizer.players.ace.name" in refused({"optimizer.players.ace.name": "bogus"})
    assert "optimizer.train" in refused({"optimizer.train": 0})
    assert "optimizer.val" in refused({"optimizer.val": -1})


def test_a_bad_per_player_setting_is_refused_naming_the_player():
    assert "optimizer.players.mid" in refused({"optimizer.players.mid.answerer.bogus": 1})
    assert "optimizer.players.mid" in refused({"optimizer.players.mid.settings.auto": "fast"}, optimizer="mipro_v2")


def test_compare_needs_language_model_players():
    with pytest.raises(ConfigError, match="optimizer.compare"):
        skate.config(game="mathquiz", optimizer="bootstrap_fewshot", logger="none", values={"optimizer.compare": True})


# ------------------------------------------------------------------ simulated and compare
def test_simulated_players_play_as_usual_with_an_optimizer(tmp_path):
    cfg = skate.config(
        game="mathquiz",
        optimizer="bootstrap_fewshot",
        logger="none",
        estimator="fixed_n",
        values={
            "game.rounds": 1,
            "report": False,
            "estimator.n": 2,
            "optimizer.store": str(tmp_path / "programs"),
            "llm.cache_dir": str(tmp_path / "cache"),
        },
    )
    result = run_game(cfg, tmp_path / "run")
    assert len(result.table) == len(cfg.players.simulated) >= 2
    assert not events_of(tmp_path / "run", "optimize") and events_of(tmp_path / "run", "round_end")
    assert result.summary.optimization is None and not (tmp_path / "programs").exists()


def test_the_prompt_optimization_preset_compares_each_model_with_its_default_twin(tmp_path):
    with MessageServer(MODELS) as srv:
        cfg = llm_config(
            srv.api_base,
            tmp_path / "cache",
            {
                "game.rounds": 1,
                "estimator.n": 2,
                "llm.preflight": False,
                "optimizer.roles": ["answerer"],
                "optimizer.train": 6,
                "optimizer.val": 4,
                "optimizer.store": str(tmp_path / "programs"),
            },
            experiment="prompt_optimization",
            game="mathquiz",
            estimator="fixed_n",
        )
        assert cfg.optimizer.compare and cfg.optimizer.name == "bootstrap_fewshot"
        result = run_game(cfg, tmp_path / "run")
    names = sorted(r["player"] for r in result.table)
    assert names == sorted(["ace", "mid", "low", "ace-default", "mid-default", "low-default"])
    assert sorted(e["player"] for e in events_of(tmp_path / "run", "optimize")) == ["ace", "low", "mid"]
    rows = result.summary.prompt_optimization
    score = {r["player"]: r["score"] for r in result.table}
    assert sorted(r["model"] for r in rows) == ["ace", "low", "mid"]
    for r in rows:
        twin = r["model"] + "-default"
        assert r["optimized"] == round(score[r["model"]], 4) and r["default"] == round(score[twin], 4)
        assert r["gain"] == pytest.approx(score[r["model"]] - score[r["model"] + "-default"], abs=1e-4)
        assert r["lo"] < r["gain"] < r["hi"]
    assert result.summary.prompt_optimization == compare_table(result.table, "-default")
    # a model and its twin share the model's name at the server: on the game's questions each
    # model asked with demos (optimised) and without (its default-prompt twin)
    tasks = events_of(tmp_path / "run", "task")
    demos: dict[str, set[bool]] = {"ace": set(), "mid": set(), "low": set()}
    for t in tasks:
        for name, messages in answer_requests(srv, t["prompt"]):
            demos[name].add(count_demos(messages) > 0)
    assert demos == {"ace": {True, False}, "mid": {True, False}, "low": {True, False}}


# ------------------------------------------------------------------------ predictions as text
def test_predictions_render_as_replies_the_modules_parse_back():
    from skate.games.cop.modules import COPSetter
    from skate.games.cop.modules import answerer as cop_answerer
    from skate.games.mathquiz.modules import answerer as mathquiz_answerer
    from skate.games.scp.modules import SCPAnswerer

    cop = cop_answerer(4)
    for i in range(4):
        assert cop.parse(render_prediction(dspy.Prediction(**cop.label(i)))) == i
    scp = SCPAnswerer()
    for i in range(4):
        assert scp.parse(render_prediction(dspy.Prediction(**scp.label(i)))) == i
    mq = mathquiz_answerer(reasoning=True)
    text = render_prediction(dspy.Prediction(reasoning="3 boxes of 14 make 42, less 5", **mq.label("37")))
    assert text.index("[[ ## reasoning ## ]]") < text.index("[[ ## answer ## ]]") and mq.parse(text) == "37"
    setter = COPSetter()
    wrong = ["[1, 2, 3]", 'a "quoted"\nline', "", "ünïcode"]
    proposal = setter.parse(render_prediction(dspy.Prediction(program="x = [1, 2]\nprint(x)", wrong_answers=wrong)))
    assert proposal.code == "x = [1, 2]\nprint(x)" and proposal.distractors == wrong


def test_a_model_that_cannot_answer_mipros_own_requests_keeps_its_prompts_and_the_game_goes_on(tmp_path, caplog):
    """``rambling``: the Qwen 0.5B answered MIPROv2's instruction proposer with fragments of JSON
    that DSPy cannot read, and the whole optimisation died with a traceback."""
    models = {"ace": FakeModel(0.9, {"rambling": 1.0}), "mid": FakeModel(0.5)}
    with FakeLLMServer(models) as srv, caplog.at_level(logging.WARNING, logger="skate.optimize"):
        cfg = config(
            srv,
            tmp_path,
            {
                "optimizer.train": 6,
                "optimizer.val": 4,
                **MID_AS_IT_IS,
                "optimizer.settings.max_bootstrapped_demos": 1,
                "optimizer.settings.max_labeled_demos": 1,
            },
            optimizer="mipro_v2",
            names=("ace", "mid"),
        )
        result = run_game(cfg, tmp_path / "run")
    (e,) = events_of(tmp_path / "run", "optimize")
    assert e["player"] == "ace" and "could not read the model's reply" in e["stopped"] and e["metric_after"] is None
    assert not ProgramStore(tmp_path / "programs").load(e["key"])  # nothing stored: tried again next time
    warned = [r.getMessage() for r in caplog.records if "could not read" in r.getMessage()]
    assert len(warned) == 1 and "optimizer=bootstrap_fewshot" in warned[0]
    assert events_of(tmp_path / "run", "run_end") and len(result.table) == 2

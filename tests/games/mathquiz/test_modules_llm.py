"""A small MathQuiz game with language-model players over HTTP on loopback (the fake server),
through the same client as every game: prompts, the setter's own answer, chain of thought,
void calls, cache."""

from __future__ import annotations

import dataclasses
import json

from skate.games.mathquiz.generator import solve
from skate.games.mathquiz.modules import MathQuizSetter
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.runlog.files import read_events
from skate.runner import run_game
from tests.llm.conftest import SKILLS, RecordingServer, llm_config


def kinds(events, kind):
    return [e for e in events if e["event"] == kind]


Recording = RecordingServer


def test_llm_players_play_a_whole_mathquiz_game(tmp_path):
    with Recording({n: FakeModel(s) for n, s in SKILLS.items()}) as srv:
        cfg = llm_config(
            srv.api_base, tmp_path / "cache", {"game.rounds": 4, "estimator.n": 10, "report": True}, game="mathquiz"
        )
        result = run_game(cfg, tmp_path / "run")
        requests = srv.stats.requests
        # the same game again: every call is served from the response cache (its report, the
        # same plots again, is left out: only the calls and the table are compared)
        again = run_game(dataclasses.replace(cfg, report=False), tmp_path / "again")
        assert srv.stats.requests == requests and again.table == result.table
    events = read_events(tmp_path / "run")
    assert [r["player"] for r in result.table] == ["ace", "mid", "low"]  # the fake skills' order
    tasks = kinds(events, "task")
    assert tasks and all(solve(t["prompt"]) == int(t["answer"]) for t in tasks)
    # the target reached each setter's prompt, and never a solver's
    set_prompts = [u for u in srv.users if "[[ ## target ## ]]" in u]
    answer_prompts = [u for u in srv.users if "[[ ## question ## ]]" in u and "[[ ## target ## ]]" not in u]
    assert set_prompts and answer_prompts
    for t in tasks:
        assert any(f"[[ ## target ## ]]\n{t['answer']}\n" in u for u in set_prompts)
        assert not any("[[ ## target ## ]]" in u for u in answer_prompts if t["prompt"] in u)
    # setters answered their own question (the self-check) through the answerer, reasoning first
    assert all(t["setter_answer"] == t["answer"] for t in tasks)
    # (ChatAdapter's field markers, or the JSON field list of structured output, llm.structured)
    assert all("`[[ ## reasoning ## ]]`" in u or "fields: `reasoning`, then `answer`" in u for u in answer_prompts)
    est = kinds(events, "estimate")
    assert len(est) == 3 * len(tasks) and all(e["n"] == 10 and e["void"] == 0 for e in est)
    usage = json.loads((tmp_path / "run" / "usage.json").read_text())
    assert usage["total"]["calls"] == requests > 0 and usage["total"]["cost_usd"] == 0
    assert (tmp_path / "run" / "report" / "index.html").exists()


def test_without_reasoning_the_answerer_asks_for_the_answer_only(tmp_path):
    with Recording({n: FakeModel(s) for n, s in SKILLS.items()}) as srv:
        cfg = llm_config(
            srv.api_base,
            tmp_path / "cache",
            {"game.rounds": 1, "game.reasoning": False},
            names=("ace", "mid"),
            game="mathquiz",
        )
        run_game(cfg, tmp_path / "run")
    answers = [u for u in srv.users if "[[ ## question ## ]]" in u and "[[ ## target ## ]]" not in u]
    assert answers and not any("reasoning" in u for u in answers)


def test_a_dead_model_sets_no_question_and_loses_no_game(tmp_path):
    models = {"ace": FakeModel(0.9), "mid": FakeModel(0.6), "low": FakeModel(0.3, {"down": 1.0})}
    with FakeLLMServer(models) as srv:
        cfg = llm_config(
            srv.api_base,
            tmp_path / "cache",
            {"game.rounds": 2, "llm.max_retries": 0, "llm.outage_wait_s": 0},
            game="mathquiz",
        )  # void, not waited for
        result = run_game(cfg, tmp_path / "run")
    events = read_events(tmp_path / "run")
    low = [a for a in kinds(events, "attempt") if a["player"] == "low"]
    assert low and all(a["reason"] == "void" for a in low)
    assert all("low" not in (r["a"], r["b"]) for r in kinds(events, "rating"))
    assert next(r for r in result.table if r["player"] == "low")["mu"] == 25.0


def test_a_question_written_with_no_heading_is_read_but_prose_is_not():
    """The 0.5B often wrote its question bare, with no QUESTION: heading."""
    setter = MathQuizSetter(max_chars=80)
    assert (
        setter.read_reply("Can you find how many rolls 24 trays of 24 rolls hold?\n").question
        == "Can you find how many rolls 24 trays of 24 rolls hold?"
    )
    assert setter.read_reply("QUESTION: What is 3 + 4?").question == "What is 3 + 4?"
    for prose in ("I am not sure; it could be several of these.", "x" * 80 + "1", '{"answer": 1}', ""):
        proposal = setter.read_reply(prose)
        assert proposal.question == "" and "QUESTION:" in proposal.note


def test_with_a_recipe_each_setter_is_given_a_calculation_of_its_target_and_no_solver_sees_it(tmp_path):
    with Recording({n: FakeModel(s) for n, s in SKILLS.items()}) as srv:
        cfg = llm_config(
            srv.api_base,
            tmp_path / "cache",
            {"game.rounds": 2, "game.recipe": True, "estimator.n": 4},
            names=("ace", "mid"),
            game="mathquiz",
        )
        run_game(cfg, tmp_path / "run")
    set_prompts = [u for u in srv.users if "[[ ## target ## ]]" in u]
    assert set_prompts
    for u in set_prompts:
        target = int(u.split("[[ ## target ## ]]\n")[1].split("\n")[0])
        calc = u.split("[[ ## calculation ## ]]\n")[1].split("\n")[0]
        assert eval(calc.replace("×", "*")) == target  # a × b ± c written by the game
        assert "without its result" in u
    assert not any("[[ ## calculation ## ]]" in u for u in srv.users if "[[ ## target ## ]]" not in u)
    tasks = kinds(read_events(tmp_path / "run"), "task")
    assert tasks and all(solve(t["prompt"]) == int(t["answer"]) for t in tasks)

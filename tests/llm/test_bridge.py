"""DSPy through the project's client (skate.llm.bridge.SkateLM), against the fake server on
loopback over real HTTP: parsing, the response cache, usage, the budget, void calls, samples
and rollouts, and DSPy's optimisers (BootstrapFewShot, its random search, MIPROv2)."""

from __future__ import annotations

import asyncio
import copy
import warnings

import skate.llm  # noqa: F401  (environment defaults before dspy is imported)

# isort: split
import dspy
import numpy as np
import pytest

from skate.answers.exact import normalize_number
from skate.games.mathquiz.generator import KINDS, generate_question
from skate.games.mathquiz.modules import AnswerMathQuestion, answerer
from skate.llm import BudgetExceeded, LLMClient, ModelSpec, ModelUnreachable, Price
from skate.llm.bridge import SkateLM, VoidCall
from skate.llm.client import ResponseCache
from skate.llm.endpoints import RetryPolicy
from skate.llm.fake_server import FakeLLMServer, FakeModel

from .conftest import RecordingServer

MODELS = {"ace": FakeModel(0.9), "down": FakeModel(faults={"down": 1.0})}


@pytest.fixture
def srv():
    with RecordingServer(MODELS) as s:
        yield s


def spec(srv: FakeLLMServer, name: str = "ace", **kw) -> ModelSpec:
    return ModelSpec(f"openai/{name}", api_base=srv.api_base, api_key_env="SKATE_TEST_NO_KEY", **kw)


def client(cache_dir=None, retries: int = 1, **kw) -> LLMClient:
    return LLMClient(
        cache=ResponseCache(cache_dir) if cache_dir else None,
        retry=RetryPolicy(max_retries=retries, backoff_s=0.01, max_backoff_s=0.02),
        **kw,
    )


def examples(k: int, seed: int = 0, difficulty: float = 0.3) -> list[dspy.Example]:
    """MathQuiz questions whose true answers are known (the generator writes them for a target)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(k):
        target = int(rng.integers(10, 500))
        question = generate_question(KINDS[i % len(KINDS)], difficulty, target, rng)
        out.append(dspy.Example(question=question, answer=str(target)).with_inputs("question"))
    return out


def exact(example, pred, trace=None) -> bool:
    return normalize_number(pred.answer) == example.answer


QUESTION = examples(1, seed=99)[0]


# ---------------------------------------------------------------------------------- calls
def test_a_predict_through_the_bridge_reaches_the_server_and_parses_its_fields(srv):
    c = client()
    lm = SkateLM(c, spec(srv), "ace@opt")
    with dspy.context(lm=lm):
        got = dspy.Predict(AnswerMathQuestion)(question=QUESTION.question)
    assert normalize_number(got.answer) is not None
    assert srv.stats.requests == 1 and srv.users == [srv.users[0]] and QUESTION.question in srv.users[0]
    u = c.usage["ace@opt"]
    assert (u.calls, u.samples, u.cached) == (1, 1, 0) and u.prompt_tokens > 0 and u.completion_tokens > 0
    assert (lm.calls, lm.samples, lm.cached, lm.void) == (1, 1, 0, 0)
    assert lm.usage() == u and lm.summary()["usage"]["calls"] == 1
    assert srv.log[0]["temperature"] == 0.7 and srv.log[0]["max_tokens"] == 2048  # the spec's settings


def test_a_repeated_call_is_a_cache_hit_and_a_new_bridge_replays_it(srv, tmp_path):
    c = client(tmp_path)
    lm = SkateLM(c, spec(srv), "p")
    with dspy.context(lm=lm):
        first = dspy.Predict(AnswerMathQuestion)(question=QUESTION.question)
        again = dspy.Predict(AnswerMathQuestion)(question=QUESTION.question)
    assert srv.stats.requests == 1 and again.answer == first.answer
    assert (c.usage["p"].samples, c.usage["p"].cached, lm.cached) == (2, 1, 1)
    c.close()
    # Another client and bridge on the same cache (a re-run): the same seeds, so no request.
    c2 = client(tmp_path)
    with dspy.context(lm=SkateLM(c2, spec(srv), "p")):
        replay = dspy.Predict(AnswerMathQuestion)(question=QUESTION.question)
    assert srv.stats.requests == 1 and replay.answer == first.answer and c2.usage["p"].cached == 1
    c2.close()


def test_a_prompt_is_sent_as_one_user_message(srv):
    lm = SkateLM(client(), spec(srv), "p")
    (text,) = lm("Say hello.")
    (again,) = asyncio.run(lm.acall("Say hello."))  # DSPy's async path runs the same call
    assert isinstance(text, str) and again == text and srv.users == ["Say hello."] * 2


def test_temperature_and_max_tokens_of_a_call_are_part_of_its_request(srv, tmp_path):
    c = client(tmp_path)
    lm = SkateLM(c, spec(srv), "p")
    with dspy.context(lm=lm):
        dspy.Predict(AnswerMathQuestion)(question=QUESTION.question, config={"temperature": 0.2, "max_tokens": 300})
        dspy.Predict(AnswerMathQuestion)(question=QUESTION.question)  # the spec's: another request
    assert [(r["temperature"], r["max_tokens"]) for r in srv.log] == [(0.2, 300), (0.7, 2048)]
    c.close()


def test_n_choices_are_distinct_samples_of_one_request(srv, tmp_path):
    c = client(tmp_path)
    lm = SkateLM(c, spec(srv), "p")
    with dspy.context(lm=lm):
        got = dspy.Predict(AnswerMathQuestion)(question=QUESTION.question, config={"n": 3})
    assert len(got.completions.answer) == 3
    assert srv.stats.requests == 1 and srv.log[0]["n"] == 3
    assert len(c.cache) == 3  # three samples, each under its own index and seed
    assert (lm.calls, lm.samples) == (1, 3) and c.usage["p"].samples == 3
    msgs = [{"role": "user", "content": "x"}]
    assert len(set(lm.seeds(msgs, 3))) == 3 and lm.seeds(msgs, 3) == lm.seeds(msgs, 3)
    c.close()


def test_rollout_ids_give_new_reproducible_samples(srv, tmp_path):
    c = client(tmp_path)
    lm = SkateLM(c, spec(srv), "p")
    predict = dspy.Predict(AnswerMathQuestion)
    for rollout in (None, 1, 2, 1, None):
        with dspy.context(lm=lm.copy(rollout_id=rollout, temperature=1.0) if rollout else lm):
            predict(question=QUESTION.question)
    seeds = [r["seed"] for r in srv.log]
    assert len(seeds) == 3 and len(set(seeds)) == 3  # rollouts 1 and 2 are new; repeats are cached
    assert [r["temperature"] for r in srv.log] == [0.7, 1.0, 1.0]
    assert lm.calls == 5 and lm.cached == 2  # the copies count in the bridge's counters
    # Another bridge seed: other samples.
    other = SkateLM(c, spec(srv), "p", seed=1)
    msgs = [{"role": "user", "content": QUESTION.question}]
    assert other.seeds(msgs, 2) != lm.seeds(msgs, 2)
    assert lm.seeds(msgs, 2, rollout_id=1) != lm.seeds(msgs, 2)
    c.close()


def test_copies_share_the_client_and_the_counters(srv):
    c = client()
    lm = SkateLM(c, spec(srv), "p")
    deep, shallow = copy.deepcopy(lm), lm.copy(temperature=0.0)
    assert deep.client is c and shallow.client is c and deep.kwargs is not lm.kwargs
    assert shallow.kwargs["temperature"] == 0.0 and lm.kwargs["temperature"] == 0.7
    with dspy.context(lm=deep):
        dspy.Predict(AnswerMathQuestion)(question=QUESTION.question)
    with dspy.context(lm=shallow):
        dspy.Predict(AnswerMathQuestion)(question=QUESTION.question)
    assert lm.calls == 2 and c.usage["p"].calls == 2 and srv.log[1]["temperature"] == 0.0
    # A program holding the bridge deep-copies without copying the client.
    program = dspy.Predict(AnswerMathQuestion)
    program.lm = lm
    assert program.deepcopy().lm.client is c


def test_a_skate_module_calls_without_deprecation_warnings(srv):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        with dspy.context(lm=SkateLM(client(), spec(srv), "p")):
            got = answerer()(question=QUESTION.question)
    assert got.answer and got.reasoning


# ------------------------------------------------------------------------ failures, budget
def test_a_down_server_is_a_void_call_after_the_clients_retries(srv):
    c = client(retries=2)
    lm = SkateLM(c, spec(srv, "down"), "p")
    with dspy.context(lm=lm), pytest.raises(VoidCall, match="server: HTTP 500") as err:
        dspy.Predict(AnswerMathQuestion)(question=QUESTION.question)
    assert srv.stats.requests == 3  # the try and two retries, none of them DSPy's
    assert err.value.reason.startswith("server: HTTP 500") and err.value.void == 1
    assert (lm.void, c.usage["p"].void, c.usage["p"].retries) == (1, 1, 2)


def test_a_spent_budget_raises_budget_exceeded_through_dspy(srv):
    c = client(prices={"ace": Price(1e6, 1e6)}, budget_usd=1.0)  # a dollar a token: one call spends it
    lm = SkateLM(c, spec(srv), "p")
    predict = dspy.Predict(AnswerMathQuestion)
    with dspy.context(lm=lm):
        predict(question=QUESTION.question)
        with pytest.raises(BudgetExceeded):
            predict(question=examples(1, seed=5)[0].question)
        assert lm.budget_hit
        with pytest.raises(BudgetExceeded):  # latched: even what the cache could answer
            predict(question=QUESTION.question)
    assert srv.stats.requests == 1
    with pytest.raises(BudgetExceeded):
        lm.check()


@pytest.mark.parametrize("run", ["bootstrap", "evaluate"])
def test_a_budget_hit_inside_an_optimiser_ends_as_budget_exceeded(srv, run):
    """DSPy catches per-example errors (BootstrapFewShot up to max_errors, Evaluate always):
    the bridge's guard turns a budget hit inside back into BudgetExceeded."""
    c = client(prices={"ace": Price(1e6, 1e6)}, budget_usd=1.0)
    lm = SkateLM(c, spec(srv), "p")
    with dspy.context(lm=lm), pytest.raises(BudgetExceeded), lm.guard():
        if run == "bootstrap":
            dspy.BootstrapFewShot(exact, max_bootstrapped_demos=2, max_errors=100).compile(
                answerer(), trainset=examples(4)
            )
        else:
            dspy.Evaluate(devset=examples(4), metric=exact, num_threads=2, max_errors=100)(answerer())
    # One request spends the budget; calls already past the check when it did may still go out.
    assert 1 <= srv.stats.requests == c.usage["p"].calls <= (1 if run == "bootstrap" else 2)


def test_a_model_that_does_not_answer_within_the_wait_stops_an_optimiser_too(srv):
    """The outage's stop (ModelUnreachable, a StopRun) is latched as a spent budget is: DSPy's
    per-example catch does not turn it into a failed example."""
    c = client(outage_wait_s=0.1)
    lm = SkateLM(c, spec(srv, "down"), "p")
    with dspy.context(lm=lm), pytest.raises(ModelUnreachable, match="openai/down"), lm.guard():
        dspy.Evaluate(devset=examples(3), metric=exact, num_threads=1, max_errors=100)(answerer())
    assert not lm.budget_hit and lm.void == 0
    with pytest.raises(ModelUnreachable):
        lm.check()


# ------------------------------------------------------------------------------ optimisers
def test_bootstrap_fewshot_compiles_through_the_bridge_and_replays_from_the_cache(srv, tmp_path):
    def compile_once():
        c = client(tmp_path)
        lm = SkateLM(c, spec(srv), "ace@bootstrap")
        with dspy.context(lm=lm), lm.guard():
            program = dspy.BootstrapFewShot(exact, max_bootstrapped_demos=2, max_labeled_demos=0).compile(
                answerer(), trainset=examples(4)
            )
        c.close()
        return program, lm, c

    program, lm, c = compile_once()
    demos = program.predict.demos
    assert len(demos) == 2 and all(d.get("augmented") for d in demos)
    assert all(normalize_number(d["answer"]) is not None and d["reasoning"] for d in demos)
    # Every call it made went through the client and is in the player's usage.
    u = c.usage["ace@bootstrap"]
    assert lm.calls >= 2 and srv.stats.requests == u.calls == lm.usage().calls == lm.samples == u.samples
    # An identical second optimisation is served entirely from the response cache.
    requests = srv.stats.requests
    again, lm2, _ = compile_once()
    assert srv.stats.requests == requests and lm2.cached == lm2.samples == lm.samples
    assert [d.toDict() for d in again.predict.demos] == [d.toDict() for d in demos]


def test_random_search_compiles_with_threads_through_the_bridge(srv):
    c = client()
    lm = SkateLM(c, spec(srv), "p")
    with dspy.context(lm=lm), lm.guard():
        program = dspy.BootstrapFewShotWithRandomSearch(
            exact,
            max_bootstrapped_demos=1,
            max_labeled_demos=1,
            num_candidate_programs=2,
            num_threads=2,
        ).compile(answerer(), trainset=examples(4), valset=examples(4, seed=1))
    candidates = program.candidate_programs  # zero-shot, labelled only, unshuffled, 2 random sets
    assert len(candidates) == 5 and any(p["program"].predict.demos for p in candidates)
    assert srv.stats.requests == c.usage["p"].calls == lm.samples > 0 and lm.void == 0


def test_mipro_v2_light_compiles_through_the_bridge(srv):
    c = client()
    lm = SkateLM(c, spec(srv), "p")
    # MIPROv2 takes its prompt and task models when it is made (dspy.settings.lm unless given).
    optimizer = dspy.MIPROv2(
        exact,
        prompt_model=lm,
        task_model=lm,
        auto="light",
        max_bootstrapped_demos=1,
        max_labeled_demos=1,
        num_threads=2,
        seed=0,
    )
    with dspy.context(lm=lm), lm.guard():
        program = optimizer.compile(answerer(), trainset=examples(6), valset=examples(4, seed=1))
    assert isinstance(program.predict.signature.instructions, str) and program.predict.signature.instructions
    assert srv.stats.requests == c.usage["p"].calls == lm.samples > 0
    assert any("[[ ## proposed_instruction ## ]]" in u for u in srv.users)  # the proposer's own calls

"""The model client against a real HTTP server on loopback: retries, void, cache keys, n > 1."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from skate.answers.choice import ChoiceQuery
from skate.games.base import GameEnv
from skate.games.cop import COPGame
from skate.llm import LLMClient, ModelConfigError, ModelSpec, ResponseCache, RetryPolicy
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.llm.wire import parse_retry_after
from skate.players.llm import LLMPlayer
from skate.runlog.records import VOID

MSGS = [{"role": "user", "content": "hello"}]


def test_an_empty_reply_says_whether_a_stop_sequence_ended_it(caplog):
    """A reply that meets one of its request's stop sequences at once (a model copying the
    request) is empty, and the warning names that cause beside the chat template (the server
    does not say which ended it); an empty reply with no stop sequence asked for points at the
    chat template alone."""
    with FakeLLMServer({"m": FakeModel(), "e": FakeModel(faults={"empty": 1.0})}) as srv:
        c = client()
        with caplog.at_level("WARNING", logger="skate.llm.client"):
            (stopped,) = c.complete(spec(srv), MSGS, [(0, 1)], "p", options={"stop": ["I"]})
            (empty,) = c.complete(spec(srv, "e"), MSGS, [(0, 1)], "q")
    assert stopped.text == "" and stopped.finish_reason == "stop" and empty.text == ""
    lines = [r.getMessage() for r in caplog.records if "empty reply" in r.getMessage()]
    assert len(lines) == 2
    assert "stop sequences" in lines[0] and "chat template" in lines[0]
    assert "chat template" in lines[1] and "stop sequences" not in lines[1]


def spec(srv, name="m", **kw):
    return ModelSpec(f"openai/{name}", api_base=srv.api_base, api_key_env="SKATE_TEST_NO_KEY", **kw)


def client(**kw):
    return LLMClient(retry=RetryPolicy(max_retries=kw.pop("retries", 2), backoff_s=0.01, max_backoff_s=0.02), **kw)


def test_a_429_is_retried_after_the_time_the_server_asks_for_then_void():
    with FakeLLMServer({"m": FakeModel(faults={"rate_limit": 1.0})}, retry_after_s=0.3) as srv:
        c = client(retries=2)
        start = time.perf_counter()
        (done,) = c.complete(spec(srv), MSGS, [(0, 1)], "p")
        elapsed = time.perf_counter() - start
    assert srv.stats.requests == 3  # the try and two retries
    assert elapsed >= 0.6  # two waits of Retry-After: 0.3, not the 0.01 s backoff
    assert not done.ok and done.void.startswith("rate_limit: HTTP 429")
    assert c.usage["p"].void == 1 and c.usage["p"].retries == 2


def test_a_retry_after_beyond_the_limit_gives_up_at_once():
    with FakeLLMServer({"m": FakeModel(faults={"rate_limit": 1.0})}, retry_after_s=600) as srv:
        (done,) = client(retries=5).complete(spec(srv), MSGS, [(0, 1)], "p")
        assert srv.stats.requests == 1 and not done.ok


@pytest.mark.parametrize(
    ("fault", "kind"), [("server_error", "server"), ("malformed", "malformed"), ("slow", "timeout")]
)
def test_transient_faults_are_retried_then_void(fault, kind):
    with FakeLLMServer({"m": FakeModel(faults={fault: 1.0})}, slow_s=1.0) as srv:
        (done,) = client(retries=1).complete(spec(srv, timeout_s=0.2), MSGS, [(0, 1)], "p")
        assert srv.stats.requests == 2
    assert not done.ok and done.void.startswith(kind)


def test_a_client_error_is_not_retried():
    with FakeLLMServer({"m": FakeModel()}) as srv:
        bad = ModelSpec("openai/m", api_base=srv.api_base.replace("/v1", "/nope"), api_key_env="X")
        (done,) = client(retries=3).complete(bad, MSGS, [(0, 1)], "p")
        assert srv.stats.not_found == 1  # asked once, not retried
    assert not done.ok and done.void.startswith("client: HTTP 404")


def test_a_dead_server_is_a_transport_fault():
    with FakeLLMServer({"m": FakeModel()}) as srv:
        base = srv.api_base
    dead = ModelSpec("openai/m", api_base=base, api_key_env="X")
    (done,) = client(retries=1).complete(dead, MSGS, [(0, 1)], "p")
    assert not done.ok and done.void.startswith("transport")


def test_samples_of_one_request_go_out_as_one_call_with_n(tmp_path):
    with FakeLLMServer({"m": FakeModel()}) as srv:
        c = client(cache=ResponseCache(tmp_path))
        got = c.complete(spec(srv), MSGS, [(0, 11), (1, 12), (2, 13)], "p")
        assert srv.stats.requests == 1 and srv.log[0]["n"] == 3
        assert all(g.ok for g in got)
        # Each sample is cached under its own index and seed: asking again costs nothing, and a
        # new sample index is a new request.
        again = c.complete(spec(srv), MSGS, [(0, 11), (1, 12), (2, 13)], "p")
        assert srv.stats.requests == 1 and all(g.cached for g in again)
        c.complete(spec(srv), MSGS, [(3, 14)], "p")
        assert srv.stats.requests == 2
        c.complete(spec(srv, supports_n=False), MSGS, [(4, 1), (5, 2)], "p")
        assert srv.stats.requests == 4  # one request per sample when n is not supported


def test_calls_queued_behind_a_busy_endpoint_wait_without_a_thread_each():
    """complete_many's calls run on threads of their endpoint, as many as its requests in flight:
    a burst of 40 calls to an endpoint that takes 2 at a time runs on 2 threads, not 40 (a pool
    of one size for all endpoints grew a thread per queued call, and a long game's memory with
    them)."""
    with FakeLLMServer({"m": FakeModel()}, latency_s=0.01) as srv:
        c = client(concurrency=2)
        got = c.complete_many(spec(srv), [([{"role": "user", "content": f"q{k}"}], [(0, k)]) for k in range(40)], "p")
        assert all(g[0].ok for g in got) and srv.stats.max_in_flight <= 2
        calls = [t for t in threading.enumerate() if t.name.startswith("llm")]  # the client's threads
        assert 1 <= len(calls) <= 2
        c.close()


def test_cache_key_covers_request_sample_and_seed():
    s = ModelSpec("openai/m", api_base="http://127.0.0.1:1/v1")
    base = ResponseCache.key(s, MSGS, 0, 1)
    assert base == ResponseCache.key(s, MSGS, 0, 1)
    assert base != ResponseCache.key(s, MSGS, 1, 1)
    assert base != ResponseCache.key(s, MSGS, 0, 2)
    assert base != ResponseCache.key(s, [{"role": "user", "content": "hello!"}], 0, 1)
    hotter = ModelSpec("openai/m", api_base="http://127.0.0.1:1/v1", temperature=1.0)
    assert base != ResponseCache.key(hotter, MSGS, 0, 1)


def test_player_groups_identical_queries_and_maps_void_and_unparsable():
    models = {
        "ace": FakeModel(0.95),
        "mute": FakeModel(faults={"no_option": 1.0}),
        "dead": FakeModel(faults={"down": 1.0}),
    }
    modules = COPGame().modules(GameEnv(sandbox=None))  # type: ignore[arg-type]
    with FakeLLMServer(models) as srv:
        c = client(retries=0)
        queries = [ChoiceQuery("print(1)", ("1", "2", "3", "4"))] * 3 + [ChoiceQuery("print(1)", ("4", "3", "2", "1"))]
        ace = LLMPlayer("ace", spec(srv, "ace"), c, modules)
        picks = ace.answer(queries, np.random.default_rng(0))
        assert sorted(e["n"] for e in srv.log) == [1, 3]  # three identical samples in one call
        assert all(p in range(4) for p in picks)
        mute = LLMPlayer("mute", spec(srv, "mute"), c, modules)
        assert list(mute.answer(queries, np.random.default_rng(0))) == [None] * 4
        dead = LLMPlayer("dead", spec(srv, "dead"), c, modules)
        assert all(r is VOID for r in dead.answer(queries, np.random.default_rng(0)))


def test_retry_after_header_forms():
    assert parse_retry_after("2") == 2.0 and parse_retry_after("0.5") == 0.5
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    future = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    assert 25 < parse_retry_after(future) <= 31


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"model": "gpt-4o"}, "provider/model"),
        ({"model": "hosted_vllm/qwen"}, "api_base"),
        ({"model": "openai/m", "temperature": -1}, "temperature"),
    ],
)
def test_bad_model_settings_say_what_to_fix(kwargs, says):
    with pytest.raises(ModelConfigError, match=says):
        ModelSpec(**kwargs)


def test_a_hosted_model_needs_its_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY"):
        ModelSpec("openai/gpt-4o").api_key()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert ModelSpec("openai/gpt-4o").api_key() == "sk-x"
    assert ModelSpec("ollama/llama3", api_base="http://localhost:11434/v1").api_key() == "unused"
    assert not ModelSpec("ollama/llama3", api_base="http://localhost:11434/v1").hosted


def test_each_player_sends_its_own_sampling_settings_and_headers():
    with FakeLLMServer({"m": FakeModel()}) as srv:
        s = spec(srv, temperature=0.2, max_tokens=77, extra_headers={"X-Team": "skate"})
        client().complete(s, MSGS, [(0, 5)], "p")
        client().complete(spec(srv), MSGS, [(0, 5)], "q")
    first, second = srv.log
    assert (first["temperature"], first["max_tokens"], first["headers"].get("x-team")) == (0.2, 77, "skate")
    assert (second["temperature"], second["max_tokens"], second["headers"].get("x-team")) == (0.7, 2048, None)
    assert first["seed"] == 5


def test_the_litellm_route_reaches_the_server_and_classifies_its_errors():
    """Providers that are not OpenAI-compatible go through LiteLLM; its OpenAI route can be aimed
    at the loopback server to check the plumbing and the error mapping for real."""
    from skate.llm.transport import _send_litellm
    from skate.llm.wire import CallFailed

    models = {
        "ok": FakeModel(),
        "busy": FakeModel(faults={"rate_limit": 1.0}),
        "broken": FakeModel(faults={"server_error": 1.0}),
    }
    with FakeLLMServer(models, retry_after_s=7) as srv:
        reply = _send_litellm(spec(srv, "ok"), MSGS, 2, 3)
        assert len(reply.texts) == 2 and reply.prompt_tokens >= 1
        assert srv.log[-1]["n"] == 2 and srv.log[-1]["seed"] == 3
        with pytest.raises(CallFailed) as busy:
            _send_litellm(spec(srv, "busy"), MSGS, 1, 3)
        assert (busy.value.kind, busy.value.retryable, busy.value.retry_after) == ("rate_limit", True, 7.0)
        with pytest.raises(CallFailed) as broken:
            _send_litellm(spec(srv, "broken"), MSGS, 1, 3)
        assert (broken.value.kind, broken.value.status) == ("server", 500)


def test_a_server_that_takes_fewer_samples_a_request_is_asked_in_requests_it_takes():
    """llama.cpp's server takes n up to its slot count and refuses more with a 400 naming it:
    the client learns the limit, sends the samples in requests of that size, and the next call
    to that server starts there."""
    with FakeLLMServer({"m": FakeModel()}, max_n=2) as srv:
        c = client(retries=0)
        first = c.complete(spec(srv), MSGS, [(i, 10 + i) for i in range(5)], "p")
        assert [e["n"] for e in srv.log] == [5, 2, 2, 1]  # refused once, then in requests it takes
        assert all(done.ok for done in first)
        assert c.max_n(spec(srv)) == 2
        srv.log.clear()
        c.complete(spec(srv), [{"role": "user", "content": "again"}], [(i, 20 + i) for i in range(3)], "p")
        assert sorted(e["n"] for e in srv.log) == [1, 2]  # no refused try this time
    assert c.usage["p"].void == 0


def test_prompt_tokens_the_server_took_from_its_cache_are_counted():
    with FakeLLMServer({"m": FakeModel()}) as srv:
        c = client()
        rules = [{"role": "system", "content": "The rules of the game, the same every round. " * 40}]
        for word in ("first", "second"):
            c.complete(spec(srv), [*rules, {"role": "user", "content": word}], [(0, 1)], "p")
    u = c.usage["p"]
    assert 0 < u.cached_prompt_tokens < u.prompt_tokens  # the second request's shared prefix
    assert u.as_dict()["cached_prompt_tokens"] == u.cached_prompt_tokens


def test_request_options_are_sent_kept_in_the_cache_key_and_replayed(tmp_path):
    """``stop`` ends a reply where a real server would; ``logprobs`` come back per token and are
    cached with the text; a request with options never shares a cache entry with one without."""
    with FakeLLMServer({"m": FakeModel()}) as srv:
        c = client(cache=ResponseCache(tmp_path))
        (plain,) = c.complete(spec(srv), MSGS, [(0, 1)], "p")
        (stopped,) = c.complete(spec(srv), MSGS, [(0, 1)], "p", options={"stop": ["understand"]})
        assert stopped.text == plain.text.split("understand")[0] and stopped.finish_reason == "stop"
        (with_lp,) = c.complete(spec(srv), MSGS, [(0, 1)], "p", options={"logprobs": True, "top_logprobs": 3})
        assert with_lp.logprobs and with_lp.logprobs[0]["token"] and not with_lp.cached
        sent = srv.stats.requests
        (again,) = c.complete(spec(srv), MSGS, [(0, 1)], "p", options={"logprobs": True, "top_logprobs": 3})
        assert srv.stats.requests == sent and again.cached and again.logprobs == with_lp.logprobs

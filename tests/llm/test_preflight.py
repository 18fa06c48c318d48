"""Preflight: each distinct model and endpoint is checked once before round 1, against the fake
server on loopback (strict names, keys, faults) and a closed port."""

from __future__ import annotations

import json
import socket
import time
import urllib.request
from types import SimpleNamespace
from urllib.error import HTTPError

import pytest

from skate.errors import ConfigError
from skate.llm import CallFailed, LLMClient, ModelSpec, ResponseCache, RetryPolicy
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.llm.preflight import PreflightError, check_models, preflight
from skate.llm.wire import Reply

MSGS = [{"role": "user", "content": "hello"}]


def spec(base: str, name: str = "ace", **kw) -> ModelSpec:
    kw.setdefault("api_key_env", "SKATE_TEST_NO_KEY")
    return ModelSpec(f"openai/{name}", api_base=base, **kw)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def client():
    # The game's retry policy (4 retries, backoff from 0.5 s): the probe must not use it.
    c = LLMClient(retry=RetryPolicy())
    yield c
    c.close()


@pytest.fixture
def strict():
    with FakeLLMServer({"ace": FakeModel(0.9), "mid": FakeModel(0.6), "low": FakeModel(0.3)}, strict=True) as srv:
        yield srv


def test_a_good_cohort_passes_with_one_probe_per_distinct_model(client, strict):
    players = [(n, spec(strict.api_base, n)) for n in ("ace", "mid", "low")]
    players += [("ace-default", spec(strict.api_base, "ace"))]  # the same model and endpoint as 'ace'
    report = preflight(client, players)
    assert report.ok and report.checks == 3 and report.players == 4
    assert strict.stats.requests == 3 and strict.stats.by_model == {"ace": 1, "mid": 1, "low": 1}
    assert strict.stats.model_lists == 0  # the list is only asked after a 404
    assert {e["max_tokens"] for e in strict.log} == {1} and {e["n"] for e in strict.log} == {1}
    assert report.calls == 3 and report.completion_tokens > 0 and report.cost_usd == 0.0


def test_players_sharing_a_model_and_endpoint_are_probed_once_and_named_together(client, strict):
    players = [(n, spec(strict.api_base, "acee")) for n in ("p1", "p2", "p3")]
    with pytest.raises(PreflightError) as err:
        preflight(client, players)
    assert strict.stats.requests == 1
    assert str(err.value).startswith("players 'p1', 'p2', 'p3' (openai/acee at ")


def test_a_misspelt_model_fails_naming_player_model_and_cause(client, strict):
    players = [("ace", spec(strict.api_base, "ace")), ("bob", spec(strict.api_base, "acee"))]
    start = time.perf_counter()
    with pytest.raises(PreflightError) as err:
        preflight(client, players)
    assert time.perf_counter() - start < 2.0
    msg = str(err.value)
    assert "\n" not in msg  # one line
    assert msg.startswith(
        f"player 'bob' (openai/acee at {strict.api_base}): the server does not serve this model "
        "(HTTP 404: The model `acee` does not exist"
    )
    assert "did you mean 'ace'?" in msg and msg.endswith("(llm.preflight=false skips this check)")
    assert isinstance(err.value, ConfigError)  # so the command line exits with status 2
    (problem,) = err.value.problems
    assert (problem.players, problem.model, problem.kind, problem.status) == (("bob",), "openai/acee", "model", 404)
    assert strict.stats.unknown_model == 1 and strict.stats.model_lists == 1


def test_a_404_with_nothing_like_the_name_lists_what_the_server_serves(client, strict):
    with pytest.raises(PreflightError, match=r"does not serve this model \(HTTP 404: .*; it serves ace, mid, low\)"):
        preflight(client, [("x", spec(strict.api_base, "zzzzzz"))])


def test_a_wrong_api_base_says_so(client, strict):
    base = strict.api_base.replace("/v1", "/v2")  # the fake server lists its models under any path
    with pytest.raises(
        PreflightError,
        match=r"the server lists this model but its chat endpoint answered HTTP 404 "
        r"\(unknown path\); check api_base \(the chat URL is "
        r"http://127.0.0.1:\d+/v2/chat/completions\)",
    ):
        preflight(client, [("ace", spec(base, "ace"))])
    with FakeLLMServer({"*": FakeModel()}) as srv:  # lists nothing
        base = srv.api_base.replace("/v1", "/v2")
        with pytest.raises(
            PreflightError,
            match=r"does not serve this model \(HTTP 404: unknown path\), "
            r"or api_base is wrong",
        ):
            preflight(client, [("ace", spec(base, "ace"))])


def test_a_refused_key_names_the_variable(client, monkeypatch):
    monkeypatch.setenv("SKATE_TEST_KEY", "wrong")
    with FakeLLMServer({"ace": FakeModel()}, api_key="sekrit") as srv:
        with pytest.raises(PreflightError) as err:
            preflight(client, [("ace", spec(srv.api_base, "ace", api_key_env="SKATE_TEST_KEY"))])
        assert srv.stats.requests == 1 and srv.stats.unauthorized == 1
        monkeypatch.setenv("SKATE_TEST_KEY", "sekrit")
        assert preflight(client, [("ace", spec(srv.api_base, "ace", api_key_env="SKATE_TEST_KEY"))]).ok
    msg = str(err.value)
    assert msg.startswith(
        f"player 'ace' (openai/ace at {srv.api_base}): the key was refused (HTTP 401: "
        "Incorrect API key provided.); check SKATE_TEST_KEY"
    )
    assert err.value.problems[0].kind == "key"


def test_a_hosted_model_without_its_key_fails_before_any_call(client, monkeypatch):
    monkeypatch.delenv("SKATE_TEST_UNSET_KEY", raising=False)
    hosted = ModelSpec("openai/gpt-4o", api_key_env="SKATE_TEST_UNSET_KEY")
    with pytest.raises(
        PreflightError,
        match=r"^player 'g' \(openai/gpt-4o at https://api.openai.com/v1\): "
        r"no key: set SKATE_TEST_UNSET_KEY",
    ):
        preflight(client, [("g", hosted)])


def test_an_unreachable_server_fails_fast(client):
    base = f"http://127.0.0.1:{closed_port()}/v1"
    start = time.perf_counter()
    with pytest.raises(PreflightError) as err:
        preflight(client, [("ace", spec(base, "ace")), ("mid", spec(base, "mid"))])
    elapsed = time.perf_counter() - start
    assert elapsed < 5.0  # the game's retry policy would spend 0.5+1+2+4 s per call
    lines = str(err.value).split("\n")
    assert lines == [
        f"player 'ace' (openai/ace at {base}): cannot reach {base}: connection refused",
        (
            f"player 'mid' (openai/mid at {base}): cannot reach {base}: connection refused "
            "(llm.preflight=false skips this check)"
        ),
    ]
    assert err.value.report.calls == 2  # one attempt each, no retry


def test_an_unresolvable_host_says_so(client, monkeypatch):
    monkeypatch.setenv("SKATE_TEST_KEY", "sk-dummy")
    base = "http://skate-preflight-no-such-host.invalid:8000/v1"
    with pytest.raises(
        PreflightError,
        match=r"cannot reach http://skate-preflight-no-such-host.invalid:8000/v1: "
        r"the host name does not resolve",
    ):
        preflight(client, [("ace", spec(base, "ace", api_key_env="SKATE_TEST_KEY"))], timeout_s=5.0)


def test_a_down_server_is_asked_once_more_then_reported(client):
    with FakeLLMServer({"ace": FakeModel(faults={"down": 1.0}), "mid": FakeModel()}) as srv:
        with pytest.raises(PreflightError) as err:
            preflight(
                client, [("ace", spec(srv.api_base, "ace")), ("mid", spec(srv.api_base, "mid"))], retry_delay_s=0.05
            )
        assert srv.stats.by_model == {"ace": 2, "mid": 1}
    assert str(err.value).startswith(
        f"player 'ace' (openai/ace at {srv.api_base}): the server failed twice (HTTP 500: internal error)"
    )
    assert [p.players for p in err.value.problems] == [("ace",)]


def test_a_server_error_that_passes_on_the_second_try_passes(client):
    calls = []

    def flaky(spec, messages, n, seed):
        calls.append(spec)
        if len(calls) == 1:
            raise CallFailed("server", "HTTP 503: busy", True, None, 503)
        return Reply(["OK"], 5, 1)

    c = LLMClient(transport=flaky)
    assert preflight(c, [("ace", spec("http://127.0.0.1:1/v1", "ace"))], retry_delay_s=0.01).ok
    assert len(calls) == 2 and calls[0].max_tokens == 1


def test_a_rate_limit_is_a_warning_not_a_stop(client, caplog):
    with FakeLLMServer({"ace": FakeModel(faults={"rate_limit": 1.0})}, retry_after_s=30) as srv:
        start = time.perf_counter()
        report = preflight(client, [("ace", spec(srv.api_base, "ace"))])
        assert time.perf_counter() - start < 2.0  # Retry-After is not waited for
        assert srv.stats.requests == 1
    assert report.ok and [w.kind for w in report.warnings] == ["rate_limit"]
    assert "rate-limited (HTTP 429: slow down); the model is there, going on" in caplog.text


def test_an_exhausted_quota_is_a_stop():
    def no_quota(spec, messages, n, seed):
        raise CallFailed(
            "rate_limit",
            'HTTP 429: {"error": {"message": "You exceeded your current quota.", "code": "insufficient_quota"}}',
            True,
            None,
            429,
        )

    with pytest.raises(
        PreflightError,
        match=r"the account has no quota left \(HTTP 429: You exceeded your "
        r"current quota.\)",
    ):
        preflight(LLMClient(transport=no_quota), [("g", spec("http://127.0.0.1:1/v1", "g"))])


def test_a_slow_reply_is_a_warning(client):
    with FakeLLMServer({"ace": FakeModel(faults={"slow": 1.0})}, slow_s=1.0) as srv:
        report = check_models(client, [("ace", spec(srv.api_base, "ace"))], timeout_s=0.2)
    assert report.ok and report.warnings[0].kind == "slow" and not report.warnings[0].fatal


def test_other_client_errors_stop_the_run():
    def bad(spec, messages, n, seed):
        raise CallFailed("client", 'HTTP 400: {"error": {"message": "unknown parameter: foo"}}', False, None, 400)

    with pytest.raises(PreflightError, match=r"the server refused the request \(HTTP 400: unknown parameter: foo\)"):
        preflight(LLMClient(transport=bad), [("g", spec("http://127.0.0.1:1/v1", "g"))])


def test_distinct_checks_run_concurrently(client):
    with FakeLLMServer({"a": FakeModel(), "b": FakeModel(), "c": FakeModel(), "d": FakeModel()}, latency_s=0.5) as srv:
        report = preflight(client, [(n, spec(srv.api_base, n)) for n in "abcd"])
    assert report.ok and report.checks == 4 and report.elapsed_s < 1.5  # one after another: 2 s


def test_the_probe_bypasses_the_cache_and_the_usage(tmp_path):
    c = LLMClient(cache=ResponseCache(tmp_path / "cache"), retry=RetryPolicy(max_retries=0))
    with FakeLLMServer({"ace": FakeModel()}) as srv:
        s = spec(srv.api_base, "ace")
        assert preflight(c, [("ace", s)]).ok and preflight(c, [("ace", s)]).ok
        assert srv.stats.requests == 2  # asked each time: nothing was cached
        assert len(c.cache) == 0 and c.usage == {}  # no cache entry, no game call counted
    with FakeLLMServer({"ace": FakeModel()}) as srv:
        s = spec(srv.api_base, "ace")
        assert c.complete(s, MSGS, [(0, 1)], "ace")[0].ok  # a game call, now cached
        base = srv.api_base
    # The server is gone: the cache still serves the game's call, but the probe sees the truth.
    assert c.complete(s, MSGS, [(0, 1)], "ace")[0].cached
    with pytest.raises(PreflightError, match=f"cannot reach {base}: connection refused"):
        preflight(c, [("ace", s)])
    assert len(c.cache) == 1 and c.usage["ace"].calls == 1
    c.close()


def test_player_objects_are_accepted_and_others_skipped(client, strict):
    players = [
        SimpleNamespace(name="ace", spec=spec(strict.api_base, "ace")),
        SimpleNamespace(name="sim", true_skill=0.5),
        ("mid", spec(strict.api_base, "mid")),
    ]
    report = preflight(client, players)
    assert report.ok and report.players == 2 and strict.stats.requests == 2
    assert preflight(client, [SimpleNamespace(name="sim")]).checks == 0


def test_a_litellm_provider_without_a_route_gives_a_clear_line(client, monkeypatch):
    pytest.importorskip("litellm")
    monkeypatch.setenv("SKATE_TEST_ANTHROPIC_KEY", "sk-ant-dummy")
    base = f"http://127.0.0.1:{closed_port()}"
    claude = ModelSpec("anthropic/claude-3-haiku-20240307", api_base=base, api_key_env="SKATE_TEST_ANTHROPIC_KEY")
    assert not claude.openai_compatible  # this goes through LiteLLM
    with pytest.raises(PreflightError) as err:
        preflight(client, [("claude", claude)], timeout_s=5.0)
    # LiteLLM reports a refused connection as an HTTP 500: the cause is found under it.
    assert str(err.value) == (
        f"player 'claude' (anthropic/claude-3-haiku-20240307 at {base}): cannot reach {base}: "
        "connection refused (llm.preflight=false skips this check)"
    )
    assert err.value.report.calls == 1  # not asked again as a server failure


# ------------------------------------------------------------------------- the fake server
def _get(url: str, key: str | None = None) -> tuple[int, dict]:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"} if key else {})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _chat(url: str, model: str, key: str | None = None) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})}
    req = urllib.request.Request(
        url + "/chat/completions",
        method="POST",
        headers=headers,
        data=json.dumps({"model": model, "messages": MSGS}).encode(),
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_the_fake_server_lists_its_models_without_the_wildcard():
    with FakeLLMServer({"ace": FakeModel(), "*": FakeModel()}) as srv:
        status, body = _get(srv.api_base + "/models")
        assert status == 200 and body["object"] == "list"
        assert [(m["id"], m["object"]) for m in body["data"]] == [("ace", "model")]
        assert srv.stats.model_lists == 1 and srv.stats.requests == 0


def test_the_fake_server_serves_any_name_unless_strict():
    with FakeLLMServer({"ace": FakeModel()}) as srv:
        assert _chat(srv.api_base, "anything")[0] == 200
    with FakeLLMServer({"ace": FakeModel(), "*": FakeModel()}, strict=True) as srv:
        assert _chat(srv.api_base, "anything")[0] == 200  # the wildcard serves every name
    with FakeLLMServer({"ace": FakeModel()}, strict=True) as srv:
        assert _chat(srv.api_base, "ace")[0] == 200
        status, body = _chat(srv.api_base, "acee")
        assert status == 404 and body["error"]["code"] == "model_not_found" and "`acee`" in body["error"]["message"]
        assert srv.stats.requests == 2 and srv.stats.unknown_model == 1


def test_the_fake_server_asks_for_its_key():
    with FakeLLMServer({"ace": FakeModel()}, api_key="sekrit") as srv:
        assert _chat(srv.api_base, "ace")[0] == 401
        status, body = _chat(srv.api_base, "ace", key="wrong")
        assert status == 401 and body["error"]["code"] == "invalid_api_key"
        assert _chat(srv.api_base, "ace", key="sekrit")[0] == 200
        assert _get(srv.api_base + "/models")[0] == 401
        assert _get(srv.api_base + "/models", key="sekrit")[0] == 200
        assert srv.stats.unauthorized == 3 and srv.stats.requests == 3 and srv.stats.completion_choices == 1

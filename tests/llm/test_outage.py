"""A model's endpoint that stops answering is waited for, not voided (skate.llm.outage): against the
real fake server on loopback, killed and started again, or answering 500 to every request; and
what is no outage (a 4xx, a 429, an unreadable reply, one request the server fails alone) keeps
the usual rules."""

from __future__ import annotations

import threading
import time

import pytest

import skate
from skate.errors import ConfigError
from skate.llm import LLMClient, ModelSpec, ModelUnreachable, RetryPolicy
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.llm.outage import Outages, short, unreachable
from skate.llm.wire import CallFailed, Reply

MSGS = [{"role": "user", "content": "hello"}]


def spec(srv_or_base, name="m", **kw):
    base = srv_or_base if isinstance(srv_or_base, str) else srv_or_base.api_base
    return ModelSpec(f"openai/{name}", api_base=base, api_key_env="SKATE_TEST_NO_KEY", **kw)


def client(wait_s=30.0, retries=1, **kw):
    told: list[dict] = []
    c = LLMClient(
        retry=RetryPolicy(max_retries=retries, backoff_s=0.01, max_backoff_s=0.05),
        outage_wait_s=wait_s,
        on_outage=told.append,
        **kw,
    )
    return c, told


def states(told):
    return [t["state"] for t in told if t["state"] != "waiting"]


def until(check, what):
    """Wait for ``check()`` (no assertion on how long: a bound that only catches a hang)."""
    deadline = time.monotonic() + 60
    while not check():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.005)


def in_threads(fn, n):
    out = [None] * n
    errors = []

    def run(i):
        try:
            out[i] = fn(i)
        except BaseException as exc:  # noqa: BLE001 - the test looks at it
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    return threads, out, errors


def test_a_killed_server_is_waited_for_and_every_held_call_is_answered_when_it_is_back():
    with FakeLLMServer({"m": FakeModel()}) as srv:
        c, told = client()
        m = spec(srv)
        assert c.complete(m, MSGS, [(0, 0)], "p")[0].ok  # a kept-alive connection, cut by the kill
        srv.stop()
        threads, out, errors = in_threads(lambda i: c.complete(m, MSGS, [(i, i)], f"p{i % 3}"), 6)
        until(lambda: c.outages.down(), "the endpoint is found down")
        requests = srv.stats.requests
        srv.start()  # the same port, after a pause longer than the retry budget
        for t in threads:
            t.join()
        c.close()
    assert not errors
    assert all(r[0].ok for r in out) and c.total().void == 0
    assert srv.stats.requests >= requests + 6  # each held call was sent again
    assert states(told) == ["down", "up"]
    down, up = (t for t in told if t["state"] != "waiting")
    assert down["model"] == "openai/m" and down["endpoint"] == srv.api_base and down["kind"] == "transport"
    assert up["probes"] >= 1 and up["down_s"] > 0 and up["held"] >= 1
    # the probes went out one at a time, each told (the progress shows the wait)
    assert sum(t["state"] == "waiting" for t in told) == up["probes"]


def test_a_model_answering_500_to_every_request_is_down_until_it_answers():
    with FakeLLMServer({"m": FakeModel(faults={"down": 1.0}), "ok": FakeModel()}) as srv:
        c, told = client()
        threads, out, errors = in_threads(lambda i: c.complete(spec(srv), MSGS, [(i, i)], "p"), 3)
        until(lambda: c.outages.down(), "the model is found down")
        # Another model of the same server is not held up meanwhile.
        assert c.complete(spec(srv, "ok"), MSGS, [(0, 0)], "q")[0].ok
        assert [k[0] for k in c.outages.down()] == ["openai/m"]
        srv.brain.models["m"] = FakeModel()  # it recovers
        for t in threads:
            t.join()
    assert not errors and all(r[0].ok for r in out) and c.total().void == 0
    assert states(told) == ["down", "up"] and told[0]["kind"] == "server" and told[0]["status"] == 500


def test_an_endpoint_down_past_the_wait_stops_the_run_and_every_later_call():
    with FakeLLMServer({"m": FakeModel(faults={"down": 1.0}), "ok": FakeModel()}) as srv:
        c, told = client(wait_s=0.2)
        threads, out, errors = in_threads(lambda i: c.complete(spec(srv), MSGS, [(i, i)], "p"), 3)
        for t in threads:
            t.join()
        assert len(errors) == 3 and all(isinstance(e, ModelUnreachable) for e in errors)
        message = str(errors[0])
        assert "\n" not in message and message.startswith(f"openai/m at {srv.api_base} did not answer for ")
        assert "llm.outage_wait_s=0.2" in message and "HTTP 500" in message
        assert errors[0].model == "openai/m" and errors[0].waited_s >= 0.2
        with pytest.raises(ModelUnreachable):  # the run is stopping: no new call, to any model
            c.complete(spec(srv, "ok"), MSGS, [(0, 0)], "q")
    assert states(told) == ["down", "gave_up"] and told[-1]["down_s"] >= 0.2
    assert c.total().void == 0


def test_with_no_wait_a_dead_endpoint_is_void_as_before():
    with FakeLLMServer({"m": FakeModel()}) as srv:
        base = srv.api_base
    c, told = client(wait_s=0)
    (done,) = c.complete(spec(base), MSGS, [(0, 1)], "p")
    assert not done.ok and done.void.startswith("transport") and done.attempts == 2 and not told


@pytest.mark.parametrize(
    ("fault", "kind"), [("rate_limit", "rate_limit"), ("malformed", "malformed"), ("refuse_logprobs", None)]
)
def test_a_server_that_answers_with_errors_of_its_own_is_no_outage(fault, kind):
    """429 keeps its Retry-After rules, an unreadable reply its retries, a 400 is not retried: each
    ends void (or refused) as before, with no outage."""
    with FakeLLMServer({"m": FakeModel(faults={fault: 1.0})}, retry_after_s=0.01) as srv:
        c, told = client(retries=2)
        options = {"logprobs": True} if fault == "refuse_logprobs" else None
        if kind is None:
            with pytest.raises(Exception, match="logprobs refused"):
                c.complete(spec(srv), MSGS, [(0, 1)], "p", options=options)
            assert srv.stats.requests == 1
        else:
            (done,) = c.complete(spec(srv), MSGS, [(0, 1)], "p")
            assert not done.ok and done.void.startswith(kind) and srv.stats.requests == 3
    assert not told and not c.outages.down()


def test_a_404_is_void_at_once():
    with FakeLLMServer({"m": FakeModel()}) as srv:
        c, told = client(retries=3)
        bad = spec(srv.api_base.replace("/v1", "/nope"))
        (done,) = c.complete(bad, MSGS, [(0, 1)], "p")
        assert srv.stats.not_found == 1
    assert done.void.startswith("client: HTTP 404") and not told


def test_one_request_the_server_fails_while_it_answers_others_is_void():
    """A request that gets 500 every time while the same model answers other requests sent after
    its first failure is that request's own failure: void, no outage, nobody held."""
    first_failure, other_answered = threading.Event(), threading.Event()

    def send(spec_, messages, n, seed, **_):
        if seed == 13:
            if first_failure.is_set():
                other_answered.wait(30)
            first_failure.set()
            raise CallFailed("server", "HTTP 500: this request breaks the server", True, None, 500)
        return Reply(["fine"] * n)

    c, told = client(retries=2, transport=send)
    m = spec("http://127.0.0.1:9/v1")
    threads, out, errors = in_threads(lambda i: c.complete(m, MSGS, [(0, 13)], "p"), 1)
    first_failure.wait(30)
    assert c.complete(m, MSGS, [(0, 1)], "q")[0].ok
    other_answered.set()
    threads[0].join()
    assert not errors and not out[0][0].ok and out[0][0].void.startswith("server")
    assert not told and c.usage["p"].void == 1


def test_embeddings_wait_for_their_endpoint_too():
    calls = {"n": 0}

    def embed(spec_, texts):
        calls["n"] += 1
        if calls["n"] <= 4:
            raise CallFailed("transport", "cannot connect", True)
        return [[1.0, 0.0] for _ in texts], 2

    c, told = client(retries=1)
    vectors = c.embed(spec("http://127.0.0.1:9/v1", "e"), ["a", "b"], "embedder", embed)
    assert vectors == [[1.0, 0.0], [1.0, 0.0]] and states(told) == ["down", "up"]


def test_closing_the_client_ends_the_held_calls():
    with FakeLLMServer({"m": FakeModel(faults={"down": 1.0})}) as srv:
        c, told = client()
        threads, out, errors = in_threads(lambda i: c.complete(spec(srv), MSGS, [(i, i)], "p"), 2)
        until(lambda: c.outages.down(), "the model is found down")
        c.close()
        for t in threads:
            t.join()
    assert len(errors) == 2 and all(isinstance(e, ModelUnreachable) for e in errors)


@pytest.mark.parametrize(
    ("exc", "down"),
    [
        (CallFailed("transport", "refused", True), True),
        (CallFailed("timeout", "no reply", True), True),
        (CallFailed("server", "HTTP 503", True, None, 503), True),
        (CallFailed("server", "HTTP 408", True, None, 408), True),
        (CallFailed("server", "HTTP 409", True, None, 409), False),
        (CallFailed("rate_limit", "429", True, 1.0, 429), False),
        (CallFailed("client", "HTTP 400", False, None, 400), False),
        (CallFailed("malformed", "not JSON", True), False),
    ],
)
def test_what_counts_as_unreachable(exc, down):
    assert unreachable(exc) is down


@pytest.mark.parametrize(
    ("detail", "said"),
    [
        (
            "cannot connect to http://h:1/v1: HTTPConnection(host='h', port=1): Failed to establish a new connection: "
            "[Errno 111] Connection refused",
            "Connection refused",
        ),
        ("cannot connect to http://nowhere/v1: ... [Errno -2] Name or service not known)", "Name or service not known"),
        ('HTTP 503: {"error": "overloaded"}', 'HTTP 503: {"error": "overloaded"}'),
    ],
)
def test_the_stop_line_gives_the_reason_in_short(detail, said):
    assert short(detail) == said


def test_a_negative_wait_is_refused_in_one_line():
    with pytest.raises(ConfigError, match=r"^llm\.outage_wait_s=-1\.0 is invalid: must be >= 0") as info:
        skate.config(values={"llm.outage_wait_s": -1})
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match="must be >= 0"):
        Outages(-1)

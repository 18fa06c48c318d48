"""embedder=openai against a real OpenAI-compatible server on loopback (skate.llm.fake_server's
/v1/embeddings route): vectors, cache, usage, retries, and the errors a user can fix."""

from __future__ import annotations

import copy
import dataclasses
import functools
import json

import numpy as np
import pytest

import skate
from skate.embedders import EmbedderUnavailable, HashingEmbedder, NoveltyIndex, OpenAIEmbedder, build_embedder
from skate.errors import ConfigError
from skate.llm import LLMClient, ResponseCache, RetryPolicy
from skate.llm.client import EmbeddingFailed
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.runlog.records import StopRun
from skate.runner import run_game

TEXTS = ["total = 0\nfor i in range(10):\n    total += i\nprint(total)", "print('banana'[::-1])", "x = [1, 2]"]


@functools.cache
def openai_section():
    """embedder=openai's section, as a game's settings make it (its cache keys are llm's)."""
    return skate.config(embedder="openai").embedder


def openai_at(api_base: str, tmp_path, **keys):
    """The section for the test model at ``api_base``, its cache in ``tmp_path``."""
    return dataclasses.replace(
        openai_section(), api_base=api_base, model="openai/emb-small", cache_dir=str(tmp_path / "cache"), **keys
    )


def embedder(server, tmp_path, **keys) -> OpenAIEmbedder:
    return build_embedder(openai_at(server.api_base, tmp_path, **keys))


def test_vectors_come_from_the_endpoint(server, tmp_path):
    emb = embedder(server, tmp_path)
    got = emb.embed(TEXTS)
    want = HashingEmbedder(dim=256).embed(TEXTS)  # what the fake server computes
    assert got.shape == (3, 256) and np.allclose(got, want, atol=1e-6)
    assert server.stats.embedding_requests == 1 and server.stats.embedded_texts == 3  # one batched request
    assert emb.threshold == 0.336  # the paper's default
    emb.close()


def test_repeat_is_a_cache_hit_and_usage_is_counted(server, tmp_path):
    emb = embedder(server, tmp_path)
    first = emb.embed(TEXTS)
    usage = emb.client().usage["@embedder"]
    tokens = sum(len(t) for t in TEXTS) // 4 + len(TEXTS)  # the fake server's count
    assert (usage.calls, usage.samples, usage.cached, usage.prompt_tokens) == (1, 3, 0, tokens)
    assert usage.cost_usd == pytest.approx(tokens * 0.02 / 1e6)
    emb.close()
    again = embedder(server, tmp_path)  # a new process would see the same disk cache
    second = again.embed(TEXTS)
    assert np.array_equal(first, second)  # float32 either way: replays give the same numbers
    assert server.stats.embedded_texts == 3
    usage = again.client().usage["@embedder"]
    assert (usage.calls, usage.cached, usage.prompt_tokens) == (0, 3, 0)
    again.close()


def test_transient_failures_are_retried(tmp_path):
    with FakeLLMServer({"*": FakeModel(faults={"rate_limit": 0.5})}, retry_after_s=0.01) as srv:
        emb = embedder(srv, tmp_path, cache=False)  # llm.cache=false
        emb.connect(LLMClient(retry=RetryPolicy(max_retries=8, backoff_s=0.01, max_backoff_s=0.02)), check=False)
        for text in TEXTS * 3:
            emb.embed([text])
        usage = emb.client().usage["@embedder"]
        assert srv.stats.by_fault.get("rate_limit", 0) == usage.retries > 0
        assert usage.calls == 9 + usage.retries


def test_a_server_that_keeps_failing_stops_the_run_with_the_reason(tmp_path):
    with FakeLLMServer({"*": FakeModel(faults={"server_error": 1.0})}) as srv:
        emb = embedder(srv, tmp_path)
        emb.connect(LLMClient(retry=RetryPolicy(max_retries=2, backoff_s=0.01)), check=False)
        with pytest.raises(EmbeddingFailed) as err:
            emb.embed(TEXTS)
        assert isinstance(err.value, StopRun)  # the engine stops cleanly; the run can be resumed
        assert "openai/emb-small" in str(err.value) and "HTTP 500" in str(err.value)
        assert srv.stats.embedding_requests == 3


def test_a_refused_key_is_one_clear_line(tmp_path, monkeypatch):
    monkeypatch.setenv("SKATE_TEST_EMBED_KEY", "wrong")
    with FakeLLMServer({"*": FakeModel()}, api_key="right") as srv:
        emb = embedder(srv, tmp_path, api_key_env="SKATE_TEST_EMBED_KEY")
        with pytest.raises(EmbedderUnavailable) as err:
            emb.connect(LLMClient())
    message = str(err.value)
    assert "key was refused" in message and "SKATE_TEST_EMBED_KEY" in message and "\n" not in message


def test_a_missing_model_is_one_clear_line(tmp_path):
    with FakeLLMServer({"ace": FakeModel()}, strict=True) as srv:
        emb = embedder(srv, tmp_path)
        with pytest.raises(
            EmbedderUnavailable,
            match=r"openai/emb-small .* does not serve this embedding model.*"
            r"check embedder.model and embedder.api_base",
        ):
            emb.check()


def test_a_hosted_model_without_its_key_is_refused_at_build(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="set the OPENAI_API_KEY environment variable"):
        build_embedder(openai_section())


def test_settings_made_outside_a_game_name_what_they_lack_before_a_client_of_their_own():
    """The schema's cache keys follow llm's (``${llm.cache_dir}``): settings made without a game's
    have no client of their own to make, and say so; given them, or a client, they embed."""
    bare = OpenAIEmbedder(api_base="http://127.0.0.1:9/v1", model="openai/emb-small")
    with pytest.raises(ConfigError, match=r"embedder.cache=.*skate.config\(embedder=...\).embedder"):
        bare.client()


def test_bad_settings_are_config_errors():
    with pytest.raises(ConfigError, match="embedder.batch_size=0"):
        build_embedder(dataclasses.replace(openai_section(), api_base="http://127.0.0.1:9/v1", batch_size=0))


def test_a_game_counts_embedding_calls_in_its_usage(server, tmp_path):
    """A simulated cohort with embedder=openai: the run builds a client for the embedder, its
    calls appear in usage.json as @embedder, and a replay is served from the cache."""
    settings = skate.config(
        values={
            "game.rounds": 2,
            "report": False,
            "embedder.api_base": server.api_base,
            "embedder.model": "openai/emb-small",
            "llm.cache_dir": str(tmp_path / "cache"),
        },
        game="mathquiz",
        logger="none",
        sandbox="subprocess",
        embedder="openai",
    )
    result = run_game(copy.deepcopy(settings), tmp_path / "one")
    usage = json.loads((tmp_path / "one" / "usage.json").read_text())["players"]["@embedder"]
    tasks = sum(result.summary.tasks_by_setter.values())
    assert usage["calls"] >= 1 and usage["prompt_tokens"] > 0 and usage["samples"] >= tasks > 0
    assert usage["cost_usd"] == pytest.approx(usage["prompt_tokens"] * 0.02 / 1e6, abs=1e-6)
    sent = server.stats.embedded_texts
    again = run_game(settings, tmp_path / "two")
    usage = json.loads((tmp_path / "two" / "usage.json").read_text())["players"]["@embedder"]
    # Only the check before round 1 reaches the server (it bypasses the cache, like the players' preflight).
    assert server.stats.embedded_texts == sent + 1 and usage["calls"] == 0 and usage["cached"] == usage["samples"]
    assert again.table == result.table


def test_index_uses_the_endpoints_vectors(server, tmp_path):
    idx = NoveltyIndex(embedder(server, tmp_path))
    idx.add("alice", idx.check("alice", TEXTS[0])[2])
    unique, dist, _ = idx.check("alice", TEXTS[0].replace("10", "99"))
    assert not unique and dist < 1e-6  # the hashing vectors fold numbers: a copy
    ResponseCache(tmp_path / "cache").close()


def test_an_unreachable_server_is_one_clear_line(tmp_path):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(EmbedderUnavailable, match=r"cannot reach the server .*check embedder.api_base"):
        build_embedder(openai_at(f"http://127.0.0.1:{port}/v1", tmp_path)).check()

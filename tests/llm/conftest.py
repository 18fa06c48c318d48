"""LLM players against a real OpenAI-compatible HTTP server on loopback (skate.llm.fake_server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.llm.transport import close_pools
from skate.settings.config import compose_config

SKILLS = {"ace": 0.9, "mid": 0.6, "low": 0.3}


@pytest.fixture(autouse=True)
def _close_connections():
    """Each test starts its own servers on new ports: close the client's kept-alive connections
    to them after it, so the session does not pile up open sockets."""
    yield
    close_pools()


def cohort(base: str, names=("ace", "mid", "low"), **extra) -> str:
    """A players.llm override naming fake models served at ``base``."""
    opts = "".join(f", {k}: {v}" for k, v in extra.items())
    return "[" + ", ".join(f"{{name: {n}, model: openai/{n}, api_base: '{base}', api_key_env: SKATE_TEST_NO_KEY{opts}}}"
                           for n in names) + "]"


def llm_config(base: str, cache_dir: Path, *overrides: str, names=("ace", "mid", "low"), **extra):
    return compose_config([
        "game.rounds=3", "logger=none", "report=false", "players.simulated=[]", f"players.llm={cohort(base, names, **extra)}",
        "estimator=fixed_n", "estimator.n=6", f"llm.cache_dir={cache_dir}", "llm.backoff_s=0.01",
        "llm.max_backoff_s=0.05",
        # The game tests count the server's requests and play dead models on purpose; the
        # preflight check has its own tests (test_preflight.py, test_llm_game.py's preflight test).
        "llm.preflight=false", *overrides])


class RecordingServer(FakeLLMServer):
    """The fake server, keeping every request's last user message (``users``)."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.users: list[str] = []
        reply = self.brain.reply

        def record(name, messages, seed, index):
            self.users.append(messages[-1]["content"])
            return reply(name, messages, seed, index)

        self.brain.reply = record


@pytest.fixture
def server():
    with FakeLLMServer({n: FakeModel(s) for n, s in SKILLS.items()}) as srv:
        yield srv

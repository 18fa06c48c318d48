"""LLM players against a real OpenAI-compatible HTTP server on loopback (skate.llm.fake_server)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import skate
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.llm.transport import close_pools
from skate.players.config import LLMPlayerConfig
from skate.settings.config import SkateConfig

SKILLS = {"ace": 0.9, "mid": 0.6, "low": 0.3}


@pytest.fixture(autouse=True)
def _close_connections():
    """Each test starts its own servers on new ports: close the client's kept-alive connections
    to them after it, so the session does not pile up open sockets."""
    yield
    close_pools()


def llm_players(base: str, names=("ace", "mid", "low"), **extra: Any) -> list[LLMPlayerConfig]:
    """``players.llm``: the fake models ``names`` served at ``base`` (``extra``: keys every player
    gets, e.g. ``timeout_s=0.3``)."""
    return [
        LLMPlayerConfig(name=n, model=f"openai/{n}", api_base=base, api_key_env="SKATE_TEST_NO_KEY", **extra)
        for n in names
    ]


def cohort(base: str, names=("ace", "mid", "low"), **extra) -> str:
    """The same players as a ``players.llm=`` override, for a command line."""
    opts = "".join(f", {k}: {v}" for k, v in extra.items())
    return (
        "["
        + ", ".join(
            f"{{name: {n}, model: openai/{n}, api_base: '{base}', api_key_env: SKATE_TEST_NO_KEY{opts}}}" for n in names
        )
        + "]"
    )


def llm_values(base: str, cache_dir: Path, names=("ace", "mid", "low"), **extra: Any) -> dict[str, Any]:
    """The values of a short game of fake models served at ``base`` (:func:`llm_config`'s)."""
    return {
        "game.rounds": 3,
        "report": False,
        "players.simulated": [],
        "players.llm": llm_players(base, names, **extra),
        "estimator.n": 6,
        "llm.cache_dir": str(cache_dir),
        "llm.backoff_s": 0.01,
        "llm.max_backoff_s": 0.05,
        # The game tests count the server's requests and play dead models on purpose; the
        # preflight check has its own tests (test_preflight.py, test_llm_game.py's preflight test).
        "llm.preflight": False,
    }


def llm_config(
    base: str,
    cache_dir: Path,
    values: Mapping[str, Any] | None = None,
    *strings: str,
    names=("ace", "mid", "low"),
    each: Mapping[str, Any] | None = None,
    **choices: str,
) -> SkateConfig:
    """A short game of the fake models ``names`` served at ``base``, as settings (``skate.config``):
    ``values`` go over :func:`llm_values`' (``{"game.rounds": 2}``), ``choices`` are group options
    (``game="mathquiz"``; ``logger=none`` and ``estimator=fixed_n`` unless given), ``each`` the keys
    every player gets (``{"timeout_s": 0.3}``)."""
    if isinstance(values, str) or strings:  # the override strings it took before skate.config
        raise TypeError(
            f"llm_config takes values as a dict and group choices as keywords, not {values!r}: "
            'llm_config(base, cache_dir, {"game.rounds": 2}, game="mathquiz")'
        )
    return skate.config(
        values={**llm_values(base, cache_dir, names, **(each or {})), **(values or {})},
        **{"logger": "none", "estimator": "fixed_n", **choices},
    )


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

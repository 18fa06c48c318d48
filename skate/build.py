"""The one assembly: a run's parts built from its settings (:func:`assemble`), for every tool
that plays or prepares a game (:mod:`skate.runner`, :mod:`skate.optimize`,
:mod:`skate.cli.sensitivity`), and the builders it uses (``python -m skate.sandbox`` builds a sandbox
alone)."""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any

from hydra.errors import InstantiationException
from hydra.utils import instantiate

from skate.errors import ConfigError
from skate.games import GameEnv
from skate.engine import Parts
from skate.games.base import Game
from skate.llm import LLMClient, Price, ResponseCache, RetryPolicy
from skate.llm.preflight import preflight
from skate.embedders import build_embedder, connect_embedder
from skate.players.simulated import build_simulated
from skate.sandbox import NoSandbox, Sandbox, SandboxUnavailable
from skate.estimators import estimator as estimator_registry


# A model's twin with its default prompts, when optimizer.compare is on.
DEFAULT_SUFFIX = "-default"


def assemble(settings: Any, cleanup: contextlib.ExitStack, *, for_game: bool = True, simulated: bool = True,
             llm: bool = True, compare: bool = True, check_models: bool = True) -> Parts:
    """Build a run's parts from its settings (a :class:`skate.config.SkateConfig`). What must be
    closed (the sandbox, the model client) is closed by ``cleanup``, last opened first.

    ``for_game``: also the rating backend, the setters' augmentation, the estimator and the
    logger, and the language-model players as the game plays them (one greedy answer under a
    greedy estimator; with ``optimizer.compare`` and ``compare``, each model's twin with its default
    prompts). ``simulated``/``llm``: which players. ``check_models``: one cheap call per model
    and endpoint first (``llm.preflight``), so that a dead one stops the run now."""
    s = settings
    game = build_game(s.game)
    embedder = build_embedder(s.embedder)  # one line (ConfigError) when it cannot run here
    own = ({"rating": instantiate(s.rating, _convert_="all"), "aug": instantiate(s.aug, _convert_="all"),
            "estimator": instantiate(s.estimator, _convert_="all"), "logger": instantiate(s.logger, _convert_="all")}
           if for_game else {})
    sandbox = build_sandbox(s.sandbox) if game.runs_programs else NoSandbox()
    cleanup.callback(sandbox.close)
    refusal = game.check_sandbox(sandbox)
    if refusal:
        raise ConfigError(refusal)
    env = GameEnv(sandbox=sandbox, seed=s.seed, pass_mark=float(s.rating.p_thresh))
    players: list[Any] = []
    client: LLMClient | None = None
    if simulated and s.players.simulated:
        players += build_simulated(s.players.simulated, game.simulation(env), s.seed)
    if llm and s.players.llm:
        from skate.players.llm import build_llm_players  # loads DSPy (about a second): only for model players

        client = client_of(s.llm, cleanup)
        configs = [dataclasses.asdict(c) for c in s.players.llm]
        if for_game and estimator_registry.of(s.estimator).component.greedy_decoding:  # one greedy answer a task
            for c in configs:
                c["temperature"] = float(s.estimator.llm_temperature)
                if s.estimator.max_tokens is not None:
                    c["max_tokens"] = int(s.estimator.max_tokens)
        if for_game and compare and s.optimizer.compare:  # each model also plays with its default prompts
            configs += [{**c, "name": c["name"] + DEFAULT_SUFFIX} for c in configs]
        players += build_llm_players(configs, client, lambda: game.modules(env))
        if check_models and s.llm.preflight:
            # One cheap call per distinct model and endpoint: a dead one stops the run now, not
            # after every round of void calls (PreflightError is a ConfigError: one line, exit 2).
            preflight(client, players)
    if getattr(embedder, "uses_client", False):  # embedder=openai: its calls are the run's (cache, usage, budget)
        if client is None:
            client = client_of(s.llm, cleanup)
        connect_embedder(embedder, client, check=bool(s.llm.preflight))
    return Parts(game=game, sandbox=sandbox, env=env, embedder=embedder, players=players, client=client, **own)


def client_of(llm: Any, cleanup: contextlib.ExitStack) -> LLMClient:
    client = build_client(llm)
    cleanup.callback(client.close)
    return client


def build_game(game_settings: Any) -> Game:
    """The game its settings name; a game that cannot be built from them (e.g. a corpus with no
    documents) raises a one-line :class:`ConfigError`."""
    try:
        return instantiate(game_settings, _convert_="all")
    except InstantiationException as exc:
        cause = exc.__cause__
        if isinstance(cause, (ValueError, OSError)):
            raise ConfigError(f"game={game_settings.name}: {cause}") from None
        raise


def build_sandbox(sandbox_cfg: Any) -> Sandbox:
    """Instantiate the configured sandbox; a sandbox that cannot run here raises SandboxUnavailable."""
    try:
        return instantiate(sandbox_cfg, _convert_="all")
    except Exception as exc:
        cause: BaseException | None = exc
        while cause is not None:
            if isinstance(cause, SandboxUnavailable):
                raise cause from None
            if isinstance(cause, (ValueError, TypeError)) and cause is not exc:
                raise ConfigError(f"sandbox: {cause}") from None
            cause = cause.__cause__
        raise



def build_client(c: Any) -> LLMClient:
    """The one model client every LLM player of the run shares."""
    cache = ResponseCache(c.cache_dir) if c.cache else None
    retry = RetryPolicy(c.max_retries, c.backoff_s, c.max_backoff_s, c.max_retry_after_s)
    prices = {k: Price(v.get("input_per_mtok", 0.0), v.get("output_per_mtok", 0.0)) for k, v in c.prices.items()}
    return LLMClient(cache=cache, retry=retry, concurrency=c.concurrency,
                     endpoint_concurrency=dict(c.endpoint_concurrency), prices=prices,
                     budget_usd=c.budget_usd, structured=str(c.structured))


def usage_summary(client) -> dict[str, Any]:
    """Calls, cache hits, void samples, retries, tokens and cost: per player and for the run."""
    return {"players": {name: u.as_dict() for name, u in sorted(client.usage.items())},
            "total": client.total().as_dict(),
            "budget_usd": client.budget_usd,
            # per model: json_schema / json_object (structured output), or text where refused
            "structured_output": client.structured_formats()}

"""The one assembly of a game's parts from its settings (:func:`assemble`), and the small builders
it is made of, which the tools that need less compose themselves: the game on its table
(:func:`build_table`: the game, its sandbox and environment, the embedder), the model client
(:func:`open_client`), the players (:func:`simulated_players`, :func:`llm_players`) and the
models' check (:func:`prepare_models`). ``skate optimize`` builds the table, the client and the
model players; the sensitivity probe the table, the client and every player; a leaderboard
placement adds the game's estimator and its decoding. Every part is finished when built: the
rating backend knows what the log keeps, the client where its void calls and outages go, a model player how
the estimator wants it to decode. (``skate sandbox`` builds a sandbox alone.)"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from skate.augment import Augmentation
from skate.embedders import Embedder, build_embedder, connect_embedder
from skate.errors import ConfigError
from skate.estimators.base import estimator as estimators
from skate.games import GameEnv, get_game
from skate.games.base import Game, GameConfig
from skate.llm import LLMClient, Price, ResponseCache, RetryPolicy
from skate.llm.config import LLMConfig
from skate.llm.counts import purpose_counts
from skate.llm.preflight import preflight
from skate.loggers.base import logger as loggers
from skate.loop import Parts
from skate.players.base import Player
from skate.players.config import LLMPlayerConfig
from skate.players.simulated import build_simulated
from skate.ratings.base import rating as ratings
from skate.runlog import events as ev
from skate.runlog.files import THINKING_FILE, EventLog, ThinkingLog
from skate.runlog.records import PASS_MARK, Decoding
from skate.runlog.replies import REPLIES_FILE, ReplyLog
from skate.sandbox import NoSandbox, Sandbox, SandboxUnavailable
from skate.sandbox.config import SandboxConfig
from skate.sandbox.config import sandbox as sandboxes
from skate.settings.config import SkateConfig, record_of

log = logging.getLogger(__name__)

# A model's twin with its default prompts, when optimizer.compare is on.
DEFAULT_SUFFIX = "-default"


@dataclass(frozen=True)
class Table:
    """What every tool that plays or prepares a game sets out first: the game, the sandbox its
    programs run in, its environment (the sandbox, the run's seed, the pass mark) and the embedder."""

    game: Game
    sandbox: Sandbox
    env: GameEnv
    embedder: Embedder


def assemble(settings: SkateConfig, cleanup: contextlib.ExitStack, log: EventLog) -> Parts:
    """A game's parts from its settings, each one finished:
    the rating backend records each pairwise update when ``log`` keeps them (as a resumed log
    began, else ``events.rating_updates``), the model client writes its void calls to ``log``, the
    model players decode as the estimator asks (greedy: one answer at temperature 0), and with
    ``optimizer.compare`` each model also plays as its twin with its default prompts. Each model
    and endpoint is checked first (``llm.preflight``). What must be closed (the sandbox, the model
    client) is closed by ``cleanup``, last opened first; nothing is written to ``log`` here."""
    s = settings
    table = build_table(s, cleanup)
    rating = ratings.build(s.rating, record_pairs=log.keeps_pairs(s.events.rating_updates))
    aug, logger = Augmentation(s.aug), loggers.build(s.logger)
    estimator = build_estimator(s)
    thinking = ThinkingLog(log.path.parent / THINKING_FILE) if s.llm.keep_thinking else None
    if thinking is not None:
        cleanup.callback(thinking.close)
    replies = ReplyLog(log.path.parent / REPLIES_FILE, replay=log.resumed) if s.events.replies else None
    if replies is not None:
        cleanup.callback(replies.close)
    client = open_client(
        s,
        table,
        cleanup,
        on_void=lambda info: log.write(ev.ModelCallVoid(**info)),
        on_outage=_outages_to(log, logger),
        on_thinking=thinking,
        on_reply=replies.reply if replies is not None else None,
    )
    twins = [dataclasses.replace(c, name=c.name + DEFAULT_SUFFIX) for c in s.players.llm] if s.optimizer.compare else []
    players = [
        *simulated_players(s, table),
        *llm_players(
            [*s.players.llm, *twins], table, client, getattr(estimator, "decoding", None), s.players.setter_repair
        ),
    ]
    prepare_models(s, table, client, players)
    _say_what_thinking_costs(s, players)
    return Parts(
        game=table.game,
        sandbox=table.sandbox,
        env=table.env,
        embedder=table.embedder,
        players=players,
        client=client,
        rating=rating,
        aug=aug,
        estimator=estimator,
        logger=logger,
        replies=replies,
    )


def _say_what_thinking_costs(settings: SkateConfig, players: Sequence[Player]) -> None:
    """One line when hosted models that think play with no budget: every answer sample costs their
    thinking, so say how to see the bill first and which estimator keeps it down."""
    thinkers = [
        p.name for p in players if (spec := getattr(p, "spec", None)) is not None and spec.thinks and spec.hosted
    ]
    if not thinkers or settings.llm.budget_usd is not None:
        return
    name = estimators.of(settings.estimator).name
    cheaper = (
        ""
        if name == "adaptive"
        else (
            f"; estimator={name} asks more samples per answer than estimator=adaptive, "
            "which kept the ranking of reasoning players for a twelfth of Algorithm 1's"
        )
    )
    log.warning(
        "%s think before they answer and every answer sample costs the thinking: `skate play ... --estimate` "
        "says what this game will cost, and llm.budget_usd=<USD> stops it cleanly once spent%s",
        ", ".join(thinkers),
        cheaper,
    )


def _outages_to(log: EventLog, logger: Any) -> Callable[[dict], None]:
    """Where a model's outage is told: its start, end or the run's stop to the event log
    (``llm_outage``), and each of its probes too to the logger (the progress shows the wait)."""

    def told(info: dict) -> None:
        if info["state"] != "waiting":
            log.write(ev.ModelOutage(**info))
        logger.outage(info)

    return told


def build_estimator(settings: SkateConfig) -> Any:
    """The game's estimator (``estimator``): how p(correct) is estimated, and how models decode."""
    return estimators.build(settings.estimator)


def build_table(settings: SkateConfig, cleanup: contextlib.ExitStack) -> Table:
    """The game, its sandbox (closed by ``cleanup``; none for a game that runs no program), its
    environment and the embedder (one line, :class:`ConfigError`, when it cannot run here)."""
    s = settings
    game = build_game(s.game)
    embedder = build_embedder(s.embedder)
    sandbox = build_sandbox(s.sandbox) if game.runs_programs else NoSandbox()
    cleanup.callback(sandbox.close)
    refusal = game.check_sandbox(sandbox)
    if refusal:
        raise ConfigError(refusal)
    return Table(
        game,
        sandbox,
        GameEnv(sandbox=sandbox, seed=s.seed, pass_mark=float(getattr(s.rating, "p_thresh", PASS_MARK))),
        embedder,
    )


def open_client(
    settings: SkateConfig,
    table: Table,
    cleanup: contextlib.ExitStack,
    on_void: Callable[[dict], None] | None = None,
    on_outage: Callable[[dict], None] | None = None,
    on_thinking: Callable[[dict], None] | None = None,
    on_reply: Callable[[dict], None] | None = None,
) -> LLMClient | None:
    """The one model client the run's model players (and an embedder that calls a model:
    ``embedder=openai``) share, closed by ``cleanup``; None when nothing calls a model.
    ``on_void``: where each void call is told (the runner's event log); ``on_outage``: where each
    change of a model's outage is told (the event log and the progress); ``on_thinking``: where
    each reply's thinking is kept (``thinking.jsonl``); ``on_reply``: where each reply is kept
    (``replies.jsonl``). Each parameter a model is sent
    differently is told to the client's shaper, which the runner attaches to the event log once
    it is begun (:meth:`skate.llm.shaping.Shaper.attach`)."""
    if not settings.players.llm and not getattr(table.embedder, "uses_client", False):
        return None
    client = build_client(settings.llm, on_void, on_outage, on_thinking, on_reply)
    cleanup.callback(client.close)
    return client


def simulated_players(settings: SkateConfig, table: Table) -> list[Player]:
    """The cohort's simulated players (``players.simulated``), playing the game's simulation."""
    if not settings.players.simulated:
        return []
    return build_simulated(settings.players.simulated, table.game.simulation(table.env), settings.seed)


def llm_players(
    configs: Sequence[LLMPlayerConfig],
    table: Table,
    client: LLMClient | None,
    decoding: Decoding | None = None,
    setter_repair: str | None = None,
) -> list[Player]:
    """One language-model player per entry of ``configs`` (``players.llm`` entries), sharing
    ``client``; ``decoding``: how they decode when the estimator says (greedy), over their own;
    ``setter_repair``: the cohort's (``players.setter_repair``), for entries that give none."""
    if not configs:
        return []
    assert client is not None, "open_client gives a client whenever players.llm has entries"
    from skate.players.llm import build_llm_players  # loads DSPy (about a second): only for model players

    entries = [dataclasses.replace(c, setter_repair=c.setter_repair or setter_repair) for c in configs]
    return list(build_llm_players(entries, client, lambda: table.game.modules(table.env), decoding))


def prepare_models(
    settings: SkateConfig, table: Table, client: LLMClient | None, players: Sequence[Player] = ()
) -> None:
    """With ``llm.preflight``, one cheap call per distinct model and endpoint of ``players``, so
    that a dead one stops the run now, not after every round of void calls (PreflightError is a
    ConfigError: one line, exit 2); then the embedder that calls a model gets the client (and,
    with ``llm.preflight``, checks it)."""
    if client is None:
        return
    if players and settings.llm.preflight:
        preflight(client, players)
    connect_embedder(table.embedder, client, check=bool(settings.llm.preflight))


def build_game(game_settings: GameConfig) -> Game:
    """The game its settings name (``game.name``, a registered game), built from them; a game
    that cannot be built from them (e.g. a corpus with no documents) raises a one-line
    :class:`ConfigError`."""
    cls = get_game(game_settings.name)
    if not isinstance(game_settings, cls.config_schema):
        raise ConfigError(
            f"game={game_settings.name}: its settings are a {type(game_settings).__name__}, "
            f"not the game's schema {cls.config_schema.__name__}"
        )
    try:
        return cls(game_settings)
    except (ValueError, OSError) as exc:
        raise ConfigError(f"game={game_settings.name}: {exc}") from None


def build_sandbox(sandbox_cfg: SandboxConfig) -> Sandbox:
    """The sandbox its settings name, built from them (the sandbox registry's build); a sandbox
    that cannot run here raises SandboxUnavailable, settings it cannot take a one-line ConfigError."""
    try:
        return sandboxes.build(sandbox_cfg)
    except Exception as exc:
        cause: BaseException | None = exc
        while cause is not None:
            if isinstance(cause, SandboxUnavailable):
                raise cause from None
            if isinstance(cause, (ValueError, TypeError)):
                raise ConfigError(f"sandbox: {cause}") from None
            cause = cause.__cause__
        raise


def prices_of(c: LLMConfig) -> dict[str, Price]:
    """``llm.prices`` as the client takes them."""
    return {k: Price(v.get("input_per_mtok", 0.0), v.get("output_per_mtok", 0.0)) for k, v in c.prices.items()}


def build_client(
    c: LLMConfig,
    on_void: Callable[[dict], None] | None = None,
    on_outage: Callable[[dict], None] | None = None,
    on_thinking: Callable[[dict], None] | None = None,
    on_reply: Callable[[dict], None] | None = None,
) -> LLMClient:
    """A model client from the ``llm`` settings (:func:`open_client`: the run's, closed with it);
    ``on_void``: where each void call is told; ``on_outage``: each change of an outage;
    ``on_thinking``: each reply's thinking; ``on_reply``: each reply."""
    cache = ResponseCache(c.cache_dir) if c.cache else None
    retry = RetryPolicy(c.max_retries, c.backoff_s, c.max_backoff_s, c.max_retry_after_s)
    return LLMClient(
        cache=cache,
        retry=retry,
        concurrency=c.concurrency,
        endpoint_concurrency=dict(c.endpoint_concurrency),
        prices=prices_of(c),
        budget_usd=c.budget_usd,
        structured=str(c.structured),
        on_void=on_void,
        outage_wait_s=float(c.outage_wait_s),
        on_outage=on_outage,
        on_thinking=on_thinking,
        on_reply=on_reply,
    )


def usage_summary(client) -> dict[str, Any]:
    """Calls, cache hits, void samples, retries, tokens and cost: per player and for the run."""
    return {
        "players": {name: u.as_dict() for name, u in sorted(client.usage.items())},
        "total": client.total().as_dict(),
        # per player, its setting, answering and reading calls apart (what an estimate learns from)
        "purposes": {name: {k: u.as_dict() for k, u in parts.items()} for name, parts in client.purposes().items()},
        "budget_usd": client.budget_usd,
        # per model: json_schema / json_object (structured output), or text where refused
        "structured_output": client.structured_formats(),
    }


def count_entries(
    settings: SkateConfig, players: Sequence[Player], summary: Any, rounds: int, out_dir: Any
) -> list[dict[str, Any]]:
    """One entry per model player of a run for the token counts of later estimates
    (:mod:`skate.llm.counts`): the game and estimator, the rounds it played, the players and the
    game's counts, and the model's usage by purpose."""
    purposes = (summary.usage or {}).get("purposes") or {}
    thinking = ("reasoning_effort", "thinking_budget", "thinking")
    out = []
    for p in players:
        spec = getattr(p, "spec", None)
        if spec is None or p.name not in purposes:
            continue
        out.append(
            {
                "run": str(out_dir),
                "game": settings.game.name,
                "model": spec.model,
                "api_base": spec.base_url,
                "player": p.name,
                "max_tokens": spec.max_tokens,
                **{k: getattr(spec, k) for k in thinking if getattr(spec, k) is not None},
                "estimator": estimators.of(settings.estimator).name,
                "estimator_settings": record_of(settings.estimator),
                "rounds": rounds,
                "players": len(players),
                "tasks": summary.tasks,
                "attempts": summary.attempts,
                "estimates": summary.estimates,
                "tasks_set": summary.tasks_by_setter.get(p.name, 0),
                **{purpose: purpose_counts(u) for purpose, u in purposes[p.name].items()},
            }
        )
    return out

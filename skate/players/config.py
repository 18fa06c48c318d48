"""The player cohort's config schema (``conf/players/*.yaml``), which checks itself (``check``),
and the roles a cohort's players take in staged presets."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from omegaconf import MISSING

from skate.errors import ConfigError, Problem, Settings, read_mapping, require, typed
from skate.llm.spec import ModelConfigError, ModelSpec
from skate.paths import CONF_DIR
from skate.runlog.records import Decoding


@dataclass
class SimPlayerConfig(metaclass=Settings):
    """A simulated player with known latent skill (the ground truth for tests and benchmarks)."""

    name: str = MISSING
    skill: float = MISSING  # answering skill on the game's difficulty scale [0, 1]
    # Offsets added to skill per kind of task; a game uses the offsets for its own kinds.
    topic_skill: dict[str, float] = field(default_factory=dict)
    pitch: float = 0.0  # how much harder (+) or easier (-) than its own skill it first pitches tasks
    sloppiness: float = 0.15  # chance that an attempt carries a defect (crash, silence, ...)
    noise: float = 0.08  # spread of the per-task "blind spot" offset to its skill
    # Chance that it answers wrongly a sample it knows (a slip: its success never reaches 1, so
    # it answers off the logistic skill-against-difficulty rule).
    slip: float = 0.0


@dataclass
class LLMPlayerConfig(metaclass=Settings):
    name: str = MISSING
    model: str = MISSING  # "provider/model", e.g. "openai/gpt-4o-2024-11-20"
    api_base: str = ""  # OpenAI-compatible server, e.g. "http://localhost:8000/v1"
    api_key_env: str = ""  # variable holding the key ("" = the provider's usual one)
    temperature: float = 0.7
    # Completion tokens per reply, thinking included. null: 2048, or for a model that thinks
    # (LiteLLM's map says it reasons, or a thinking setting below is on) 16384 capped at what the
    # model may write, or its thinking_budget + 4096.
    max_tokens: Optional[int] = None
    timeout_s: float = 120.0
    extra_headers: dict[str, str] = field(default_factory=dict)
    # untyped: request fields sent as they are, in each provider's own JSON (vLLM's, llama.cpp's, ...)
    extra_body: dict[str, Any] = field(default_factory=dict)
    supports_n: Optional[bool] = None  # can one request return several samples? None = guess
    max_n: Optional[int] = None  # the most samples one request may ask for (llama-server: its slots); None = any
    # The model's context window in tokens, where known: prompt optimisation keeps a compiled
    # program's demonstrations within it (a request that does not fit fails at the server). None = unknown.
    context_tokens: Optional[int] = None
    # Request fields sent with its setting requests only, as they are (extra_body goes with every
    # request): e.g. llama.cpp's repeat_penalty, which keeps small models' tasks from looping but
    # would push a one-letter answer away from the options its request named last.
    # untyped: as extra_body, the provider's own JSON
    setter_extra_body: dict[str, Any] = field(default_factory=dict)
    # What a setter is asked after a rejected attempt: "show" (the rejection and why, with its own
    # reply in the plain format) or "resample" (the round's request asked anew, nothing shown: for
    # models that send a rejected task back unchanged, as the local cohort's did; docs/real-models.md).
    # null: the cohort's (players.setter_repair), else "show".
    setter_repair: Optional[str] = None
    # How much a reasoning model thinks (null: the model's own). reasoning_effort: none, minimal,
    # low, medium, high, xhigh or max, sent as OpenAI's reasoning_effort (OpenAI, xAI, DeepSeek, local
    # servers), OpenRouter's reasoning.effort, and through LiteLLM for Anthropic and Gemini.
    # thinking_budget: thinking tokens (Anthropic's thinking.budget_tokens, which runs at temperature 1
    # and needs max_tokens above it; Gemini's thinkingBudget; OpenRouter's reasoning.max_tokens).
    # thinking: a local server's switch (Qwen3's enable_thinking through chat_template_kwargs; Ollama's
    # think); elsewhere it only says whether the model thinks (for the max_tokens default).
    reasoning_effort: Optional[str] = None
    thinking_budget: Optional[int] = None
    thinking: Optional[bool] = None


SETTER_REPAIRS = ("show", "resample")


@dataclass
class PlayersConfig(metaclass=Settings):
    simulated: list[SimPlayerConfig] = field(default_factory=list)
    llm: list[LLMPlayerConfig] = field(default_factory=list)
    # Parts players take in staged presets, which name players by role, not by name:
    # {role: player}, e.g. {strongest: claude-sonnet-4, second: claude-3.5-sonnet}. An all-simulated
    # cohort also has roles from its known skills (see cohort_roles); those given here win.
    roles: dict[str, str] = field(default_factory=dict)
    # What every language-model player's setter is asked after a rejected attempt, where its own
    # entry says nothing (show or resample); a cohort's game preset may set it (conf/players_game/).
    # null: show.
    setter_repair: Optional[str] = None

    def check(self) -> list[Problem]:
        """At least two players, unique names, simulated players' skills in range, and every
        language-model player's model spec complete (a hosted model's key present); keys within
        ``players``."""
        roster, llm_roster = list(self.simulated), list(self.llm)
        names = [p.name for p in roster] + [p.name for p in llm_roster]
        problems = [
            *require(
                self.setter_repair is None or self.setter_repair in SETTER_REPAIRS,
                "setter_repair",
                self.setter_repair,
                f"must be one of {list(SETTER_REPAIRS)} (or null: show)",
            ),
            *require(len(names) >= 2, "", f"{len(names)} players", "a game needs at least 2 players"),
            *require(
                len(set(names)) == len(names),
                "",
                sorted({n for n in names if names.count(n) > 1}),
                "player names must be unique",
            ),
        ]
        for i, p in enumerate(roster):
            key = f"simulated[{i}]"
            problems += [
                *require(0.0 <= p.skill <= 1.0, f"{key}.skill", p.skill, "must lie in [0, 1]"),
                *require(0.0 <= p.sloppiness <= 1.0, f"{key}.sloppiness", p.sloppiness, "must lie in [0, 1]"),
                *require(p.noise >= 0.0, f"{key}.noise", p.noise, "must be >= 0"),
                *require(0.0 <= p.slip < 1.0, f"{key}.slip", p.slip, "must lie in [0, 1)"),
            ]
        for i, lp in enumerate(llm_roster):
            problems += require(
                lp.setter_repair is None or lp.setter_repair in SETTER_REPAIRS,
                f"llm[{i}].setter_repair",
                lp.setter_repair,
                f"must be one of {list(SETTER_REPAIRS)} (or null: the cohort's)",
            )
            try:
                spec_of_config(lp).api_key()  # a hosted model without its key fails here
            except ModelConfigError as exc:
                problems.append(Problem(f"llm[{i}]", lp.name, str(exc)))
        return problems


# Roles an all-simulated cohort has from its skills, strongest first ("weakest" is the last).
SKILL_ROLES = ("strongest", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


def cohort_roles(players: Any) -> dict[str, str]:
    """Role -> player name for a cohort: ``players.roles``, over (for a cohort of simulated
    players only) the roles from known skills: strongest, second, third, ..., and weakest
    (equal skills keep roster order)."""
    sims, llms = list(players.simulated or []), list(players.llm or [])
    roles: dict[str, str] = {}
    if sims and not llms:
        order = sorted(range(len(sims)), key=lambda i: (-float(sims[i].skill), i))
        roles.update({role: str(sims[i].name) for role, i in zip(SKILL_ROLES, order, strict=False)})
        roles["weakest"] = str(sims[order[-1]].name)
    roles.update({str(k): str(v) for k, v in (players.roles or {}).items()})
    return roles


def check_topic_skills(
    players: PlayersConfig, known_kinds: Iterable[str], game: str, game_kinds: Iterable[str]
) -> list[Problem]:
    """Simulated players' ``topic_skill`` name only kinds some game has (``known_kinds``): what
    the cohort and the games say together (keys within ``players``)."""
    known, problems = set(known_kinds), []
    for i, p in enumerate(players.simulated):
        unknown = sorted(set(p.topic_skill) - known)
        problems += require(
            not unknown,
            f"simulated[{i}].topic_skill",
            unknown,
            f"no game has these kinds; {game} has {list(game_kinds)}",
        )
    return problems


def spec_of_config(config: LLMPlayerConfig, decoding: Decoding | None = None) -> ModelSpec:
    """The model a ``players.llm`` entry names, as its player is built with it: the entry's
    fields that are the model's (all but its name and its setter's own, ``setter_extra_body`` and
    ``setter_repair``); ``decoding``: how the estimator wants it to decode, over the entry's."""
    model = {f.name: getattr(config, f.name) for f in dataclasses.fields(ModelSpec)}
    return ModelSpec(**model | (decoding.spec_fields() if decoding is not None else {}))


def preset_players(name: str) -> PlayersConfig:
    """The cohort of the option ``players=<name>`` (``conf/players/<name>.yaml``), typed: its own
    keys over the schema's (a YAML's choices of other groups' options, as local_cohort's aug, are
    the command line's to make). What ``SkateConfig()``'s players default to (``simulated``)."""
    path = Path(CONF_DIR, "players", f"{name}.yaml")
    if not path.is_file():
        names = sorted(p.stem for p in path.parent.glob("*.yaml"))
        raise ConfigError(f"players={name} is not a cohort: choose one of {', '.join(names)}")
    body = {k: v for k, v in read_mapping(path, "cohort").items() if k != "defaults"}
    return typed(PlayersConfig, body, "players")

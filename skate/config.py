"""Structured config schemas for every Hydra config group.

Each YAML option under ``conf/<group>/`` extends one of these dataclasses (``defaults: [<x>_schema]``),
so a misspelt key or a value of the wrong type fails while Hydra composes the config, naming the
key. Every registered game's schema is the option ``game=<name>`` (``<name>_schema`` when a YAML
``conf/game/<name>.yaml`` overrides something in it).
Range checks that types cannot express live in :func:`validate` (a game's own in its
``check_config``), which runs before anything else and raises :class:`ConfigError` naming the
offending key and what to change.
"""

from __future__ import annotations

from collections.abc import Sequence
import dataclasses
import difflib
from dataclasses import dataclass, field
from typing import Any

from omegaconf import MISSING, DictConfig, ListConfig, OmegaConf

# Every section's schema lives with its component; they are imported here to compose the
# whole, and stay importable from skate.config as before the split (hence the noqa: re-exports).
from skate.augment import AugConfig, Strategy  # noqa: F401
from skate.compose import compose, store, yaml_options
from skate.engine import EventsConfig, ScheduleConfig, ScheduleMode, StageConfig, StopConfig
from skate.errors import ConfigError
from skate.errors import check as _check
from skate.games import get_game, load_games
from skate.llm.config import LLMConfig, validate_llm
from skate.llm.optimizers import OptimizerConfig, OptimizerName, Role, validate_optimizer  # noqa: F401
from skate.novelty.config import HashingEmbedderConfig, MiniLMEmbedderConfig, OpenAIEmbedderConfig, validate_embedder
from skate.paths import CONF_DIR
from skate.players.config import (SKILL_ROLES, LLMPlayerConfig, PlayersConfig, SimPlayerConfig,  # noqa: F401
                                  cohort_roles, validate_players)
from skate.ratings.config import (BradleyTerryConfig, BTPoint, BTScale, EloConfig, IRTConfig,  # noqa: F401
                                  OutcomeRule, OutcomeRuleConfig, TrueSkillConfig, TTTConfig, draw_margin_of,
                                  rating_class, rating_name, sigma_star_factor, validate_rating)
from skate.ratings.rerate import rerate_configs
from skate.sandbox.config import (AutoSandboxConfig, JailConfig, JailSettingsConfig, SandboxConfig,  # noqa: F401
                                  validate_sandbox)
from skate.scoring import (AdaptiveConfig, Algorithm1Config, DecidedConfig, FixedNConfig, GreedyConfig,
                            validate_estimator)
from skate.tracking import ConsoleLoggerConfig, NoLoggerConfig, WandbLoggerConfig


def resolve_stages(cfg: DictConfig) -> list[dict[str, Any]]:
    """The stages with every role replaced by its player and ``answer_only`` turned into
    ``setters`` (the stage's active players less those): ``[{name, join, setters, rounds}]``.
    Raises :class:`ConfigError` naming the stage and what to add or change."""
    players = cfg.players
    names = [str(p.name) for p in [*(players.get("simulated") or []), *(players.get("llm") or [])]]
    roles = cohort_roles(players)
    for role, who in roles.items():
        _check(who in names, f"players.roles.{role}", who, f"names no player of this cohort ({names})")

    def who(stage_key: str, field_name: str, items: Any) -> list[str]:
        out = []
        for item in items or []:
            item = str(item)
            if item in names:
                out.append(item)
            elif item in roles:
                out.append(roles[item])
            else:
                raise ConfigError(
                    f"{stage_key}.{field_name}: {item!r} is neither a player nor a role of this cohort "
                    f"(players: {names}; roles: {sorted(roles) or 'none'}). Name a player, or give the cohort "
                    f"the role: add `roles: {{{item}: <player>}}` to its conf/players/<cohort>.yaml, or "
                    f"players.roles.{item}=<player> on the command line")
        return out

    stages = list(cfg.get("stages") or [])
    resolved = []
    for i, st in enumerate(stages):
        key = f"stages[{i}] ({st.name})"
        resolved.append({"name": str(st.name), "join": who(key, "join", st.join),
                         "setters": None if st.get("setters") is None else who(key, "setters", st.setters),
                         "answer_only": who(key, "answer_only", st.get("answer_only")),
                         "rounds": int(st.rounds)})
    later = {n for st in resolved for n in st["join"]}
    active = [n for n in names if n not in later]
    out = []
    for i, st in enumerate(resolved):
        key = f"stages[{i}] ({st['name']})"
        _check(st["rounds"] >= 0, f"{key}.rounds", st["rounds"], "must be >= 0")
        twice = sorted(set(st["join"]) & set(active))
        _check(not twice, f"{key}.join", twice, "a player joins only once (and not if it plays from the start)")
        active += st["join"]
        if st["answer_only"]:
            _check(st["setters"] is None, f"{key}.answer_only", st["answer_only"],
                   "give setters or answer_only, not both")
            absent = sorted(set(st["answer_only"]) - set(active))
            _check(not absent, f"{key}.answer_only", absent, f"not in the game at this stage (active: {active})")
            st["setters"] = [n for n in active if n not in st["answer_only"]]
        if st["rounds"] and not any(s["rounds"] for s in out):
            _check(len(active) >= 2, key, f"{len(active)} player(s) {active}",
                   "the first stage that plays needs at least 2 players in the game: join fewer players later "
                   "or use a larger cohort")
        out.append({k: st[k] for k in ("name", "join", "setters", "rounds")})
    if out:
        _check(sum(st["rounds"] for st in out) >= 1, "stages", "0 rounds in all", "play at least one round")
    return out


# --------------------------------------------------------------------------- top level
@dataclass
class SkateConfig:
    seed: int = 0
    game: Any = MISSING
    rating: Any = MISSING
    aug: Any = MISSING
    estimator: Any = MISSING
    players: Any = MISSING
    sandbox: Any = MISSING
    embedder: Any = MISSING
    logger: Any = MISSING
    optimizer: OptimizerConfig = MISSING  # type: ignore[assignment]
    llm: LLMConfig = field(default_factory=LLMConfig)
    print_table: bool = True
    report: bool = True  # write report/ (plots, exports, HTML) at the end of every game and sweep
    # A staged game (SKATE §6.1/§6.2): players join stage by stage; empty = one stage, game.rounds long.
    stages: list[StageConfig] = field(default_factory=list)
    # After the game, rate its log again other ways: [{name, rating: <option>?, <rating key>: value, ...}],
    # each from the game's own rating settings (or the named rating option's) plus these keys, e.g.
    # [{name: absolute, outcome: absolute}]. Each gives ratings.<name>.json and run_end's rerated.<name>.
    rerate: list[Any] = field(default_factory=list)
    schedule: ScheduleConfig = field(default_factory=ScheduleConfig)
    stop: StopConfig = field(default_factory=StopConfig)
    events: EventsConfig = field(default_factory=EventsConfig)




def compose_config(overrides: Sequence[str] = (), return_hydra_config: bool = False) -> DictConfig:
    """The config ``python -m skate`` would compose with these overrides (for tools, benchmarks
    and tests that run outside the Hydra app); each set of group choices is composed by Hydra once
    per process and value overrides go to a copy (:mod:`skate.compose`), so the result and every
    error are Hydra's."""
    register_configs()
    return compose(overrides, return_hydra_config)


def register_configs() -> None:
    """Put every schema in Hydra's ConfigStore (idempotent; a schema already stored is not stored
    again, and a game registered since the last call is added). A game with no YAML under
    ``conf/game/`` is the option ``game=<name>`` as its schema stands; one with a YAML (which
    overrides something) gets its schema as ``<name>_schema``, for the YAML's defaults list."""
    store(None, "skate_schema", SkateConfig)
    with_yaml = yaml_options("game")
    for name, game in load_games().items():
        store("game", f"{name}_schema" if name in with_yaml else name, game.config_schema)
    for group, name, node in _SCHEMAS:
        store(group, name, node)


_SCHEMAS: tuple[tuple[str, str, type], ...] = (
    ("rating", "trueskill_schema", TrueSkillConfig),
    ("rating", "bradley_terry_schema", BradleyTerryConfig),
    ("rating", "elo_schema", EloConfig),
    ("rating", "irt_schema", IRTConfig),
    ("rating", "ttt_schema", TTTConfig),
    ("aug", "aug_schema", AugConfig),
    ("estimator", "algorithm1_schema", Algorithm1Config),
    ("estimator", "fixed_n_schema", FixedNConfig),
    ("estimator", "greedy_schema", GreedyConfig),
    ("estimator", "decided_schema", DecidedConfig),
    ("estimator", "adaptive_schema", AdaptiveConfig),
    ("players", "players_schema", PlayersConfig),
    ("sandbox", "subprocess_schema", SandboxConfig),
    ("sandbox", "jail_schema", JailConfig),
    ("sandbox", "auto_schema", AutoSandboxConfig),
    ("embedder", "hashing_schema", HashingEmbedderConfig),
    ("embedder", "minilm_schema", MiniLMEmbedderConfig),
    ("embedder", "openai_schema", OpenAIEmbedderConfig),
    ("logger", "console_schema", ConsoleLoggerConfig),
    ("logger", "wandb_schema", WandbLoggerConfig),
    ("logger", "none_schema", NoLoggerConfig),
    ("optimizer", "optimizer_schema", OptimizerConfig),
)


# --------------------------------------------------------------------------- validation
def unknown_key(path: str, kind: type) -> str:
    """What to say of ``path``, a key that the schema ``kind`` (a dataclass) does not have."""
    names = sorted(f.name for f in dataclasses.fields(kind) if not f.name.startswith("_"))
    parent, _, last = path.rpartition(".")
    near = difflib.get_close_matches(last, names, n=1)
    hint = f" (did you mean {parent + '.' if parent else ''}{near[0]}?)" if near else ""
    return f"{path} is not a setting of {kind.__name__}{hint}; its settings: {', '.join(names)}"


def check_known_keys(node: Any, prefix: str = "") -> None:
    """Every key of a typed section is a field of its schema: ``+game.x=1`` adds a key Hydra's
    composition lets through (``+`` lifts the schema's guard), which the game could not take."""
    if isinstance(node, (DictConfig, ListConfig)) and node._is_none():
        return
    if isinstance(node, DictConfig):
        kind = OmegaConf.get_type(node)
        names = {f.name for f in dataclasses.fields(kind)} if dataclasses.is_dataclass(kind) else None
        for key in node.keys():
            path = f"{prefix}.{key}" if prefix else str(key)
            if names is not None and key not in names:
                raise ConfigError(unknown_key(path, kind))
            check_known_keys(node._get_node(key), path)
    elif isinstance(node, ListConfig):
        for i in range(len(node)):
            check_known_keys(node._get_node(i), f"{prefix}[{i}]")


def validate(cfg: DictConfig) -> None:
    """Range and consistency checks that types cannot express: each component checks its own
    section; what follows is only what needs two sections together."""
    check_known_keys(cfg)
    try:
        game = get_game(cfg.game.name)
    except KeyError as exc:
        raise ConfigError(f"game.name={cfg.game.name!r} is invalid: {exc.args[0]}") from None
    for key, value, need in game.check_config(cfg.game):
        _check(False, f"game.{key}", value, need)
    validate_rating(cfg.rating)
    if not game.players_set(cfg.game):
        name = cfg.game.name
        _check(str(cfg.rating.get("outcome", "")) != OutcomeRule.setter_vs_solver, "rating.outcome",
               str(cfg.rating.get("outcome")), f"game={name} game.mode={cfg.game.get('mode')} builds its own tasks, so "
               "there are no setters to rate: use a pairwise rule (rating.outcome=relative or absolute)")
        _check(cfg.schedule.mode != ScheduleMode.matches, "schedule.mode", str(cfg.schedule.mode),
               f"game={name} game.mode={cfg.game.get('mode')} has no setters to pair in matches: use rounds")
    if cfg.schedule.mode == ScheduleMode.matches:
        _check(str(cfg.rating.get("outcome")) == OutcomeRule.setter_vs_solver, "rating.outcome",
               cfg.rating.get("outcome"), f"schedule.mode=matches has one answerer per task, so only "
               f"rating.outcome=setter_vs_solver rates it (or rating=zerosumeval), not {rating_name(cfg.rating)}")
        _check(not cfg.stages, "stages", f"{len(cfg.stages)} stages",
               "schedule.mode=matches plays one stage: leave stages empty")
    validate_estimator(cfg.estimator, cfg.rating)
    if str(cfg.estimator.get("_target_", "")).endswith(".Greedy"):
        _check(game.spec.answer_format in ("multiple_choice", "exact_match"), "estimator", "greedy",
               f"scores one answer to one query, and game={cfg.game.name}'s answers are "
               f"{game.spec.answer_format} sessions: use it with cop, mathquiz or scp")
    if str(cfg.estimator.get("_target_", "")).endswith(".Adaptive"):
        _check(cfg.schedule.mode != ScheduleMode.matches, "estimator", "adaptive",
               "chooses who answers each task, and schedule.mode=matches has one answerer a match: use "
               "estimator=algorithm1, fixed_n or decided (keys: estimator, schedule.mode)")
    validate_stop(cfg)
    validate_sandbox(cfg.sandbox)
    validate_embedder(cfg.embedder)
    known_kinds = {k for g in load_games().values() for k in g.spec.kinds} | set(game.skill_keys(cfg.game))
    validate_players(cfg.players, known_kinds, cfg.game.name, game.skill_keys(cfg.game))
    resolve_stages(cfg)  # raises on a stage naming no player or role of this cohort
    if isinstance(cfg.rating.get("draw_margin"), str):
        draw_margin_of(cfg.rating.draw_margin, cfg.estimator)
    if cfg.get("rerate"):
        rerate_configs(cfg.rerate, to_container(cfg.rating), cfg.estimator)
    validate_optimizer(cfg.optimizer, [p.name for p in cfg.players.get("llm", [])])
    validate_llm(cfg.llm)


def validate_stop(cfg: DictConfig) -> None:
    st = cfg.get("stop")
    if st is None:  # the config of a run played before stop existed
        return
    _check(st.min_rounds >= 1, "stop.min_rounds", st.min_rounds, "must be >= 1")
    if st.settled is None:
        return
    _check(isinstance(st.settled, (int, float)) and 0.5 < st.settled < 1, "stop.settled", st.settled,
           "give the confidence at which the ranking counts as settled, in (0.5, 1) (e.g. 0.99), or null")
    _check(not cfg.stages, "stop.settled", st.settled,
           "ends a game early, and a staged game (stages) plays every stage: leave one of them")
    if not rating_class(cfg.rating).says_order:
        raise ConfigError(f"stop.settled={st.settled} stops once the ranking is sure, and {rating_name(cfg.rating)} "
                          "cannot say how sure it is (no uncertainty): use rating=irt, trueskill, ttt or bradley_terry, "
                          "or stop.settled=null (keys: stop.settled, rating)")


def prepare(cfg: DictConfig) -> None:
    """Settle what the config leaves to the cohort and the estimator, in place, so that the run
    records (and a resume replays) plain values: a draw margin tied to sigma* becomes its number,
    and stages name players, not roles."""
    if isinstance(cfg.rating.get("draw_margin"), str):
        cfg.rating.draw_margin = draw_margin_of(cfg.rating.draw_margin, cfg.estimator)
    if "confidence" in cfg.estimator and cfg.estimator.confidence is None:
        # Adaptive: unsure = below the confidence at which the game stops, so it samples until then.
        settled = cfg.get("stop", {}).get("settled")
        cfg.estimator.confidence = float(settled) if settled is not None else 0.95
    if cfg.get("stages"):
        resolved = resolve_stages(cfg)
        for st, res in zip(cfg.stages, resolved):
            st.join, st.setters, st.answer_only = res["join"], res["setters"], []


def to_container(cfg: DictConfig) -> dict[str, Any]:
    return OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)  # type: ignore[return-value]

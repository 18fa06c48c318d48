"""Structured config schemas for every Hydra config group.

Each YAML option under ``conf/<group>/`` extends one of these dataclasses (``defaults:
[/schema/<group>/<name>@_here_, _self_]``; the schemas are stored out of the options users choose,
:func:`skate.registry.schema_node`), so a misspelt key or a value of the wrong type fails while
Hydra composes the config, naming the key. Every registered game's schema, and every registered
component's with no YAML, is the option ``<group>=<name>`` itself.
Range checks that types cannot express live in :func:`validate` (a game's own in its
``check_config``), which runs before anything else and raises :class:`ConfigError` naming the
offending key and what to change.
"""

from __future__ import annotations

import copy
import enum
from collections.abc import Sequence
import dataclasses
import difflib
from dataclasses import dataclass, field
from typing import Any, Optional

from omegaconf import MISSING, DictConfig, ListConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

# Every section's schema lives with its component; they are imported here to compose the
# whole, and stay importable from skate.config as before the split (hence the noqa: re-exports).
from skate.augment import AugConfig, Strategy  # noqa: F401
from skate.compose import compose, store, yaml_options
from skate.records import ScheduleMode
from skate.registry import schema_node
from skate.errors import ConfigError
from skate.errors import check as _check
from skate.games import get_game, load_games
from skate.llm.config import LLMConfig, validate_llm
from skate.llm.optimizers import OptimizerConfig, OptimizerName, Role, validate_optimizer  # noqa: F401
from skate.games.base import GameConfig
from skate.embedders.config import EmbedderConfig, embedder, validate_embedder
from skate.paths import CONF_DIR  # noqa: F401  (re-exported)
from skate.players.config import (SKILL_ROLES, LLMPlayerConfig, PlayersConfig, SimPlayerConfig,  # noqa: F401
                                  cohort_roles, validate_players)
from skate.ratings.base import rating, rating_class, rating_name
from skate.ratings.config import (BTPoint, BTScale, OutcomeRule, OutcomeRuleConfig, RatingConfig,  # noqa: F401
                                  draw_margin_of, sigma_star_factor, validate_rating)
from skate.ratings.rerate import rerate_configs
from skate.sandbox.config import SandboxConfig, sandbox, validate_sandbox
from skate.estimators import EstimatorConfig, check_links, estimator, validate_estimator
from skate.loggers import LoggerConfig, logger
from skate.store import RatingLog


def resolve_stages(cfg: DictConfig | SkateConfig) -> list[dict[str, Any]]:
    """The stages with every role replaced by its player and ``answer_only`` turned into
    ``setters`` (the stage's active players less those): ``[{name, join, setters, rounds}]``.
    Raises :class:`ConfigError` naming the stage and what to add or change."""
    players = cfg.players
    names = [str(p.name) for p in [*players.simulated, *players.llm]]
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

    stages = list(cfg.stages or [])
    resolved = []
    for i, st in enumerate(stages):
        key = f"stages[{i}] ({st.name})"
        resolved.append({"name": str(st.name), "join": who(key, "join", st.join),
                         "setters": None if st.setters is None else who(key, "setters", st.setters),
                         "answer_only": who(key, "answer_only", st.answer_only),
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


# --------------------------------------------------------------------------- the top level's own sections
# The game loop's settings (the schedule, stages, stop and events sections): the engine takes them
# as its Loop (skate.engine.Loop.of).


@dataclass
class ScheduleConfig:
    """Who sets and who answers in each round.

    ``rounds`` (default): everyone sets, everyone answers. ``matches`` (ZeroSumEval's protocol):
    each round is one match between an ordered pair of players, the setter setting and the
    solver alone answering; the pair is the least-played ordered pair so far (a round-robin over
    ordered pairs, ties drawn from the run seed), and ``game.rounds`` is the number of matches.
    """

    mode: ScheduleMode = ScheduleMode.rounds


@dataclass
class EventsConfig:
    """What the event log keeps of the ratings. ``task`` (default): one ``rated`` event per task
    (and per forfeit) with the count of pairwise updates it made and each moved player's numbers
    after them (TrueSkill's μ and σ, Elo's rating): the log grows with tasks × players. ``pair``:
    one ``rating`` event per pairwise update, as runs before it were logged (tasks × players²:
    a 50-player game writes 61,250 a round). Either way every update is made; a run resumed from
    a log of the other kind continues in that log's kind."""

    rating_updates: RatingLog = RatingLog.task


@dataclass
class StageConfig:
    """A stage of a staged game. ``join``, ``setters`` and ``answer_only`` name players by name or
    by role (``players.roles``, or a simulated cohort's skill order: strongest, second, ..., weakest)."""

    name: str = MISSING
    join: list[str] = field(default_factory=list)  # who joins at the start (answers every earlier task)
    setters: Optional[list[str]] = None  # who sets tasks in this stage's rounds (None = every active player)
    answer_only: list[str] = field(default_factory=list)  # or: every active player sets but these
    rounds: int = 0



@dataclass
class StopConfig:
    """End the game before game.rounds once its ranking is settled."""

    # A confidence in (0.5, 1): after a round, stop when every adjacent pair of the ranking is
    # ordered with at least this probability under the rating's model. null: play every round.
    settled: Optional[float] = None
    min_rounds: int = 3  # never stop before this many rounds


# --------------------------------------------------------------------------- top level
@dataclass
class SkateConfig:
    """The whole config, and once composed and checked (:func:`build_settings`), a run's typed
    settings: each section an instance of its group's schema (``settings.rating`` a
    ``TrueSkillConfig``, ``settings.estimator`` an ``Algorithm1Config``, ...), each typed here by
    the base schema its group's options extend."""

    seed: int = 0
    game: GameConfig = MISSING  # type: ignore[assignment]
    rating: RatingConfig = MISSING  # type: ignore[assignment]
    aug: AugConfig = MISSING  # type: ignore[assignment]
    estimator: EstimatorConfig = MISSING  # type: ignore[assignment]
    players: PlayersConfig = MISSING  # type: ignore[assignment]
    sandbox: SandboxConfig = MISSING  # type: ignore[assignment]
    embedder: EmbedderConfig = MISSING  # type: ignore[assignment]
    logger: LoggerConfig = MISSING  # type: ignore[assignment]
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
    again, and a game or component registered since the last call is added). A game or component
    with no YAML under ``conf/<group>/`` is the option ``<group>=<name>`` as its schema stands; one
    with a YAML (which sets values of its own) gets its schema as ``schema/<group>/<name>``, out of
    the options users choose, for the YAML's defaults list (:func:`skate.registry.schema_default`)."""
    store(None, "skate_schema", SkateConfig)
    for group, entries in (("game", [(n, g.config_schema) for n, g in load_games().items()]),
                           *((r.group, [(e.name, e.schema) for e in r]) for r in REGISTRIES)):
        with_yaml = yaml_options(group)
        for name, schema in entries:
            store(*(schema_node(group, name) if name in with_yaml else (group, name)), schema)
    for group, node in _SCHEMAS:
        store(*schema_node(group), node)


# The groups whose options build different components: each group's registry names them, with
# their schemas (stored as schema/<group>/<name>) and capabilities.
REGISTRIES = (rating, estimator, sandbox, embedder, logger)
# The groups with one schema each (stored as schema/<group>).
_SCHEMAS: tuple[tuple[str, type], ...] = (("aug", AugConfig), ("players", PlayersConfig), ("optimizer", OptimizerConfig))


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


def validate(cfg: DictConfig | SkateConfig) -> SkateConfig:
    """Range and consistency checks that types cannot express, on a composed config (checked
    after settling a copy of it, as :func:`build_settings` settles the config itself) or on
    settings: each component checks its own section; what follows is only what needs two
    sections together. Returns the settings checked."""
    if isinstance(cfg, DictConfig):
        return build_settings(copy.deepcopy(cfg))
    s = cfg
    try:
        game = get_game(s.game.name)
    except KeyError as exc:
        raise ConfigError(f"game.name={s.game.name!r} is invalid: {exc.args[0]}") from None
    for key, value, need in game.check_config(s.game):
        _check(False, f"game.{key}", value, need)
    validate_rating(s.rating)
    outcome = getattr(s.rating, "outcome", None)
    if not game.players_set(s.game):
        name, mode = s.game.name, getattr(s.game, "mode", None)
        _check(outcome != OutcomeRule.setter_vs_solver, "rating.outcome", str(outcome),
               f"game={name} game.mode={mode} builds its own tasks, so there are no setters to rate: use a "
               "pairwise rule (rating.outcome=relative or absolute)")
        _check(s.schedule.mode != ScheduleMode.matches, "schedule.mode", str(s.schedule.mode),
               f"game={name} game.mode={mode} has no setters to pair in matches: use rounds")
    if s.schedule.mode == ScheduleMode.matches:
        _check(outcome == OutcomeRule.setter_vs_solver, "rating.outcome", outcome,
               f"schedule.mode=matches has one answerer per task, so only "
               f"rating.outcome=setter_vs_solver rates it (or rating=zerosumeval), not {rating_name(s.rating)}")
        _check(not s.stages, "stages", f"{len(s.stages)} stages",
               "schedule.mode=matches plays one stage: leave stages empty")
    validate_estimator(s.estimator, s.rating)
    kind = estimator.of(s.estimator)
    if kind.component.greedy_decoding:
        _check(game.spec.answer_format in ("multiple_choice", "exact_match"), "estimator", kind.name,
               f"scores one answer to one query, and game={s.game.name}'s answers are "
               f"{game.spec.answer_format} sessions: use it with cop, mathquiz or scp")
    if kind.component.reads:
        _check(game.spec.answer_format == "multiple_choice", "estimator", kind.name,
               f"reads the probability of each option's label, and game={s.game.name}'s answers are "
               f"{game.spec.answer_format}, not an option: use it with cop or scp, or estimator=adaptive")
        _check(not getattr(s.game, "reasoning", False), "estimator", kind.name,
               "reads the option's label as the reply's first token, and game.reasoning=true asks for the "
               "working first: set game.reasoning=false or use another estimator")
    if kind.component.picks_answerers:
        _check(s.schedule.mode != ScheduleMode.matches, "estimator", kind.name,
               "chooses who answers each task, and schedule.mode=matches has one answerer a match: use "
               "estimator=algorithm1, fixed_n or decided (keys: estimator, schedule.mode)")
    validate_stop(s)
    validate_sandbox(s.sandbox)
    validate_embedder(s.embedder)
    known_kinds = {k for g in load_games().values() for k in g.spec.kinds} | set(game.skill_keys(s.game))
    validate_players(s.players, known_kinds, s.game.name, game.skill_keys(s.game))
    resolve_stages(s)  # raises on a stage naming no player or role of this cohort
    if s.rerate:
        rerate_configs(s.rerate, s.rating, record_of(s.estimator))
    validate_optimizer(s.optimizer, [p.name for p in s.players.llm])
    validate_llm(s.llm)
    return s


def validate_stop(s: SkateConfig) -> None:
    st = s.stop
    _check(st.min_rounds >= 1, "stop.min_rounds", st.min_rounds, "must be >= 1")
    if st.settled is None:
        return
    _check(isinstance(st.settled, (int, float)) and 0.5 < st.settled < 1, "stop.settled", st.settled,
           "give the confidence at which the ranking counts as settled, in (0.5, 1) (e.g. 0.99), or null")
    _check(not s.stages, "stop.settled", st.settled,
           "ends a game early, and a staged game (stages) plays every stage: leave one of them")
    if not rating_class(s.rating).says_order:
        raise ConfigError(f"stop.settled={st.settled} stops once the ranking is sure, and {rating_name(s.rating)} "
                          "cannot say how sure it is (no uncertainty): use rating=irt, trueskill, ttt or bradley_terry, "
                          "or stop.settled=null (keys: stop.settled, rating)")


def prepare(cfg: DictConfig) -> None:
    """Settle what the config leaves to the cohort and the estimator, in place, so that the run
    records (and a resume replays) plain values: a draw margin tied to sigma* becomes its number,
    and stages name players, not roles. Also what can only be checked before the config is typed:
    an estimator's settings that refer to a rating key the rating does not have."""
    check_links(cfg.estimator, cfg.rating)
    if isinstance(cfg.rating.get("draw_margin"), str):
        cfg.rating.draw_margin = draw_margin_of(cfg.rating.draw_margin, cfg.estimator)
    if "confidence" in cfg.estimator and cfg.estimator.confidence is None:
        # Adaptive: unsure = below the confidence at which the game stops, so it samples until then.
        cfg.estimator.confidence = float(cfg.stop.settled) if cfg.stop.settled is not None else 0.95
    if cfg.stages:
        resolved = resolve_stages(cfg)
        for st, res in zip(cfg.stages, resolved):
            st.join, st.setters, st.answer_only = res["join"], res["setters"], []


def build_settings(cfg: DictConfig) -> SkateConfig:
    """The run's settings from a composed config: settled (:func:`prepare`, in place), typed once
    (``OmegaConf.to_object``: every section an instance of its schema), then checked
    (:func:`validate`). Everything that plays or prepares a game takes these; only the
    command-line layer sees the composed config."""
    check_known_keys(cfg)
    prepare(cfg)  # a draw margin tied to sigma* becomes its number; stages name players, not roles
    return validate(_typed(cfg))


def _typed(cfg: DictConfig) -> SkateConfig:
    try:
        return OmegaConf.to_object(cfg)  # type: ignore[return-value]
    except OmegaConfBaseException as exc:
        key = getattr(exc, "full_key", None)
        raise ConfigError(f"{key + ': ' if key else ''}{str(exc).splitlines()[0]}") from None


def record_of(settings: Any) -> dict[str, Any]:
    """The settings as plain data, as a run records them (``run_start.config``): what
    ``OmegaConf.to_container(OmegaConf.structured(settings), enum_to_str=True)`` gives (each
    dataclass a dict of its fields in order, an enum by its name, tuples as lists), read straight
    off the typed settings, which hold no interpolation: ~200x faster than through OmegaConf, and it
    runs at every run's start and every resume's check."""
    return _plain(settings)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def to_container(cfg: DictConfig) -> dict[str, Any]:
    return OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)  # type: ignore[return-value]

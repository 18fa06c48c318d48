"""Structured config schemas for every Hydra config group.

Each YAML option under ``conf/<group>/`` extends one of these dataclasses (``defaults:
[/schema/<group>/<name>@_here_, _self_]``; the schemas are stored out of the options users choose,
:func:`skate.registry.schema_node`), so a misspelt key or a value of the wrong type fails while
Hydra composes the config, naming the key. Every registered game's schema, and every registered
component's with no YAML, is the option ``<group>=<name>`` itself.
Range checks that types cannot express live beside each schema (its ``check``, returning
:class:`~skate.errors.Problem` s; a game's in its ``check_config``); :func:`validate` runs them
and the checks that span sections before anything else, and raises :class:`ConfigError` naming the
offending key and what to change.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Any, Optional

from omegaconf import MISSING

# Every section's schema lives with its component; they are imported here to compose the whole.
from skate.augment import AugConfig
from skate.embedders.config import EmbedderConfig, embedder
from skate.errors import ConfigError, Problem, Settings, not_a_setting, raise_first, require
from skate.errors import check as _check
from skate.estimators.base import EstimatorConfig, estimator
from skate.games import get_game, load_games
from skate.games.base import AnswerFormat, GameConfig
from skate.llm.config import LLMConfig
from skate.loggers.base import LoggerConfig, logger
from skate.optimize.config import OptimizerConfig, check_players
from skate.players.config import PlayersConfig, check_topic_skills, cohort_roles, preset_players
from skate.ratings.base import rating, rating_class, rating_name
from skate.ratings.config import OutcomeRule, OutcomeRuleConfig, RatingConfig
from skate.registry import spoken
from skate.runlog.files import RatingLog
from skate.runlog.records import ScheduleMode
from skate.sandbox.config import SandboxConfig, sandbox


def resolve_stages(settings: SkateConfig) -> list[dict[str, Any]]:
    """The stages of the settings with every role replaced by its player and ``answer_only``
    turned into ``setters`` (the stage's active players less those): ``[{name, join, setters,
    rounds}]``. Raises :class:`ConfigError` naming the stage and what to add or change."""
    cfg = settings
    players = cfg.players
    names = [str(p.name) for p in players.simulated] + [str(p.name) for p in players.llm]
    roles = cohort_roles(players)
    for role, who in roles.items():
        _check(who in names, f"players.roles.{role}", who, f"names no player of this cohort ({names})")

    def named(stage_key: str, field_name: str, items: Any) -> list[str]:
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
                    f"players.roles.{item}=<player> on the command line"
                )
        return out

    stages = list(cfg.stages or [])
    resolved: list[dict[str, Any]] = []
    for i, st in enumerate(stages):
        key = f"stages[{i}] ({st.name})"
        resolved.append(
            {
                "name": str(st.name),
                "join": named(key, "join", st.join),
                "setters": None if st.setters is None else named(key, "setters", st.setters),
                "answer_only": named(key, "answer_only", st.answer_only),
                "rounds": int(st.rounds),
            }
        )
    later = {n for st in resolved for n in st["join"]}
    active = [n for n in names if n not in later]
    out: list[dict[str, Any]] = []
    for i, stage in enumerate(resolved):
        key = f"stages[{i}] ({stage['name']})"
        _check(stage["rounds"] >= 0, f"{key}.rounds", stage["rounds"], "must be >= 0")
        twice = sorted(set(stage["join"]) & set(active))
        _check(not twice, f"{key}.join", twice, "a player joins only once (and not if it plays from the start)")
        active += stage["join"]
        if stage["answer_only"]:
            _check(
                stage["setters"] is None,
                f"{key}.answer_only",
                stage["answer_only"],
                "give setters or answer_only, not both",
            )
            absent = sorted(set(stage["answer_only"]) - set(active))
            _check(not absent, f"{key}.answer_only", absent, f"not in the game at this stage (active: {active})")
            stage["setters"] = [n for n in active if n not in stage["answer_only"]]
        if stage["rounds"] and not any(s["rounds"] for s in out):
            _check(
                len(active) >= 2,
                key,
                f"{len(active)} player(s) {active}",
                "the first stage that plays needs at least 2 players in the game: join fewer players later "
                "or use a larger cohort",
            )
        out.append({k: stage[k] for k in ("name", "join", "setters", "rounds")})
    if out:
        _check(sum(done["rounds"] for done in out) >= 1, "stages", "0 rounds in all", "play at least one round")
    return out


# --------------------------------------------------------------------------- the top level's own sections
# The game loop's settings (the schedule, stages, stop and events sections): the engine takes them
# as its Loop (skate.runner.loop_of).


@dataclass
class ScheduleConfig(metaclass=Settings):
    """Who sets and who answers in each round.

    ``rounds`` (default): everyone sets, everyone answers. ``matches`` (ZeroSumEval's protocol):
    each round is one match between an ordered pair of players, the setter setting and the
    solver alone answering; the pair is the least-played ordered pair so far (a round-robin over
    ordered pairs, ties drawn from the run seed), and ``game.rounds`` is the number of matches.
    """

    mode: ScheduleMode = ScheduleMode.rounds


@dataclass
class EventsConfig(metaclass=Settings):
    """What the event log keeps of the ratings. ``task`` (default): one ``rated`` event per task
    (and per forfeit) with the count of pairwise updates it made and each moved player's numbers
    after them (TrueSkill's μ and σ, Elo's rating): the log grows with tasks × players. ``pair``:
    one ``rating`` event per pairwise update, as runs before it were logged (tasks × players²:
    a 50-player game writes 61,250 a round). Either way every update is made; a run resumed from
    a log of the other kind continues in that log's kind."""

    rating_updates: RatingLog = RatingLog.task
    # What the players replied, in replies.jsonl beside the log, for the game viewer (skate view):
    # each model call's reply (and its thinking) and each player's graded samples (a simulated
    # player's drawn choices), tied to the task or attempt they served. false: not kept.
    replies: bool = True


@dataclass
class StageConfig(metaclass=Settings):
    """A stage of a staged game. ``join``, ``setters`` and ``answer_only`` name players by name or
    by role (``players.roles``, or a simulated cohort's skill order: strongest, second, ..., weakest)."""

    name: str = MISSING
    join: list[str] = field(default_factory=list)  # who joins at the start (answers every earlier task)
    setters: Optional[list[str]] = None  # who sets tasks in this stage's rounds (None = every active player)
    answer_only: list[str] = field(default_factory=list)  # or: every active player sets but these
    rounds: int = 0


@dataclass
class StopConfig(metaclass=Settings):
    """End the game before game.rounds once its ranking is settled."""

    # A confidence in (0.5, 1): after a round, stop when every adjacent pair of the ranking is
    # ordered with at least this probability under the rating's model. null: play every round.
    settled: Optional[float] = None
    min_rounds: int = 3  # never stop before this many rounds

    def check(self) -> list[Problem]:
        """What types cannot say is wrong with these settings (keys within ``stop``); the engine
        trusts them (with the rating and the stages, :func:`validate` checks what they say together)."""
        settled = self.settled
        return [
            *require(self.min_rounds >= 1, "min_rounds", self.min_rounds, "must be >= 1"),
            *require(
                settled is None or (isinstance(settled, (int, float)) and 0.5 < settled < 1),
                "settled",
                settled,
                "give the confidence at which the ranking counts as settled, in (0.5, 1) (e.g. 0.99), or null",
            ),
        ]


# --------------------------------------------------------------------------- top level
@dataclass
class SkateConfig(metaclass=Settings):
    """The whole config, and once composed and checked (:func:`build_settings`), a run's typed
    settings: each section an instance of its group's schema (``settings.rating`` a
    ``TrueSkillConfig``, ``settings.estimator`` an ``Algorithm1Config``, ...), each typed here by
    the base schema its group's options extend."""

    seed: int = 0
    # Each section's default is the option conf/config.yaml's defaults list chooses, so that
    # SkateConfig() is the game `skate` plays with no overrides (tests/settings/test_config.py
    # checks the two agree).
    game: GameConfig = field(default_factory=lambda: get_game("cop").config_schema())
    rating: RatingConfig = field(default_factory=lambda: rating.get("trueskill").schema())
    aug: AugConfig = field(default_factory=AugConfig)
    estimator: EstimatorConfig = field(default_factory=lambda: estimator.get("algorithm1").schema())
    players: PlayersConfig = field(default_factory=lambda: preset_players("simulated"))
    sandbox: SandboxConfig = field(default_factory=lambda: sandbox.get("auto").schema())
    embedder: EmbedderConfig = field(default_factory=lambda: embedder.get("hashing").schema())
    logger: LoggerConfig = field(default_factory=lambda: logger.get("wandb").schema())
    optimizer: OptimizerConfig = field(default_factory=OptimizerConfig)
    llm: LLMConfig = field(default_factory=LLMConfig)
    print_table: bool = True
    report: bool = True  # write report/ (plots, exports, HTML) at the end of every game and sweep
    # A staged game (SKATE §6.1/§6.2): players join stage by stage; empty = one stage, game.rounds long.
    stages: list[StageConfig] = field(default_factory=list)
    # After the game, rate its log again other ways: [{name, rating: <option>?, <rating key>: value, ...}],
    # each from the game's own rating settings (or the named rating option's) plus these keys, e.g.
    # [{name: absolute, outcome: absolute}]. Each gives ratings.<name>.json and run_end's rerated.<name>.
    # untyped: an entry's keys are its rating's, typed by that rating's schema (rerate_settings)
    rerate: list[Any] = field(default_factory=list)
    schedule: ScheduleConfig = field(default_factory=ScheduleConfig)
    stop: StopConfig = field(default_factory=StopConfig)
    events: EventsConfig = field(default_factory=EventsConfig)


# The sections a config group's option fills in (conf/config.yaml's defaults list).
SECTIONS = ("game", "rating", "aug", "estimator", "players", "sandbox", "embedder", "logger", "optimizer")
# The groups whose options build different components: each group's registry names them, with
# their schemas (stored as schema/<group>/<name>) and capabilities.
REGISTRIES = (rating, estimator, sandbox, embedder, logger)
# The groups with one schema each (stored as schema/<group>).
_SCHEMAS: tuple[tuple[str, type], ...] = (
    ("aug", AugConfig),
    ("players", PlayersConfig),
    ("optimizer", OptimizerConfig),
)


# --------------------------------------------------------------------------- validation
def unknown_setting(value: Any, prefix: str = "") -> str | None:
    """The first key of the typed settings that is no field of its schema, as a one-line error:
    ``+game.x=1`` adds a key Hydra's composition lets through (``+`` lifts the schema's guard) and
    typing sets it on the section as an attribute, which the game could not take."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = [f.name for f in dataclasses.fields(value)]
        extra = [k for k in vars(value) if k not in names]
        if extra:
            return not_a_setting(f"{prefix}{extra[0]}", type(value))
        found = (unknown_setting(getattr(value, n), f"{prefix}{n}.") for n in names)
    elif isinstance(value, (list, tuple)):
        found = (unknown_setting(v, f"{prefix.rstrip('.')}[{i}].") for i, v in enumerate(value))
    elif isinstance(value, dict):
        found = (unknown_setting(v, f"{prefix}{k}.") for k, v in value.items())
    else:
        return None
    return next((f for f in found if f is not None), None)


def validate(settings: SkateConfig) -> SkateConfig:
    """Range and consistency checks that types cannot express, on settings (a composed config is
    made into settings, and checked, by :func:`build_settings`): each section checks itself (its
    schema's ``check``, a game's ``check_config``); what follows is only what needs two sections together. Settles the stages to name players, not roles
    (:func:`resolve_stages`, run here once per settings built). Returns the settings checked."""
    if not isinstance(settings, SkateConfig):
        raise TypeError(
            f"validate takes settings, not a {type(settings).__name__}: give the composed config to "
            "build_settings(cfg), which settles, types and checks it"
        )
    s = settings
    try:
        game = get_game(s.game.name)
    except KeyError as exc:
        raise ConfigError(f"game.name={s.game.name!r} is invalid: {exc.args[0]}") from None
    raise_first(game.check_config(s.game), "game")
    for f in dataclasses.fields(s):  # each section whose schema has a check checks itself
        own_check = getattr(getattr(s, f.name), "check", None)
        if own_check is not None:
            raise_first(own_check(), f.name)
    # What follows is only what needs two sections together.
    outcome = s.rating.outcome if isinstance(s.rating, OutcomeRuleConfig) else None  # None: no rule (irt)
    says_order = rating.names(lambda e: e.component.says_order)
    if not game.players_set(s.game):
        name, mode = s.game.name, getattr(s.game, "mode", None)
        _check(
            outcome != OutcomeRule.setter_vs_solver,
            "rating.outcome",
            str(outcome),
            f"game={name} game.mode={mode} builds its own tasks, so there are no setters to rate: use a "
            f"pairwise rule (rating.outcome={spoken(r for r in OutcomeRule if r != OutcomeRule.setter_vs_solver)})",
        )
        _check(
            s.schedule.mode != ScheduleMode.matches,
            "schedule.mode",
            str(s.schedule.mode),
            f"game={name} game.mode={mode} has no setters to pair in matches: use rounds",
        )
    if s.schedule.mode == ScheduleMode.matches:
        _check(
            outcome == OutcomeRule.setter_vs_solver,
            "rating.outcome",
            outcome,
            f"schedule.mode=matches has one answerer per task, so only "
            f"rating.outcome=setter_vs_solver rates it (or rating=zerosumeval), not {rating_name(s.rating)}",
        )
        _check(
            not s.stages,
            "stages",
            f"{len(s.stages)} stages",
            "schedule.mode=matches plays one stage: leave stages empty",
        )
    kind = estimator.of(s.estimator)
    if kind.component.uses_order and not rating_class(s.rating).says_order:
        raise ConfigError(
            f"{kind.option} samples where the ranking is unsure, and {rating_name(s.rating)} cannot "
            f"say how sure it is (no uncertainty): use rating={spoken(says_order)} (keys: estimator, rating)"
        )
    formats = {n: g.spec.answer_format for n, g in load_games().items()}
    if kind.component.greedy_decoding:
        one_answer = (AnswerFormat.multiple_choice, AnswerFormat.exact_match)
        _check(
            game.spec.answer_format in one_answer,
            "estimator",
            kind.name,
            f"scores one answer to one query, and game={s.game.name}'s answers are "
            f"{game.spec.answer_format} sessions: use it with "
            f"{spoken(sorted(n for n, f in formats.items() if f in one_answer))}",
        )
    if kind.component.reads:
        _check(
            game.spec.answer_format == AnswerFormat.multiple_choice,
            "estimator",
            kind.name,
            f"reads the probability of each option's label, and game={s.game.name}'s answers are "
            f"{game.spec.answer_format}, not an option: use it with "
            f"{spoken(sorted(n for n, f in formats.items() if f == AnswerFormat.multiple_choice))}, or estimator=adaptive",
        )
        _check(
            not getattr(s.game, "reasoning", False),
            "estimator",
            kind.name,
            "reads the option's label as the reply's first token, and game.reasoning=true asks for the "
            "working first: set game.reasoning=false or use another estimator",
        )
    if kind.component.picks_answerers:
        _check(
            s.schedule.mode != ScheduleMode.matches,
            "estimator",
            kind.name,
            "chooses who answers each task, and schedule.mode=matches has one answerer a match: use "
            f"estimator={spoken(estimator.names(lambda e: not e.component.picks_answerers))} "
            "(keys: estimator, schedule.mode)",
        )
    if s.stop.settled is not None:
        _check(
            not s.stages,
            "stop.settled",
            s.stop.settled,
            "ends a game early, and a staged game (stages) plays every stage: leave one of them",
        )
        if not rating_class(s.rating).says_order:
            raise ConfigError(
                f"stop.settled={s.stop.settled} stops once the ranking is sure, and "
                f"{rating_name(s.rating)} cannot say how sure it is (no uncertainty): use "
                f"rating={spoken(says_order)}, or stop.settled=null (keys: stop.settled, rating)"
            )
    known_kinds = {k for g in load_games().values() for k in g.spec.kinds} | set(game.skill_keys(s.game))
    raise_first(check_topic_skills(s.players, known_kinds, s.game.name, game.skill_keys(s.game)), "players")
    # Stages name players (a role becomes its player), once per settings built: what the run records.
    s.stages = [
        StageConfig(name=st["name"], join=st["join"], setters=st["setters"], rounds=st["rounds"])
        for st in resolve_stages(s)
    ]  # raises on a stage naming no player or role of this cohort
    check_players(s.optimizer, [p.name for p in s.players.llm])
    return s


def record_of(settings: object) -> dict[str, Any]:
    """The settings (a :class:`SkateConfig`, or any of its sections: ``object``, since it reads any
    dataclass the same way) as plain data, as a run records them (``run_start.config``): what
    OmegaConf's container of the structured settings gives, enums as strings (each dataclass a dict
    of its fields in order, an enum by its name, tuples as lists), read straight off the typed
    settings, which hold no interpolation: ~200x faster than through OmegaConf, and it runs at
    every run's start and every resume's check."""
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

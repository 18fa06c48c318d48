"""A recorded run's settings, rebuilt one way.

Every run records its settings in its first event (``run_start.config``, the settings as plain
data), with the config's version (``config_version``), the group choices it was composed from
(``choices``, e.g. ``{"rating": "trueskill", ...}``) and the command line's overrides
(``overrides``). :func:`run_settings`, the one door to a finished run's settings, turns any such
record, old or new, into typed settings, as :func:`skate.settings.options.build_settings` makes them for a
new run: each section is typed by the option the run chose for its group (or, for records made
before the choices were recorded, by the schema its ``_target_`` belongs to; the game by its
name), keys the record lacks take that schema's defaults, and records of older versions are
migrated first (:data:`MIGRATIONS`). Resume (``skate play resume=``), ``skate rate`` (and the
``rerate`` list), the report, ``skate sensitivity``, the export, the leaderboard and the
ZeroSumEval matches all read a run's settings through it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from skate.errors import ConfigError
from skate.games import get_game
from skate.ratings.base import rating_class
from skate.ratings.config import draw_margin_of, sigma_star_factor, validate_rating
from skate.ratings.rerate import load_stream, rate_stream
from skate.registry import Registry
from skate.runlog.events import RunStarted, read_start
from skate.settings.config import REGISTRIES, SECTIONS, SkateConfig, record_of
from skate.settings.options import (
    Composed,
    build_settings,
    composed,
    edited,
    merged,
    option,
    option_schema,
    to_settings,
    typed,
    yaml_options,
)

# The version of the settings' record a run of this skate writes (run_start.config_version).
# 1: runs made before the version was recorded (see _v1_to_v2).
CONFIG_VERSION = 3

# Modules renamed to follow their config group's name (version 2), as recorded _target_ prefixes.
_RENAMED = {
    "skate.scoring.": "skate.estimators.",
    "skate.tracking.": "skate.loggers.",
    "skate.novelty.": "skate.embedders.",
}


def _v1_to_v2(record: dict[str, Any]) -> dict[str, Any]:
    """Version 1 named the estimators, loggers and embedders by their old modules (skate.scoring,
    skate.tracking, skate.novelty). Keys added since (stop, events, llm.structured,
    players.simulated[].slip, ...) are left to the schemas' defaults."""
    for section in record.values():
        target = section.get("_target_") if isinstance(section, dict) else None
        if isinstance(target, str):
            for old, new in _RENAMED.items():
                if target.startswith(old):
                    section["_target_"] = new + target[len(old) :]
    return record


# Estimators and loggers became packages of a module each (version 3), as recorded _target_s.
_MOVED = {
    f"skate.estimators.{cls}": f"skate.estimators.{module}.{cls}"
    for module, cls in (
        ("algorithm1", "Algorithm1"),
        ("fixed_n", "FixedN"),
        ("greedy", "Greedy"),
        ("logprobs", "LogProbs"),
        ("decided", "Decided"),
        ("adaptive", "Adaptive"),
    )
} | {
    f"skate.loggers.{cls}": f"skate.loggers.{module}.{cls}"
    for module, cls in (("console", "ConsoleLogger"), ("wandb_logger", "WandbLogger"), ("base", "NullLogger"))
}


def _v2_to_v3(record: dict[str, Any]) -> dict[str, Any]:
    """Version 2 named each estimator and logger by its group's one module (skate.estimators.FixedN,
    skate.loggers.WandbLogger); each now has a module of its own in that package."""
    for section in record.values():
        target = section.get("_target_") if isinstance(section, dict) else None
        if isinstance(target, str) and target in _MOVED:
            section["_target_"] = _MOVED[target]
    return record


# version -> the function that turns a record of that version into one of the next. A change of
# the settings that renames or removes a key adds a step here (and raises CONFIG_VERSION).
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    1: _v1_to_v2,
    2: _v2_to_v3,
}


class RecordError(ConfigError):
    """A run's recorded settings cannot be read by this skate; the message says why."""


def migrate(record: Mapping[str, Any], version: int | None) -> dict[str, Any]:
    """``record`` brought to :data:`CONFIG_VERSION` (``None``: version 1, an unversioned record)."""
    version = 1 if version is None else int(version)
    if version > CONFIG_VERSION:
        raise RecordError(
            f"the run was recorded by a newer skate (settings version {version}; this one reads up to "
            f"{CONFIG_VERSION}): upgrade skate to read it"
        )
    data = copy.deepcopy(dict(record))
    while version < CONFIG_VERSION:
        data = MIGRATIONS[version](data)
        version += 1
    return data


def _schema_of_choice(registry: Registry, choice: str) -> type:
    """The schema of the option ``<group>=<choice>`` a run recorded: a registered name's own, or
    (an option that is a YAML over a schema, e.g. ``rating=zerosumeval``) the composed option's."""
    if choice in registry.names():
        return registry.get(choice).schema
    try:
        return option_schema(registry.group, choice)
    except ConfigError:  # the option is gone: said in one line
        names = sorted(set(registry.names()) | yaml_options(registry.group))
        raise RecordError(
            f"the run's {registry.group}={choice} is not an option this skate has "
            f"(its {registry.group}s: {', '.join(names)})"
        ) from None


def _schema_of_target(registry: Registry, target: str) -> type:
    """The schema a recorded ``_target_`` belongs to (records of runs made before the group
    choices were recorded)."""
    entry = registry.of_target(target)
    if entry is None:
        raise RecordError(
            f"the run's {registry.group} {target!r} is not one this skate has "
            f"(its {registry.group}s: {', '.join(registry.names())})"
        )
    return entry.schema


def recorded_config(
    record: Mapping[str, Any], version: int | None = None, choices: Mapping[str, Any] | None = None
) -> Composed:
    """The composed-config form of a record (typed by its schemas, defaults filled), before edits,
    overrides and checks: what :func:`run_settings` builds settings from. Each section of a group
    with a registry is typed by the option the run recorded choosing (``choices``); a record with
    no choice for it (runs before choices were recorded) by its recorded ``_target_``."""
    data = migrate(record, version)
    choices = choices or {}
    cfg = composed()  # every section typed, at its defaults: what the record lacks
    game = data.get("game") or {}
    try:
        cfg.game = typed(get_game(str(game.get("name", cfg.game.name))).config_schema)
    except KeyError as exc:
        raise RecordError(f"the run's game {game.get('name')!r} is not one this skate has: {exc.args[0]}") from None
    for registry in REGISTRIES:
        section, choice = data.get(registry.group), choices.get(registry.group)
        if choice:
            cfg[registry.group] = typed(_schema_of_choice(registry, str(choice)))
        elif isinstance(section, Mapping) and section.get("_target_"):
            cfg[registry.group] = typed(_schema_of_target(registry, str(section["_target_"])))
    try:
        return merged(cfg, data)
    except ConfigError as exc:
        raise RecordError(f"the run's recorded settings do not fit this skate's ({exc})") from None


Run = str | Path | Mapping[str, Any] | RunStarted


def run_settings(
    run: Run, edits: Mapping[str, Any] | None = None, *, check: bool | Literal["rating"] = True
) -> SkateConfig:
    """The one door to a finished (or stopped) run's settings.

    ``run``: the run's folder, or its ``run_start`` record (a :class:`~skate.runlog.events.RunStarted`, or
    the event as a mapping: ``config``, ``config_version``, ``choices``). The record is migrated
    to this skate's layout (:func:`migrate`) and typed (:func:`recorded_config`); then ``edits``
    are made, ``{key: value}``: a config group's option (``{"rating": "elo"}``, ``{"logger":
    "none"}``: the section becomes that option's), then dotted keys set (``{"game.rounds": 60,
    "players.llm": [{...}, ...]}``: a list or a plain dict replaces the setting whole, a section's
    keys go over its own). The command line's ``key=value`` overrides are parsed into these by
    :func:`skate.cli.compose.edits_of`.

    ``check``: ``True`` settles and checks the settings as a new run's
    (:func:`skate.settings.options.build_settings`); ``"rating"`` settles the rating's draw margin and
    checks the rating section alone (re-rating: the rest was checked when the run was played);
    ``False`` types them unchecked (a report of an old run whose settings today's checks refuse
    still renders). Bad records and edits raise one line (:class:`ConfigError`)."""
    start = read_start(Path(run)) if isinstance(run, (str, Path)) else run
    cfg = recorded_config(start.get("config") or {}, start.get("config_version"), start.get("choices"))
    edits = dict(edits or {})
    for key in [k for k, v in edits.items() if k in OPTION_GROUPS and isinstance(v, str)]:
        cfg[key] = option(key, edits.pop(key))[0]  # an option first, its keys set after
    for key, value in edits.items():
        cfg = edited(cfg, key, value)
    if check is True:
        return build_settings(cfg)
    settings = to_settings(cfg)
    if check == "rating":
        settle_rating(settings.rating, settings.estimator)
    return settings


def settle_rating(rating: Any, estimator: Any) -> Any:
    """A rating's settings made ready to rate a recorded run (in place, and returned): a draw margin
    tied to the estimator's sigma* (``estimator``: the run's settings) becomes its number, then the
    rating section alone is checked."""
    if sigma_star_factor(getattr(rating, "draw_margin", None)) is not None:
        rating.draw_margin = draw_margin_of(rating.draw_margin, record_of(estimator))
    validate_rating(rating)
    return rating


# The config groups an edit may choose an option of (``{"rating": "elo"}``): not the game, which is
# the run's own (a game's settings are edited key by key).
OPTION_GROUPS = tuple(g for g in SECTIONS if g != "game")


def rate_run(run_dir: str | Path, edits: Mapping[str, Any] | None = None) -> tuple[str, list[dict[str, Any]]]:
    """A finished run's games rated again with no model call (``skate rate``): its own rating
    settings, or with ``edits`` (``{"rating": "elo"}``, ``{"rating.outcome": "absolute"}``, ...:
    :func:`run_settings`') another way, fed the stream its live rating saw. Returns (the backend's
    class name, its table)."""
    run_dir = Path(run_dir)
    players, stream, _ = load_stream(run_dir)
    rating = run_settings(run_dir, edits, check="rating").rating
    return rating_class(rating).__name__, rate_stream(rating, players, stream)

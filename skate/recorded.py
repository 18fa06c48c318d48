"""A recorded run's settings, rebuilt one way.

Every run records its settings in its first event (``run_start.config``, the settings as plain
data), with the config's version (``config_version``), the group choices it was composed from
(``choices``, e.g. ``{"rating": "trueskill", ...}``) and the command line's overrides
(``overrides``). :func:`load_settings` turns any such record, old or new, into typed settings,
as :func:`skate.config.build_settings` makes them for a new run: each section is typed by the
schema its recorded ``_target_`` (or, for the game, its name) belongs to, keys the record lacks
take that schema's defaults, and records of older versions are migrated first
(:data:`MIGRATIONS`). Resume (``python -m skate resume=``), ``skate.rate``, the report,
``skate.sensitivity`` and the export all read a run's settings through it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from skate.config import REGISTRIES, SkateConfig, build_settings, compose_config
from skate.errors import ConfigError
from skate.events import read_start
from skate.games import get_game

# The version of the settings' record a run of this skate writes (run_start.config_version).
# 1: runs made before the version was recorded (see _v1_to_v2).
CONFIG_VERSION = 2

# Modules renamed to follow their config group's name (version 2), as recorded _target_ prefixes.
_RENAMED = {"skate.scoring.": "skate.estimators.", "skate.tracking.": "skate.loggers.",
            "skate.novelty.": "skate.embedders."}


def _v1_to_v2(record: dict[str, Any]) -> dict[str, Any]:
    """Version 1 named the estimators, loggers and embedders by their old modules (skate.scoring,
    skate.tracking, skate.novelty). Keys added since (stop, events, llm.structured,
    players.simulated[].slip, ...) are left to the schemas' defaults."""
    for section in record.values():
        target = section.get("_target_") if isinstance(section, dict) else None
        if isinstance(target, str):
            for old, new in _RENAMED.items():
                if target.startswith(old):
                    section["_target_"] = new + target[len(old):]
    return record


# version -> the function that turns a record of that version into one of the next. A change of
# the settings that renames or removes a key adds a step here (and raises CONFIG_VERSION).
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    1: _v1_to_v2,
}


class RecordError(ConfigError):
    """A run's recorded settings cannot be read by this skate; the message says why."""


def migrate(record: Mapping[str, Any], version: int | None) -> dict[str, Any]:
    """``record`` brought to :data:`CONFIG_VERSION` (``None``: version 1, an unversioned record)."""
    version = 1 if version is None else int(version)
    if version > CONFIG_VERSION:
        raise RecordError(f"the run was recorded by a newer skate (settings version {version}; this one reads up to "
                          f"{CONFIG_VERSION}): upgrade skate to read it")
    data = copy.deepcopy(dict(record))
    while version < CONFIG_VERSION:
        data = MIGRATIONS[version](data)
        version += 1
    return data


def recorded_config(record: Mapping[str, Any], version: int | None = None) -> DictConfig:
    """The composed-config form of a record (typed by its schemas, defaults filled), before
    overrides and checks: what :func:`load_settings` builds settings from."""
    data = migrate(record, version)
    cfg = compose_config([])  # every section typed, at its defaults: what the record lacks
    game = data.get("game") or {}
    try:
        cfg.game = OmegaConf.structured(get_game(str(game.get("name", cfg.game.name))).config_schema)
    except KeyError as exc:
        raise RecordError(f"the run's game {game.get('name')!r} is not one this skate has: {exc.args[0]}") from None
    for registry in REGISTRIES:
        section = data.get(registry.group)
        if isinstance(section, Mapping) and section.get("_target_"):
            entry = registry.of_target(str(section["_target_"]))
            if entry is None:
                raise RecordError(f"the run's {registry.group} {section['_target_']!r} is not one this skate has "
                                  f"(its {registry.group}s: {', '.join(registry.names())})")
            cfg[registry.group] = OmegaConf.structured(entry.schema)
    OmegaConf.set_struct(cfg, False)  # a dict-typed setting (llm.prices, ...) takes the record's keys;
    try:                              # a schema's node still refuses a key it does not have
        merged = OmegaConf.merge(cfg, data)
        OmegaConf.set_struct(merged, True)
        return merged  # type: ignore[return-value]
    except OmegaConfBaseException as exc:
        where = f"{exc.full_key}: " if getattr(exc, "full_key", None) else ""
        raise RecordError(f"the run's recorded settings do not fit this skate's ({where}"
                          f"{str(exc).splitlines()[0]})") from None


def load_settings(record: Mapping[str, Any], version: int | None = None,
                  overrides: Sequence[str] = ()) -> SkateConfig:
    """A recorded run's settings (``run_start.config``, at ``version``), with ``overrides``
    applied: ``key=value`` (``game.rounds=60``), or ``group=option`` for a group whose sections
    are chosen whole (``logger=none``)."""
    cfg = recorded_config(record, version)
    apply_overrides(cfg, overrides)
    return build_settings(cfg)


def run_settings(run_dir: str | Path, overrides: Sequence[str] = ()) -> SkateConfig:
    """The settings of the run in ``run_dir`` (its events.jsonl's run_start)."""
    start = read_start(Path(run_dir))
    return load_settings(start.config, start.get("config_version"), overrides)


def apply_overrides(cfg: DictConfig, overrides: Sequence[str]) -> None:
    groups = {r.group for r in REGISTRIES} | {"aug", "players", "optimizer"}
    for item in overrides:
        key, sep, value = item.partition("=")
        key = key.lstrip("+")
        if not sep:
            raise ConfigError(f"cannot read the override {item!r}: write key=value")
        if key in groups:
            cfg[key] = compose_config([f"{key}={value}"])[key]
            continue
        try:
            OmegaConf.update(cfg, key, OmegaConf.from_dotlist([f"x={value}"]).x, force_add=False)
        except OmegaConfBaseException as exc:
            raise ConfigError(f"{key}: {str(exc).splitlines()[0]}") from None

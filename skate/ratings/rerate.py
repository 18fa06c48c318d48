"""A finished run's games rated again, from its event log, with no model call: the stream the
live rating saw (each rated task and each forfeit, in order) fed to a fresh backend; and the
config's ``rerate`` list (the same games rated other ways as a game ends).

``skate rate`` (:mod:`skate.cli.rate`) is the command-line tool over this.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from skate.errors import ConfigError
from skate.events import Forfeit, RatedTask, read_run
from skate.paths import CONF_DIR
from skate.ratings.base import rating as rating_registry
from skate.ratings.config import OutcomeRule, draw_margin_of, sigma_star_factor, validate_rating
from skate.records import BENCHMARK
from skate.registry import schema_default


def load_stream(run_dir: Path) -> tuple[list[str], list[RatedTask | Forfeit], dict[str, Any]]:
    """Players (roster order), what the ratings were updated from (each rated task with its
    setter and p(correct) by player, and each forfeit, in live order), the run's config."""
    run = read_run(run_dir, keep_updates=0)  # re-rating needs which tasks were rated, not the updates
    return run.players, run.rating_stream(), run.start.config


def override_value(value: Any) -> str:
    """``value`` written in Hydra's override syntax (strings quoted and escaped)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, Mapping):  # Hydra's own syntax: {key: value, ...}
        return "{" + ", ".join(f"{k}: {override_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(override_value(v) for v in value) + "]"
    return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"


def rate_stream(rating: DictConfig, players: Sequence[str], stream: Sequence[RatedTask | Forfeit]) -> list[dict[str, Any]]:
    """The table of a fresh backend built from ``rating`` fed a run's rating stream."""
    if str(rating.get("outcome", "")) == OutcomeRule.setter_vs_solver and any(
            getattr(item, "setter", None) == BENCHMARK for item in stream):
        raise ConfigError("rating.outcome=setter_vs_solver rates setters against solvers, but this run's tasks "
                          f"were built by the game itself (setter {BENCHMARK}): use rating.outcome=relative "
                          "or absolute")
    backend = instantiate(rating, _convert_="all")
    backend.add_players(players)
    for item in stream:
        item.apply(backend)
    return [r.as_dict() for r in backend.table()]


# ------------------------------------------------------------------ rerate: the game's log rated other ways
RERATE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def rating_options() -> list[str]:
    return sorted(p.stem for p in (Path(CONF_DIR) / "rating").glob("*.yaml"))


def _option_config(option: str, key: str) -> DictConfig:
    """A rating option's settings (conf/rating/<option>.yaml) over its schema."""
    if option not in rating_options():
        raise ConfigError(f"{key}.rating={option!r} is invalid: give one of {rating_options()}")
    raw = OmegaConf.load(Path(CONF_DIR) / "rating" / f"{option}.yaml")
    schemas = {schema_default("rating", e.name): e.schema for e in rating_registry}
    schema = next((schemas[d] for d in raw.pop("defaults", []) if d in schemas), None)
    if schema is None:
        raise ConfigError(f"{key}.rating={option!r}: conf/rating/{option}.yaml names no rating schema")
    return OmegaConf.merge(OmegaConf.structured(schema), raw)


def rerate_configs(entries: Sequence[Any], rating: Any,
                   estimator: Any = None) -> list[tuple[str, DictConfig]]:
    """``(name, rating config)`` for each entry of the config's ``rerate`` list.

    An entry is ``{name: <name>, rating: <option>?, <rating key>: <value>, ...}``: the game's own
    rating settings (``rating``), or with ``rating:`` that option's defaults
    (``conf/rating/<option>.yaml``), with the entry's keys over them. A draw margin tied to sigma*
    takes the estimator's. Bad entries raise :class:`ConfigError` naming ``rerate[i]``."""
    out: list[tuple[str, DictConfig]] = []
    for i, entry in enumerate(entries):
        key = f"rerate[{i}]"
        if not isinstance(entry, Mapping):
            raise ConfigError(f"{key}={entry!r} is invalid: give {{name: <name>, <rating key>: <value>, ...}}, "
                              "e.g. {name: absolute, outcome: absolute}")
        fields = {str(k): v for k, v in entry.items()}
        name = str(fields.pop("name", "") or "")
        if not RERATE_NAME.fullmatch(name):
            raise ConfigError(f"{key}.name={name!r} is invalid: give each entry a name of letters, digits, _ . - "
                              "(it names ratings.<name>.json)")
        if name in {n for n, _ in out}:
            raise ConfigError(f"{key}.name={name!r} is invalid: another rerate entry has this name")
        key = f"rerate[{i}] ({name})"
        option = fields.pop("rating", None)
        if option is not None:
            base = _option_config(str(option), key)
        else:
            base = OmegaConf.structured(rating)  # the game's rating settings
        try:
            cfg = OmegaConf.merge(base, fields)
        except OmegaConfBaseException as exc:
            msg = str(exc).splitlines()[0]
            raise ConfigError(f"{key}: {msg} (an entry's keys are the rating's: "
                              f"{sorted(k for k in base if k != '_target_')})") from None
        if sigma_star_factor(cfg.get("draw_margin")) is not None:
            cfg.draw_margin = draw_margin_of(cfg.draw_margin, estimator, f"{key}.draw_margin")
        try:
            validate_rating(cfg)
        except ConfigError as exc:
            raise ConfigError(f"{key}: {exc}") from None
        out.append((name, cfg))
    return out


def rerate_run(run_dir: Path, configs: Sequence[tuple[str, DictConfig]]) -> dict[str, list[dict[str, Any]]]:
    """Each named rating config's table for the run in ``run_dir`` (its log read once)."""
    if not configs:
        return {}
    players, stream, _ = load_stream(run_dir)
    return {name: rate_stream(rating, players, stream) for name, rating in configs}



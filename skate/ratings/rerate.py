"""A finished run's games rated again, from its event log, with no model call: the stream the
live rating saw (each rated task and each forfeit, in order) fed to a fresh backend; and the
config's ``rerate`` list (the same games rated other ways as a game ends). Every rating here is
typed: an instance of a rating backend's schema (``TrueSkillConfig``, ``EloConfig``, ...).

``skate rate`` (:mod:`skate.cli.rate`) is the command-line tool over this, through
:func:`skate.settings.recorded.rate_run` (the run's own settings, read through the one door).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from skate.errors import ConfigError
from skate.ratings.base import rating as ratings
from skate.ratings.config import OutcomeRule, RatingConfig, draw_margin_of, sigma_star_factor, validate_rating
from skate.runlog.events import Forfeit, RatedTask, read_run
from skate.runlog.records import BENCHMARK

RatingStreamItem = RatedTask | Forfeit


def load_stream(run_dir: Path) -> tuple[list[str], list[RatedTask | Forfeit], dict[str, Any]]:
    """Players (roster order), what the ratings were updated from (each rated task with its
    setter and p(correct) by player, and each forfeit, in live order), the run's config."""
    run = read_run(run_dir, keep_updates=0)  # re-rating needs which tasks were rated, not the updates
    return run.players, run.rating_stream(), run.start.config


def rate_stream(
    rating: RatingConfig, players: Sequence[str], stream: Sequence[RatingStreamItem]
) -> list[dict[str, Any]]:
    """The table of a fresh backend built from ``rating`` (a rating schema's instance, e.g. a
    :class:`~skate.ratings.trueskill.TrueSkillConfig`) fed a run's rating stream."""
    if getattr(rating, "outcome", None) == OutcomeRule.setter_vs_solver and any(
        getattr(item, "setter", None) == BENCHMARK for item in stream
    ):
        raise ConfigError(
            "rating.outcome=setter_vs_solver rates setters against solvers, but this run's tasks "
            f"were built by the game itself (setter {BENCHMARK}): use rating.outcome=relative "
            "or absolute"
        )
    backend = ratings.build(rating)
    backend.add_players(players)
    for item in stream:
        item.apply(backend)
    return [r.as_dict() for r in backend.table()]


# ------------------------------------------------------------------ rerate: the game's log rated other ways
RERATE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def rerate_configs(
    entries: Sequence[Any],
    rating: RatingConfig,
    estimator: Mapping[str, Any] | None = None,
    *,
    option: Callable[[str], RatingConfig],
) -> list[tuple[str, RatingConfig]]:
    """``(name, rating settings)`` for each entry of the config's ``rerate`` list.

    An entry is ``{name: <name>, rating: <option>?, <rating key>: <value>, ...}``: the game's own
    rating settings (``rating``), or with ``rating:`` that option's (``option(<option>)``, the
    option as the project composes it: :func:`skate.settings.options.rating_option`), with the entry's keys
    over them. A draw margin tied to sigma* takes the estimator's (``estimator``: its settings as
    plain data). Bad entries raise :class:`ConfigError` naming ``rerate[i]``."""
    out: list[tuple[str, RatingConfig]] = []
    for i, entry in enumerate(entries):
        key = f"rerate[{i}]"
        if not isinstance(entry, Mapping):
            raise ConfigError(
                f"{key}={entry!r} is invalid: give {{name: <name>, <rating key>: <value>, ...}}, "
                "e.g. {name: absolute, outcome: absolute}"
            )
        fields = {str(k): v for k, v in entry.items()}
        name = str(fields.pop("name", "") or "")
        if not RERATE_NAME.fullmatch(name):
            raise ConfigError(
                f"{key}.name={name!r} is invalid: give each entry a name of letters, digits, _ . - "
                "(it names ratings.<name>.json)"
            )
        if name in {n for n, _ in out}:
            raise ConfigError(f"{key}.name={name!r} is invalid: another rerate entry has this name")
        key = f"rerate[{i}] ({name})"
        chosen = fields.pop("rating", None)
        try:
            base = OmegaConf.structured(rating if chosen is None else option(str(chosen)))
        except ConfigError as exc:
            raise ConfigError(f"{key}: {exc}") from None
        try:
            cfg: Any = OmegaConf.to_object(OmegaConf.merge(base, fields))
        except OmegaConfBaseException as exc:
            msg = str(exc).splitlines()[0]
            raise ConfigError(
                f"{key}: {msg} (an entry's keys are the rating's: {sorted(k for k in base if k != '_target_')})"
            ) from None
        if sigma_star_factor(getattr(cfg, "draw_margin", None)) is not None:
            cfg.draw_margin = draw_margin_of(cfg.draw_margin, estimator, f"{key}.draw_margin")
        try:
            validate_rating(cfg)
        except ConfigError as exc:
            raise ConfigError(f"{key}: {exc}") from None
        out.append((name, cfg))
    return out


def rerate_run(run_dir: Path, configs: Sequence[tuple[str, RatingConfig]]) -> dict[str, list[dict[str, Any]]]:
    """Each named rating's table for the run in ``run_dir`` (its log read once)."""
    if not configs:
        return {}
    players, stream, _ = load_stream(run_dir)
    return {name: rate_stream(rating, players, stream) for name, rating in configs}

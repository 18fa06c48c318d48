"""A finished run's games rated again, from its event log, with no model call: the stream the
live rating saw (each rated task and each forfeit, in order) fed to a fresh backend; and the
config's ``rerate`` list (the same games rated other ways as a game ends). Every rating here is
typed: an instance of a rating backend's schema (``TrueSkillConfig``, ``EloConfig``, ...).

``skate rate`` (:mod:`skate.cli.rate`) is the command-line tool over this, through
:func:`skate.settings.recorded.rate_run` (the run's own settings, read through the one door).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skate.errors import ConfigError
from skate.ratings.base import rating as ratings
from skate.ratings.config import OutcomeRule, RatingConfig
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
def rerate_run(run_dir: Path, configs: Sequence[tuple[str, RatingConfig]]) -> dict[str, list[dict[str, Any]]]:
    """Each named rating's table for the run in ``run_dir`` (its log read once)."""
    if not configs:
        return {}
    players, stream, _ = load_stream(run_dir)
    return {name: rate_stream(rating, players, stream) for name, rating in configs}

"""The settings of ``skate leaderboard add`` and ``refresh`` (light: the command line reads their
defaults). Why each default is what it is: :mod:`skate.leaderboard.place`, :mod:`skate.leaderboard.renew`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeVar


@dataclass(frozen=True)
class AddSettings:
    game: str | None = None  # the game to place it in (None: the bank's only game)
    budget: int = 4000  # calls at most: answer samples plus setter attempts
    confidence: float = 0.95  # stop once its order against both neighbours is this sure
    # Answer samples per banked task; 0: as many as the game's own estimator draws (recorded with
    # the bank's runs), so that the newcomer is measured on each task as the incumbents were.
    samples: int = 0
    min_tasks: int = 20  # banked tasks before it may stop
    pick_among: int = 5  # the next task is drawn among this many nearest its estimate
    # Tasks farther than this (logits) from its estimate are not asked: one it is nearly sure to
    # answer (or to miss) tells almost nothing (information p(1-p) < 0.05), and under a model that
    # fits only roughly it would pull the estimate the way the easy (or hard) tasks lean.
    window: float = 3.0
    max_placed: int = 4  # a banked task is shown to at most this many models being added
    set_rounds: int = 2  # rounds in which it sets tasks of its own (0: none)
    neighbours: int = 2  # incumbents nearest it that answer its tasks
    set_samples: int = 8  # answer samples per player on each of its tasks (estimator=fixed_n)
    seed: int = 0
    runs_dir: Path = Path("leaderboard-runs")  # where its setting games are played


@dataclass(frozen=True)
class RefreshSettings:
    game: str | None = None  # the game's bank (None: the bank's only game)
    max_age_days: float = 180.0  # tasks older than this retire
    max_exposure: int = 50  # tasks answered by this many models retire
    min_per_band: int = 20  # a one-logit band of ability with fewer askable tasks is thin
    players: int = 6  # incumbents nearest a thin band that play its game
    rounds: int = 2  # rounds of that game
    max_placed: int = AddSettings.max_placed  # add's cap: tasks shown to this many adds cannot be asked
    seed: int = 0
    runs_dir: Path = Path("leaderboard-runs")


S = TypeVar("S", AddSettings, RefreshSettings)


def settings_of(cls: type[S], values: Mapping[str, Any]) -> S:
    """``cls`` with each of its fields that ``values`` names (a command's options by their names,
    ``--max-age-days`` as ``max_age_days``; other names are not its), the rest at their defaults."""
    return cls(**{f.name: values[f.name] for f in fields(cls) if f.name in values})

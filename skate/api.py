"""skate from Python: play a game, read a finished run, rate it again (``skate.play``,
``skate.load_run``, ``skate.rate``; docs/python.md).

Settings are :class:`~skate.settings.config.SkateConfig`, the same typed settings the command
line makes from its YAML options and overrides. ``SkateConfig()`` is the game ``skate`` plays with
no overrides; each section is its group's schema and can be built and edited as a dataclass::

    import skate
    from skate.games.mathquiz.config import MathQuizConfig
    from skate.ratings.elo import EloConfig

    settings = skate.SkateConfig(game=MathQuizConfig(rounds=4), seed=3)
    played = skate.play(settings, "runs/mathquiz-3")
    played.ratings[0]["player"]                     # the leader
    run = skate.load_run("runs/mathquiz-3")         # any run folder, from any skate command
    skate.rate(run, EloConfig())                    # its games rated again, another way

Bad settings raise :class:`~skate.errors.ConfigError` with the command line's one line, naming
the setting and what to write instead.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skate.errors import ConfigError
from skate.loop import GameResult
from skate.ratings.base import rating_class
from skate.ratings.config import RatingConfig
from skate.ratings.rerate import load_stream, rate_stream
from skate.runlog import events as ev
from skate.runner import run_game
from skate.settings.config import SkateConfig
from skate.settings.options import settle
from skate.settings.recorded import run_settings, settle_rating

__all__ = ["Played", "Run", "load_run", "play", "rate"]


@dataclass(frozen=True)
class Played:
    """A game played by :func:`play`: its folder, its ratings (best first, as ``ratings.json``),
    its summary (counts, separating tasks, model usage) and the engine's whole result."""

    run_dir: Path
    ratings: list[dict[str, Any]]
    summary: dict[str, Any]
    result: GameResult


def default_run_dir() -> Path:
    """Where a game goes when no folder is given: ``outputs/<date>/<time>`` under the working
    folder, as the command line puts it."""
    return Path("outputs", time.strftime("%Y-%m-%d"), time.strftime("%H-%M-%S"))


def play(settings: SkateConfig | None = None, out_dir: str | Path | None = None, *, resume: bool = False) -> Played:
    """Play a game and return it (:class:`Played`). ``settings``: the game's (default
    ``SkateConfig()``, the game ``skate`` plays with no overrides), settled and checked as the
    command line's are; ``out_dir``: the run folder (default :func:`default_run_dir`; a folder that
    already holds a run is refused, unless ``resume``, which continues the stopped run there with
    its own settings when ``settings`` is None)."""
    if settings is not None and not isinstance(settings, SkateConfig):
        raise TypeError(
            f"play takes a SkateConfig, not a {type(settings).__name__}: build one with "
            "skate.SkateConfig(...) (its sections are the schemas the config groups' options extend)"
        )
    out = Path(out_dir) if out_dir is not None else default_run_dir()
    if resume and settings is None:
        typed = run_settings(out)
    else:
        typed = settle(settings if settings is not None else SkateConfig())
    result = run_game(typed, out, resume=resume)
    return Played(out, result.table, result.summary.as_dict(), result)


@dataclass(frozen=True)
class Run:
    """A run folder read back (:func:`load_run`): its settings as recorded, typed by their schemas
    (unchecked: today's checks may refuse an old run's, which still reads), and its event log."""

    run_dir: Path
    settings: SkateConfig
    log: ev.RunLog

    @property
    def finished(self) -> bool:
        return self.log.finished

    @property
    def players(self) -> list[str]:
        return self.log.players

    @property
    def ratings(self) -> list[dict[str, Any]]:
        """The run's table, best first: ``run_end``'s, else the last finished round's."""
        return self.log.final_ratings()

    @property
    def summary(self) -> dict[str, Any]:
        end = self.log.end
        return dict(end.summary) if end is not None else {}

    @property
    def tasks(self) -> list[ev.TaskSet]:
        """Every valid task, in the order it was set (``.prompt``, ``.answer``, ``.setter``, ...)."""
        return self.log.of(ev.TaskSet)

    @property
    def estimates(self) -> list[ev.Estimated]:
        """Every player's p(correct) on every task (``.task_id``, ``.player``, ``.p``, ``.n``)."""
        return self.log.of(ev.Estimated)


def load_run(path: str | Path) -> Run:
    """The run in ``path`` (a folder written by ``skate``, :func:`play` or a sweep's job), its
    settings read by their schemas alone (older layouts migrated). A folder that holds no run
    raises :class:`ConfigError` saying what to give."""
    run_dir = Path(path)
    try:
        log = ev.read_run(run_dir, "a run (the folder its events.jsonl is in)", keep_updates=0)
    except ev.RunLogError as exc:
        raise ConfigError(str(exc)) from None
    return Run(run_dir, run_settings(log.start, check=False), log)


def rate(run: Run | str | Path, rating: RatingConfig | None = None) -> list[dict[str, Any]]:
    """A finished run's games rated again with no model call, best first: with the run's own
    rating settings (None), or with ``rating`` (any rating schema, e.g. ``EloConfig()``,
    ``dataclasses.replace(run.settings.rating, outcome="absolute")``), fed the stream its live
    rating saw (as ``skate rate``)."""
    loaded = run if isinstance(run, Run) else load_run(run)
    if rating is None:
        rating = run_settings(loaded.run_dir, check="rating").rating
    else:
        if not isinstance(rating, RatingConfig):
            raise TypeError(f"rate takes a rating schema (e.g. EloConfig()), not a {type(rating).__name__}")
        rating = settle_rating(dataclasses.replace(rating), loaded.settings.estimator)
    rating_class(rating)  # a schema no backend is registered for is refused here, in one line
    players, stream, _ = load_stream(loaded.run_dir)
    return rate_stream(rating, players, stream)

"""Renewing the bank (``skate leaderboard refresh``): retire tasks that are old or over-exposed,
and play a short game among a few incumbents where the bank runs low.

**Retirement.** A retired task is no longer asked of a model being added; its responses stay and
still count in every fit (they measured the models that answered it). A task retires when

* it is older than ``max_age_days`` (180 by default). Text that has been public for about six
  months may have reached a model's training data. This is the same horizon as SCP's rule for
  fresh documents (``game.max_doc_age_days``) and the rhythm at which ArxivRoll renews its
  benchmark;
* or ``max_exposure`` models have answered it (50 by default). Every model that answers a task
  sends its text to one more provider's logs. At 50 models, a task has been shown to most providers
  of note and is public in all but name. The default also sits well above a large game's cohort
  (20), so a freshly imported game's tasks stay in the bank for the models added after it.

**Where the bank runs low.** The incumbents' range of ability is cut into bands one logit wide.
A band is thin when fewer than ``min_per_band`` of its tasks can still be asked (unretired, and
shown to fewer than ``max_placed`` models being added). Each thin band gets a short game among the
``players`` incumbents whose abilities are nearest its middle. Setters pitch tasks near their own
level, so their tasks land near the band. The game is played with the settings of the game's last
imported run, then banked and fitted.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from skate.leaderboard.bank import import_run
from skate.leaderboard.database import tasks
from skate.leaderboard.fit import refit
from skate.leaderboard.place import game_of, game_settings
from skate.leaderboard.settings import RefreshSettings
from skate.leaderboard.store import Store, StoreError
from skate.runlog.files import held_run
from skate.runner import run_game

DAY = 86_400.0


@dataclass
class Refreshed:
    game: str
    retired: int
    thin: list[tuple[float, float, int]] = field(default_factory=list)  # (band low, band high, askable tasks)
    played: list[str] = field(default_factory=list)  # run folders played
    added: int = 0  # tasks banked


def retire(store: Store, game: str, max_age_days: float, max_exposure: int, now: float | None = None) -> int:
    """Retire the game's tasks that are too old or answered by too many models; how many."""
    if max_age_days <= 0 or max_exposure < 1:
        raise StoreError(
            f"max_age_days={max_age_days} and max_exposure={max_exposure}: give a positive age "
            "and an exposure of at least 1"
        )
    cutoff = (time.time() if now is None else now) - max_age_days * DAY
    with store.transaction() as conn:
        done = conn.execute(
            sa.update(tasks)
            .where(
                tasks.c.game == game,
                tasks.c.retired == sa.false(),
                sa.or_(tasks.c.created < cutoff, tasks.c.exposure >= max_exposure),
            )
            .values(retired=True)
        )
        return int(done.rowcount)


def thin_bands(store: Store, game: str, min_per_band: int, max_placed: int) -> list[tuple[float, float, int]]:
    """The one-logit bands over the incumbents' abilities with fewer than ``min_per_band`` tasks
    that can still be asked: (low, high, askable tasks)."""
    _, rows = store.board(game)
    scores = [r["score"] for r in rows if r["score"] is not None]
    if not scores:
        raise StoreError(f"the board of {game} has no fit yet: run skate leaderboard refit")
    askable = [
        t.difficulty for t in store.tasks(game, retired=False) if t.difficulty is not None and t.placed < max_placed
    ]
    lo, hi = math.floor(min(scores)), math.ceil(max(scores))
    out = []
    for left in range(lo, max(hi, lo + 1)):
        n = sum(1 for b in askable if left <= b < left + 1)
        if n < min_per_band:
            out.append((float(left), float(left + 1), n))
    return out


def refresh(store: Store, settings: RefreshSettings | None = None, edits: Mapping[str, Any] | None = None) -> Refreshed:
    """Retire, then play a short game for each thin band, bank it and refit (module docstring)."""
    settings = settings or RefreshSettings()
    game = game_of(store, settings.game)
    if settings.players < 2 or settings.rounds < 1:
        raise StoreError(
            f"players={settings.players}, rounds={settings.rounds}: a refresh game needs at least 2 players and 1 round"
        )
    out = Refreshed(game, retire(store, game, settings.max_age_days, settings.max_exposure))
    out.thin = thin_bands(store, game, settings.min_per_band, settings.max_placed)
    if not out.thin:
        if store.refit_due():  # a refresh cut short after banking its games, before its refit
            refit(store, why="refresh")
        return out
    _, rows = store.board(game)
    specs = {m["name"]: (m["kind"], m["spec"]) for m in store.models()}
    rated = [r for r in rows if r["score"] is not None and r["model"] in specs]
    stamp = store.counts()["runs"]  # a refresh run again before anything else is banked finds its folders
    for k, (left, right, _) in enumerate(out.thin):
        middle = (left + right) / 2
        near = sorted(rated, key=lambda r: (abs(r["score"] - middle), r["model"]))[: settings.players]
        if len(near) < 2:
            raise StoreError(f"the board of {game} has fewer than 2 models to play a refresh game")
        s = game_settings(
            store,
            game,
            [specs[r["model"]] for r in near],
            {"seed": settings.seed + k, "game.rounds": settings.rounds, **(edits or {})},
        )
        folder = Path(settings.runs_dir) / f"refresh-{game}-{stamp}-{k}"
        held = held_run(folder)
        if held is None or not held.finished:
            run_game(s, folder, resume=held is not None)
        out.added += import_run(store, folder, refit_due=True).tasks  # owed until the refit below
        out.played.append(str(folder))
    refit(store, why="refresh")
    return out


def describe(got: Refreshed) -> list[str]:
    """What a refresh did, one line each."""
    lines = [f"{got.game}: {got.retired} task{'s' if got.retired != 1 else ''} retired"]
    if not got.thin:
        lines.append(f"{got.game}: every band of ability has enough tasks to ask; no game played")
    for (lo, hi, n), folder in zip(got.thin, got.played + [""] * len(got.thin), strict=False):
        lines.append(
            f"{got.game}: band [{lo:g}, {hi:g}) had {n} askable tasks" + (f"; played {folder}" if folder else "")
        )
    if got.played:
        lines.append(f"{got.game}: {got.added} new tasks banked; board refitted")
    return lines

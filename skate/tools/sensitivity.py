"""How much a measured p(correct) hangs on which wrong options are shown, and in which order
(SKATE Fig. 6, the reason for sampling option sets in Algorithm 1).

``skate sensitivity RUN_DIR`` (the command line is :mod:`skate.cli.sensitivity`) takes tasks of a finished multiple-choice game (COP,
SCP) and, for each player, asks each task again:

- **option sets**: ``--sets`` different draws of the shown options (the answer and
  ``n_options - 1`` of the setter's wrong options, shuffled), each asked ``--samples`` times;
- **orderings**: one draw of options in ``--orders`` different orders, each asked ``--samples``
  times.

The fraction correct of each variant goes to ``RUN_DIR/sensitivity.csv``; the game's report
(rebuilt here) draws it as ``mcqa_sensitivity.png``. Players are rebuilt from the run's own
config: simulated players answer as in the game, language-model players through the run's
client (its cache and budget; every variant × sample is a model call, counted before starting).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from skate.answers.choice import ChoiceQuery
from skate.games.base import VOID, Game, ask
from skate.loggers.wandb_logger import WandbLoggerConfig, log_figures
from skate.runlog import events as ev
from skate.runlog.records import Task
from skate.settings.build import build_table, llm_players, open_client, prepare_models, simulated_players
from skate.settings.recorded import run_settings

SENSITIVITY_FILE = "sensitivity.csv"
COLUMNS = ["player", "task_id", "probe", "variant", "correct", "samples", "unreadable", "void", "fraction"]


class SensitivityError(ValueError):
    """The run cannot be probed; the message says why."""


@dataclass(frozen=True)
class Variant:
    probe: str  # "option set" or "ordering"
    index: int
    query: ChoiceQuery


def variants(game: Game, task: Task, sets: int, orders: int, rng: np.random.Generator) -> list[Variant]:
    """``sets`` fresh draws of the options and ``orders`` orders of one draw."""
    first = game.make_query(task, rng)
    if not isinstance(first, ChoiceQuery):
        raise SensitivityError(
            f"game {game.name}: its questions are not multiple choice, so there are no option sets or orders to vary"
        )
    out = [Variant("option set", i, first if i == 0 else game.make_query(task, rng)) for i in range(sets)]
    base = first.options
    out += [
        Variant(
            "ordering",
            i,
            ChoiceQuery(first.prompt, base if i == 0 else tuple(base[k] for k in rng.permutation(len(base)))),
        )
        for i in range(orders)
    ]
    return out


def probe(
    game: Game, task: Task, player: Any, sets: int, orders: int, samples: int, rng: np.random.Generator
) -> list[dict[str, Any]]:
    """One player's rows on one task: each variant asked ``samples`` times (one batch)."""
    vs = variants(game, task, sets, orders, rng)
    queries = [v.query for v in vs for _ in range(samples)]
    replies = ask(player.answer, queries, rng)
    rows = []
    for k, v in enumerate(vs):
        got = replies[k * samples : (k + 1) * samples]
        void = sum(r is VOID for r in got)
        unreadable = sum(r is None for r in got)
        correct = sum(1 for r in got if r is not VOID and r is not None and game.grade(task, v.query, r))
        graded = samples - void
        rows.append(
            {
                "player": player.name,
                "task_id": task.task_id,
                "probe": v.probe,
                "variant": v.index,
                "correct": correct,
                "samples": samples,
                "unreadable": unreadable,
                "void": void,
                "fraction": correct / graded if graded else float("nan"),
            }
        )
    return rows


def choose_tasks(tasks: list[Task], k: int, rng: np.random.Generator, ids: list[str] | None = None) -> list[Task]:
    if ids:
        by_id = {t.task_id: t for t in tasks}
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise SensitivityError(
                f"no task {', '.join(missing)} in the run (its task ids look like "
                f"{tasks[0].task_id if tasks else 'r001-name'})"
            )
        return [by_id[i] for i in ids]
    if k >= len(tasks):
        return list(tasks)
    return [tasks[i] for i in sorted(rng.choice(len(tasks), size=k, replace=False))]


def run_probe(
    run_dir: Path,
    players: list[str] | None = None,
    n_tasks: int = 10,
    sets: int = 10,
    orders: int = 10,
    samples: int = 10,
    seed: int = 0,
    task_ids: list[str] | None = None,
    edits: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """Probe a finished run (its settings with ``edits``, ``{"llm.budget_usd": 2}``: as
    :func:`skate.settings.recorded.run_settings` takes them); write ``sensitivity.csv`` in it and
    return the table."""
    run_dir = Path(run_dir)
    try:
        log = ev.read_run(run_dir, "a finished game", keep_updates=0)
    except ev.RunLogError as exc:
        raise SensitivityError(str(exc)) from None
    settings = run_settings(log.start, edits)
    tasks = [t.task() for t in log.of(ev.TaskSet)]
    if not tasks:
        raise SensitivityError(f"{run_dir} has no valid task to probe")
    for n, what in ((n_tasks, "--tasks"), (sets, "--sets"), (orders, "--orders"), (samples, "--samples")):
        if n < 1:
            raise SensitivityError(f"{what}={n}: give at least 1")
    rng = np.random.default_rng(seed)
    chosen = choose_tasks(tasks, n_tasks, rng, task_ids)
    with contextlib.ExitStack() as cleanup:  # the run's players, as the game built them (no model check)
        table = build_table(settings, cleanup)
        client = open_client(settings, table, cleanup)
        cast = [
            *simulated_players(settings, table),
            *llm_players(settings.players.llm, table, client, None, settings.players.setter_repair),
        ]
        prepare_models(settings, table, client)
        game = table.game
        names = [p.name for p in cast]
        unknown = [p for p in players or [] if p not in names]
        if unknown:
            raise SensitivityError(f"no player {', '.join(unknown)} in the run: choose from {', '.join(names)}")
        cast = [p for p in cast if not players or p.name in players]
        rows: list[dict[str, Any]] = []
        for player in cast:
            for task in chosen:
                rows += probe(
                    game,
                    task,
                    player,
                    sets,
                    orders,
                    samples,
                    np.random.default_rng([seed, names.index(player.name), tasks.index(task)]),
                )
    out = pd.DataFrame(rows, columns=COLUMNS)
    out.to_csv(run_dir / SENSITIVITY_FILE, index=False)
    return out


def spread(table: pd.DataFrame) -> pd.DataFrame:
    """Per player and probe: the mean over tasks of the range (max − min) and of the standard
    deviation of the fraction correct across variants."""
    g = table.dropna(subset=["fraction"]).groupby(["player", "probe", "task_id"])["fraction"]
    per_task = pd.DataFrame({"range": g.max() - g.min(), "std": g.std(ddof=0)}).reset_index()
    return per_task.groupby(["player", "probe"], sort=False)[["range", "std"]].mean().reset_index()


def log_probe(run_dir: Path, mode: str = "run") -> bool:
    """Log the probe's figure and table to a W&B run of their own beside the game's: with the run's
    W&B settings (``mode="run"``), or in ``mode`` ("offline", "online") even when the game logged
    elsewhere; False when the run's logger is not W&B and no mode was asked for."""
    logger = run_settings(run_dir, check=False).logger
    if mode != "run":
        logger = (
            dataclasses.replace(logger, mode=mode)
            if isinstance(logger, WandbLoggerConfig)
            else WandbLoggerConfig(mode=mode)
        )
    return log_figures(
        run_dir,
        logger,
        prefix="sensitivity",
        name=f"sensitivity {run_dir.name}",
        job_type="sensitivity",
        group=run_dir.name,
        figures=[run_dir / "report" / "mcqa_sensitivity.png"],
        tables={"table": run_dir / SENSITIVITY_FILE},
    )

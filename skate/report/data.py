"""A run's event log as tables: the source of every plot and export in the report.

Tasks may carry ``groups`` in their ``task`` event (a game's own data, e.g. SCP's
``{"type": "cloze", "domain": "typing"}``): :class:`RunData` then holds them as the ``groups``
table (task × group key) and :func:`group_accuracy` / :func:`accuracy_by_group` give each
player's mean p(correct) per group. Nothing here knows any game.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from omegaconf.errors import OmegaConfBaseException

from skate.errors import ConfigError
from skate.runlog.events import (
    AttemptMade,
    Estimated,
    RoundEnded,
    RunLogError,
    StageEnded,
    TaskRated,
    TaskSet,
    read_run,
)
from skate.runlog.records import PASS_MARK
from skate.settings.config import SkateConfig
from skate.settings.recorded import run_settings

# The rating updates the report holds: an evenly spaced sample of at most this many (plus each
# player's last), whatever the log's length. A 50-player, 50-round game logs 3 million; the
# rating plot needs a few hundred points per player.
KEEP_UPDATES = 20_000


class ReportError(RunLogError):
    """The folder cannot be reported on; the message says why."""


@dataclass
class RunData:
    run_dir: Path
    start: dict[str, Any]
    players: list[str]
    true_skill: dict[str, float | None]
    tasks: pd.DataFrame  # task_id, round, setter, answer, prompt, order
    p: pd.DataFrame  # task × player p(correct) (NaN = void / not answered)
    n: pd.DataFrame  # task × player samples
    # update, task_id, player, mu, sigma (TrueSkill) or elo (Elo): each player's numbers after each
    # task that moved them (a log per task), or after each single update (a log per pair), every
    # update_stride-th (all of them in a short game; see KEEP_UPDATES), and the last
    updates: pd.DataFrame
    ratings: list[dict[str, Any]]
    summary: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, Any] | None = None
    finished: bool = True
    stages: list[dict[str, Any]] = field(default_factory=list)  # stage_end events of a staged game
    update_count: int = 0  # rating updates in the log (``updates`` may hold a sample of them)
    update_stride: int = 1
    per_task: bool = False  # the log keeps the ratings once per task (``rated``), not per update
    pass_mark: float = PASS_MARK  # the run's p_thresh (rating.p_thresh): p(correct) that counts as solving
    # task × group key (index task_id, one column per key, values as text), only the tasks whose
    # event carries a ``groups`` dict; no rows and no columns when none does
    groups: pd.DataFrame = field(default_factory=pd.DataFrame)
    # every attempt at setting a task: round, player, attempt, valid, reason, novelty_distance
    # (the distance to the setter's nearest earlier task, for proposals tested for uniqueness)
    attempts: pd.DataFrame = field(default_factory=pd.DataFrame)
    novelty_threshold: float | None = None  # the run's embedder.threshold
    rerated: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # run_end's other ratings
    # How sure the ranking was after each round (backends that say): round, above, below, confidence
    order: pd.DataFrame = field(default_factory=pd.DataFrame)
    ended: str = ""  # run_end's ended (rounds, settled, stopped) and its detail; "" for older logs
    ended_detail: str = ""
    settled_at: float | None = None  # the run's stop.settled

    @property
    def group_keys(self) -> list[str]:
        return list(self.groups.columns)

    @property
    def set_by_players(self) -> bool:
        """Whether any task was set by a player (not so in a built benchmark, whose tasks'
        setter is ``skate.runlog.records.BENCHMARK``): plots about setters need it."""
        return bool(self.tasks["setter"].isin(self.players).any())


def load_run(run_dir: str | Path) -> RunData:
    run_dir = Path(run_dir)
    try:
        run = read_run(run_dir, "a run (or a sweep)", keep_updates=KEEP_UPDATES)
    except RunLogError as exc:
        raise ReportError(str(exc)) from None
    players = run.players
    task_rows = [
        {"task_id": t.task_id, "round": t.round, "setter": t.setter, "answer": t.answer, "prompt": t.prompt, "order": i}
        for i, t in enumerate(run.of(TaskSet))
    ]
    tasks = pd.DataFrame(task_rows, columns=["task_id", "round", "setter", "answer", "prompt", "order"])
    est = pd.DataFrame(
        [
            {"task_id": e.task_id, "player": e.player, "p": e.p, "n": e.n, "correct": e.correct, "void": e.void}
            for e in run.of(Estimated)
        ],
        columns=["task_id", "player", "p", "n", "correct", "void"],
    )
    if len(est):
        p = est.pivot_table(index="task_id", columns="player", values="p", aggfunc="first", dropna=False)
        n = est.pivot_table(index="task_id", columns="player", values="n", aggfunc="first", dropna=False)
    else:
        p = n = pd.DataFrame()
    task_order = [t for t in tasks["task_id"] if t in p.index]
    p = p.reindex(index=task_order, columns=players).astype(float)
    n = n.reindex(index=task_order, columns=players)
    rated = run.of(TaskRated)
    updates = pd.DataFrame(run.rating_trace())  # the numbers read_run held: about KEEP_UPDATES
    stride = run.rated_stride
    end = run.end
    summary = end.summary if end else {}
    stages = [{"stage": e.stage, "round": e.round, "ratings": e.ratings} for e in run.of(StageEnded)]
    settings = run_settings_or_none(run.start)
    attempts = pd.DataFrame(
        [
            {
                "round": a.round,
                "player": a.player,
                "attempt": a.attempt,
                "valid": a.valid,
                "reason": a.reason,
                "novelty_distance": a.get("novelty_distance"),
            }
            for a in run.of(AttemptMade)
        ],
        columns=["round", "player", "attempt", "valid", "reason", "novelty_distance"],
    )
    threshold = (
        getattr(settings.embedder, "threshold", None) if settings is not None else None
    )  # every shipped embedder's
    rerated = end.get("rerated") if end is not None else None
    order = pd.DataFrame(
        [{"round": e.round, **pair} for e in run.of(RoundEnded) for pair in (e.get("order") or [])],
        columns=["round", "above", "below", "confidence"],
    )
    return RunData(
        run_dir,
        run.start.record(),
        players,
        run.true_skill,
        tasks,
        p,
        n,
        updates,
        run.final_ratings(),
        summary,
        summary.get("usage"),
        finished=end is not None,
        stages=stages,
        update_count=run.update_count,
        update_stride=stride if rated else run.update_stride,
        per_task=bool(rated),
        pass_mark=float(getattr(settings.rating, "p_thresh", PASS_MARK)) if settings is not None else PASS_MARK,
        groups=_groups(run.of(TaskSet)),
        attempts=attempts,
        novelty_threshold=float(threshold) if threshold is not None else None,
        rerated=rerated if isinstance(rerated, dict) else {},
        order=order,
        ended=str(end.get("ended", "") or "") if end else "",
        ended_detail=str(end.get("ended_detail", "") or "") if end else "",
        settled_at=settings.stop.settled if settings is not None else None,
    )


def run_settings_or_none(start: Any) -> SkateConfig | None:
    """The run's settings as :mod:`skate.settings.recorded` reads them (typed, defaults filled), or None
    when it recorded none, or none this skate can read (the report then leaves out what they
    would add: the pass mark's default stands, no threshold or stopping line is drawn).

    Read-only: one report asks for a run's settings in several places (the pass mark, the
    clusters' embedder, a sweep's outcome rule), so the settings of one recorded config are read
    once and shared (keyed on the record's content, not the object holding it)."""
    config = start.get("config") if hasattr(start, "get") else None
    if not config:
        return None
    made = {"config": config, "config_version": start.get("config_version"), "choices": start.get("choices")}
    return _settings_of(json.dumps(made, sort_keys=True, default=str))


@functools.lru_cache(maxsize=64)
def _settings_of(start_json: str) -> SkateConfig | None:
    try:  # unchecked: the report of a run whose settings today's checks refuse still renders
        return run_settings(json.loads(start_json), check=False)
    except (ConfigError, ValueError, OmegaConfBaseException):
        return None


def _groups(tasks: list[TaskSet]) -> pd.DataFrame:
    """The ``groups`` table from the task events (keys in order of first appearance)."""
    rows: dict[str, dict[str, str]] = {}
    keys: list[str] = []
    for t in tasks:
        g = t.get("groups")
        if not isinstance(g, dict) or t.task_id in rows:
            continue
        rows[t.task_id] = {str(k): str(v) for k, v in g.items() if v is not None}
        keys += [k for k in rows[t.task_id] if k not in keys]
    if not rows:
        return pd.DataFrame()
    table = pd.DataFrame.from_dict(rows, orient="index", columns=keys)
    table.index.name = "task_id"
    return table


def group_accuracy(d: RunData, keys: Sequence[str]) -> pd.DataFrame:
    """Each player's mean p(correct) over the tasks of each combination of values of ``keys``
    (void estimates left out). Columns: ``player``, one per key, ``tasks`` (the player's
    non-void estimates in the group), ``accuracy`` (NaN when ``tasks`` is 0) and ``se``, its
    standard error over the group's tasks (sd / sqrt(tasks); with one answer per task,
    estimator=greedy, the binomial sqrt(acc (1 - acc) / (tasks - 1)); NaN under two tasks); players in
    roster order, then the groups sorted by value. Tasks lacking one of ``keys`` are left out;
    no rows when no task has them all."""
    keys = list(keys)
    columns = ["player", *keys, "tasks", "accuracy", "se"]
    if d.p.empty or not keys or any(k not in d.groups.columns for k in keys):
        return pd.DataFrame(columns=columns)
    g = d.groups.loc[d.groups.index.intersection(d.p.index), keys].dropna()
    if g.empty:
        return pd.DataFrame(columns=columns)
    rows = []
    for player in d.players:
        p = d.p.loc[g.index, player]
        for values, block in g.groupby(keys, sort=True):
            values = values if isinstance(values, tuple) else (values,)
            got = p.loc[block.index].dropna()
            rows.append(
                {
                    "player": player,
                    **dict(zip(keys, values, strict=True)),
                    "tasks": len(got),
                    "accuracy": float(got.mean()) if len(got) else float("nan"),
                    "se": float(got.std(ddof=1) / np.sqrt(len(got))) if len(got) > 1 else float("nan"),
                }
            )
    return pd.DataFrame(rows, columns=columns)


def accuracy_by_group(d: RunData) -> pd.DataFrame:
    """Long table of :func:`group_accuracy` for each group key alone and, with two or more keys,
    for all of them combined: ``player, key, value`` (e.g. ``type``, ``cloze``; combined
    ``type×domain``, ``cloze×typing``), then one column per key holding that row's value of it
    (empty when the row does not group by it; left out for a key named like a fixed column),
    then ``tasks, accuracy, se``. No rows when no task carries groups."""
    keys = d.group_keys
    fixed = ["player", "key", "value", "tasks", "accuracy", "se"]
    own = [k for k in keys if k not in fixed]
    columns = ["player", "key", "value", *own, "tasks", "accuracy", "se"]
    parts = []
    for by in [[k] for k in keys] + ([keys] if len(keys) >= 2 else []):
        part = group_accuracy(d, by)
        if part.empty:
            continue
        part.insert(1, "key", "×".join(by))
        part.insert(2, "value", part[by].astype(str).agg("×".join, axis=1))
        parts.append(part)
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat(parts, ignore_index=True).reindex(columns=columns)

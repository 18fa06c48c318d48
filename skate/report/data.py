"""A run's event log as tables: the source of every plot and export in the report."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from skate.events import Estimated, RatingUpdated, RunLogError, StageEnded, TaskSet, read_run


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
    updates: pd.DataFrame  # update, a, b, result, mu_a, sigma_a, mu_b, sigma_b (TrueSkill) ...
    ratings: list[dict[str, Any]]
    summary: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, Any] | None = None
    finished: bool = True
    stages: list[dict[str, Any]] = field(default_factory=list)  # stage_end events of a staged game
    pass_mark: float = 0.55  # the run's p_thresh (rating.p_thresh): p(correct) that counts as solving


def load_run(run_dir: str | Path) -> RunData:
    run_dir = Path(run_dir)
    try:
        run = read_run(run_dir, "a run (or a sweep)")
    except RunLogError as exc:
        raise ReportError(str(exc)) from None
    players = run.players
    task_rows = [{"task_id": t.task_id, "round": t.round, "setter": t.setter, "answer": t.answer,
                  "prompt": t.prompt, "order": i} for i, t in enumerate(run.of(TaskSet))]
    tasks = pd.DataFrame(task_rows, columns=["task_id", "round", "setter", "answer", "prompt", "order"])
    est = pd.DataFrame([{"task_id": e.task_id, "player": e.player, "p": e.p, "n": e.n, "correct": e.correct,
                         "void": e.void} for e in run.of(Estimated)],
                       columns=["task_id", "player", "p", "n", "correct", "void"])
    if len(est):
        p = est.pivot_table(index="task_id", columns="player", values="p", aggfunc="first", dropna=False)
        n = est.pivot_table(index="task_id", columns="player", values="n", aggfunc="first", dropna=False)
    else:
        p = n = pd.DataFrame()
    order = [t for t in tasks["task_id"] if t in p.index]
    p = p.reindex(index=order, columns=players).astype(float)
    n = n.reindex(index=order, columns=players)
    updates = pd.DataFrame([u.fields() for u in run.of(RatingUpdated)])
    end = run.end
    summary = end.summary if end else {}
    stages = [{"stage": e.stage, "round": e.round, "ratings": e.ratings} for e in run.of(StageEnded)]
    config = run.start.config
    return RunData(run_dir, run.start.record(), players, run.true_skill, tasks, p, n, updates,
                   run.final_ratings(), summary, summary.get("usage"), finished=end is not None,
                   stages=stages, pass_mark=float(config.get("rating", {}).get("p_thresh", 0.55)))

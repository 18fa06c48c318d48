"""A run's event log as tables: the source of every plot and export in the report."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from skate.store import RunLogError, read_run


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


def load_run(run_dir: str | Path) -> RunData:
    run_dir = Path(run_dir)
    try:
        events, start = read_run(run_dir, "a run (or a sweep)")
    except RunLogError as exc:
        raise ReportError(str(exc)) from None
    players = [p["name"] for p in start.get("players", [])]
    true_skill = {p["name"]: p.get("true_skill") for p in start.get("players", [])}
    task_rows = [{"task_id": e["task_id"], "round": e["round"], "setter": e["setter"], "answer": e["answer"],
                  "prompt": e["prompt"], "order": i}
                 for i, e in enumerate(e for e in events if e.get("event") == "task")]
    tasks = pd.DataFrame(task_rows, columns=["task_id", "round", "setter", "answer", "prompt", "order"])
    est = pd.DataFrame([e for e in events if e.get("event") == "estimate"],
                       columns=["task_id", "player", "p", "n", "correct", "void"])
    if len(est):
        p = est.pivot_table(index="task_id", columns="player", values="p", aggfunc="first", dropna=False)
        n = est.pivot_table(index="task_id", columns="player", values="n", aggfunc="first", dropna=False)
    else:
        p = n = pd.DataFrame()
    order = [t for t in tasks["task_id"] if t in p.index]
    p = p.reindex(index=order, columns=players).astype(float)
    n = n.reindex(index=order, columns=players)
    updates = pd.DataFrame([e for e in events if e.get("event") == "rating"])
    end = next((e for e in reversed(events) if e.get("event") == "run_end"), None)
    ratings = end["ratings"] if end else next(
        (e["ratings"] for e in reversed(events) if e.get("event") == "round_end"), [])
    summary = end.get("summary", {}) if end else {}
    usage = summary.get("usage")
    stages = [e for e in events if e.get("event") == "stage_end"]
    return RunData(run_dir, start, players, true_skill, tasks, p, n, updates, ratings, summary, usage,
                   finished=end is not None, stages=stages)

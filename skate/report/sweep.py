"""The sweep page's figures: one game per job, compared (SKATE Figs. 2 and 9).

Each job is reduced to a :class:`Job`: its label, augmentation strategy, the outcome rule it was
rated with, its final ratings under that rule and under every other rule it was re-rated with
(``run_end``'s ``rerated``), a sample of its rating updates, and each setter's tasks in the order
they were set with the p(correct) they drew (:func:`setter_steps`). Nothing here reads a model.

Fig. 2 (:func:`strategy_grid`) is μ ± σ by strategy and rule; Fig. 9 (:func:`cumulative_p`,
:func:`strategy_difficulty`) the cumulative average p(correct) of each setter's tasks over the
game, one column per strategy; :func:`rating_curves` draws each job's μ ± σ over its updates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from skate.report.data import RunData, run_settings_or_none
from skate.report.plots import figure, save_png
from skate.runlog.records import PASS_MARK

# The paper's order of the augmentation strategies (least to most context); others follow.
AUG_ORDER = ("no_info", "hist_tasks", "hist_perf", "full_personal", "full_context")


@dataclass
class Job:
    label: str  # the job's overrides, or its folder name
    aug: str
    rule: str  # the outcome rule of the job's own ratings
    players: list[str]
    ratings: dict[str, list[dict[str, Any]]]  # rule -> final rows (the job's own and its re-ratings)
    updates: pd.DataFrame = field(default_factory=pd.DataFrame)  # sampled rating updates
    steps: pd.DataFrame = field(default_factory=pd.DataFrame)  # setter_steps(d)
    pass_mark: float = PASS_MARK  # the job's rating.p_thresh


def setter_steps(d: RunData) -> pd.DataFrame:
    """One row per valid task a player set, in the order the tasks were set: ``setter``, ``step``
    (1 for the setter's first task, 2 for its second, ...), ``round``, ``own`` (the setter's own
    p(correct) on it) and ``others`` (the mean p(correct) of the other players; void estimates
    left out). NaN where there is no such estimate."""
    columns = ["setter", "step", "round", "own", "others"]
    tasks = d.tasks[d.tasks["setter"].isin(d.players)].drop_duplicates("task_id")
    if tasks.empty:
        return pd.DataFrame(columns=columns)
    p = d.p.reindex(index=tasks["task_id"], columns=d.players)
    own = [p.at[t, s] for t, s in zip(tasks["task_id"], tasks["setter"], strict=True)]
    others = [
        p.loc[t].drop(s).mean() if len(d.players) > 1 else np.nan
        for t, s in zip(tasks["task_id"], tasks["setter"], strict=True)
    ]
    return pd.DataFrame(
        {
            "setter": tasks["setter"].to_numpy(),
            "step": tasks.groupby("setter").cumcount().to_numpy() + 1,
            "round": tasks["round"].to_numpy(),
            "own": np.asarray(own, dtype=float),
            "others": np.asarray(others, dtype=float),
        },
        columns=columns,
    )


def job_of(d: RunData, label: str) -> Job:
    settings = run_settings_or_none(d.start)
    rule = str(getattr(settings.rating, "outcome", "relative")) if settings is not None else "relative"
    ratings = {rule: d.ratings, **{str(k): v for k, v in d.rerated.items() if isinstance(v, list)}}
    return Job(
        label, str(d.start.get("aug", "")), rule, list(d.players), ratings, d.updates, setter_steps(d), d.pass_mark
    )


def _augs(jobs: list[Job]) -> list[str]:
    seen = list(dict.fromkeys(j.aug for j in jobs))
    return sorted(seen, key=lambda a: (AUG_ORDER.index(a) if a in AUG_ORDER else len(AUG_ORDER), a))


def _save(fig, out: Path, name: str) -> str:
    save_png(fig, out / name)
    return name


def _mu_sigma(rows: list[dict[str, Any]]) -> dict[str, tuple[float, float]]:
    return {
        r["player"]: (float(r["mu"]), float(r["sigma"]))
        for r in rows
        if r.get("mu") is not None and r.get("sigma") is not None
    }


def strategy_grid(jobs: list[Job], out: Path) -> tuple[str, str] | None:
    """SKATE Fig. 2: μ ± σ of every player, one panel per (outcome rule, augmentation strategy).
    Jobs sharing a cell (e.g. seeds) are averaged, μ and σ each. Drawn when the sweep varies
    the strategy or a game was rated under more than one rule."""
    augs = _augs(jobs)
    rules = list(dict.fromkeys(r for j in jobs for r in j.ratings))
    if len(augs) < 2 and len(rules) < 2:
        return None
    cells: dict[tuple[str, str], list[dict[str, tuple[float, float]]]] = {}
    for j in jobs:
        for rule, rows in j.ratings.items():
            got = _mu_sigma(rows)
            if got:
                cells.setdefault((rule, j.aug), []).append(got)
    if not cells:
        return None
    rules = [r for r in rules if any((r, a) in cells for a in augs)]
    players = list(dict.fromkeys(p for j in jobs for p in j.players))
    at = {p: i for i, p in enumerate(players[::-1])}
    fig, axes = figure(
        len(rules),
        len(augs),
        figsize=(2.9 * len(augs) + 1.2, 0.32 * len(players) * len(rules) + 1.6 * len(rules)),
        squeeze=False,
        sharey=True,
        sharex="row",
        layout="constrained",
    )
    for r, rule in enumerate(rules):
        for a, aug in enumerate(augs):
            ax = axes[r][a]
            cell = cells.get((rule, aug), [])
            names = [p for p in players if any(p in g for g in cell)]
            if names:
                mu = [np.mean([g[p][0] for g in cell if p in g]) for p in names]
                sigma = [np.mean([g[p][1] for g in cell if p in g]) for p in names]
                ax.errorbar(mu, [at[p] for p in names], xerr=sigma, fmt="o", capsize=3, ms=4)
            ax.set_yticks(range(len(at)), list(at), fontsize=8)
            ax.set_ylim(-0.5, len(at) - 0.5)
            ax.grid(axis="x", alpha=0.3)
            if r == 0:
                ax.set_title(aug or "(default)", fontsize=10)
            if a == 0:
                ax.set_ylabel(rule, fontsize=10)
            if r == len(rules) - 1:
                ax.set_xlabel("μ ± σ")
    fig.suptitle("Final ratings by augmentation strategy (columns) and outcome rule (rows)")
    return (
        _save(fig, out, "strategy_grid.png"),
        "μ ± σ of every player for each augmentation strategy and outcome rule (SKATE Fig. 2); rows other "
        "than the game's own rule re-rate the same game (config rerate); jobs sharing a cell are averaged.",
    )


def _short(jobs: list[Job]) -> dict[str, str]:
    """Each job's label without the words every job's label has (e.g. the preset)."""
    common = set.intersection(*(set(j.label.split()) for j in jobs)) if len(jobs) > 1 else set()
    return {j.label: " ".join(w for w in j.label.split() if w not in common) or j.label for j in jobs}


def _panels(jobs: list[Job], max_panels: int = 12) -> list[tuple[str, list[Job]]]:
    """Fig. 9's columns: one per augmentation strategy when the sweep varies it (its jobs
    together, e.g. seeds), else one per job (at most ``max_panels``)."""
    if len(_augs(jobs)) >= 2:
        return [(aug or "(default)", [j for j in jobs if j.aug == aug]) for aug in _augs(jobs)]
    short = _short(jobs)
    return [(short[j.label], [j]) for j in jobs[:max_panels]]


SOLVERS = {"own": "the setter itself", "others": "the other players"}


def cumulative_p(jobs: list[Job]) -> pd.DataFrame:
    """SKATE Fig. 9's curves. For each job and setter, the cumulative average p(correct) on the
    setter's tasks after each of them: at step k, the mean over its first k tasks (void estimates
    left out; no point before the first non-void one) of the setter's own p(correct)
    (``solvers="own"``, the paper's figure) or of the other players' mean p(correct) on the task
    (``solvers="others"``). Jobs sharing a panel (:func:`_panels`) are averaged step by step over
    those that reach the step. Columns: ``panel, setter, solvers, step, cumulative_p, jobs``."""
    columns = ["panel", "setter", "solvers", "step", "cumulative_p", "jobs"]
    parts = []
    for title, group in _panels(jobs):
        for j in group:
            for setter, block in j.steps.groupby("setter", sort=False):
                for solvers in SOLVERS:
                    curve = pd.DataFrame(
                        {
                            "panel": title,
                            "setter": setter,
                            "solvers": solvers,
                            "step": block["step"].to_numpy(),
                            "cumulative_p": block[solvers].expanding().mean().to_numpy(),
                        }
                    )
                    parts.append(curve.dropna(subset=["cumulative_p"]))
    parts = [p for p in parts if not p.empty]
    if not parts:
        return pd.DataFrame(columns=columns)
    got = pd.concat(parts, ignore_index=True)
    keys = ["panel", "setter", "solvers", "step"]
    out = got.groupby(keys, sort=False).agg(cumulative_p=("cumulative_p", "mean"), jobs=("cumulative_p", "size"))
    return out.reset_index().reindex(columns=columns)


def strategy_difficulty(jobs: list[Job], out: Path) -> tuple[str, str] | None:
    """SKATE Fig. 9: how hard each strategy's setters make their tasks over the game (the
    cumulative average p(correct), :func:`cumulative_p`), one column per strategy, the setter's
    own p(correct) above (the paper's figure) and the others' below; ``cumulative_p.csv`` holds
    the curves."""
    curves = cumulative_p(jobs)
    if curves.empty:
        return None
    curves.to_csv(out / "cumulative_p.csv", index=False)
    panels = list(dict.fromkeys(curves["panel"]))
    setters = list(dict.fromkeys(p for j in jobs for p in j.players if p in set(curves["setter"])))
    cmap = matplotlib.colormaps["tab10" if len(setters) <= 10 else "tab20"]
    colour = {p: cmap(i % 20) for i, p in enumerate(setters)}
    fig, axes = figure(
        2,
        len(panels),
        figsize=(3.2 * len(panels) + 1.2, 6.2),
        squeeze=False,
        sharey=True,
        sharex=True,
        layout="constrained",
    )
    marks = {j.pass_mark for j in jobs}
    for c, panel in enumerate(panels):
        for r, solvers in enumerate(SOLVERS):
            ax = axes[r][c]
            part = curves[(curves["panel"] == panel) & (curves["solvers"] == solvers)]
            for setter in setters:
                s = part[part["setter"] == setter]
                if len(s):
                    ax.plot(
                        s["step"], s["cumulative_p"], lw=1.3, color=colour[setter], marker="." if len(s) < 12 else None
                    )
            if r == 0 and len(marks) == 1:
                ax.axhline(next(iter(marks)), ls=":", c="grey", lw=1)
            ax.set_ylim(-0.02, 1.02)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.grid(alpha=0.3)
            if r == 0:
                ax.set_title(panel, fontsize=9)
            else:
                ax.set_xlabel("tasks set (the setter's k-th)", fontsize=8)
            if c == 0:
                ax.set_ylabel(f"cumulative mean p(correct)\nof {SOLVERS[solvers]}", fontsize=8)
    handles = [Line2D([], [], color=colour[p], label=p) for p in setters]
    fig.legend(handles=handles, loc="outside lower center", ncol=min(len(setters), 8), fontsize=8, title="setter")
    fig.suptitle("Cumulative average p(correct) on each setter's tasks, by augmentation strategy")
    averaged = curves["jobs"].max() > 1
    return (
        _save(fig, out, "strategy_difficulty.png"),
        "SKATE Fig. 9: the cumulative average p(correct) on each setter's tasks against the tasks it has set, "
        + ("one column per augmentation strategy" if len(_augs(jobs)) >= 2 else "one column per job")
        + "; top: the setter's own p(correct) (the paper's figure; dotted: the pass mark), bottom: the other "
        "players' mean p(correct) on those tasks. Void estimates are left out"
        + ("; jobs sharing a strategy are averaged step by step." if averaged else ".")
        + " The curves: cumulative_p.csv.",
    )


def rating_curves(jobs: list[Job], out: Path, max_panels: int = 12) -> tuple[str, str] | None:
    """Every job's μ ± σ curves side by side (one panel per job, the same colour for a player
    throughout), so the jobs' games can be compared at a glance."""
    shown = [j for j in jobs if not j.updates.empty and "mu" in j.updates][:max_panels]
    if len(shown) < 2:
        return None
    players = list(dict.fromkeys(p for j in shown for p in j.players))
    cmap = matplotlib.colormaps["tab10" if len(players) <= 10 else "tab20"]
    colour = {p: cmap(i % 20) for i, p in enumerate(players)}
    cols = min(len(shown), 5 if len(shown) != 6 else 3)
    rows = -(-len(shown) // cols)
    fig, axes = figure(
        rows, cols, figsize=(3.4 * cols + 1, 2.8 * rows + 0.8), squeeze=False, sharey=True, layout="constrained"
    )
    short = _short(shown)  # the labels without what every job shares (e.g. the preset)
    for ax, j in zip(axes.flat, shown, strict=False):
        u = j.updates
        for player in j.players:
            s = u[u["player"] == player].sort_values("update", kind="stable")
            if s.empty:
                continue
            ax.plot(s["update"], s["mu"], lw=1, color=colour[player], label=player)
            ax.fill_between(s["update"], s["mu"] - s["sigma"], s["mu"] + s["sigma"], alpha=0.12, color=colour[player])
        ax.set_title(short[j.label], fontsize=8)
        ax.set_xlabel("rating update", fontsize=8)
    for ax in list(axes.flat)[len(shown) :]:
        ax.set_visible(False)
    axes[0][0].set_ylabel("TrueSkill μ ± σ")
    handles = [Line2D([], [], color=colour[p], label=p) for p in players]
    fig.legend(handles=handles, loc="outside lower center", ncol=min(len(players), 8), fontsize=8)
    return (
        _save(fig, out, "rating_curves.png"),
        "TrueSkill μ ± σ over each job's game, one panel per job"
        + (f"; the first {max_panels} jobs" if len(jobs) > max_panels else "")
        + ".",
    )


SWEEP_PLOTS: list[Callable[[list[Job], Path], tuple[str, str] | None]] = [
    strategy_grid,
    strategy_difficulty,
    rating_curves,
]

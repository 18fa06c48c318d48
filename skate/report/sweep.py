"""The sweep page's figures: one game per job, compared (SKATE Figs. 2 and 9).

Each job is reduced to a :class:`Job`: its label, augmentation strategy, the outcome rule it was
rated with, its final ratings under that rule and under every other rule it was re-rated with
(``run_end``'s ``rerated``), and a sample of its rating updates. Nothing here reads a model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from skate.report.data import RunData  # noqa: E402

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


def job_of(d: RunData, label: str) -> Job:
    rating = d.start.get("config", {}).get("rating", {}) if isinstance(d.start.get("config"), dict) else {}
    rule = str(rating.get("outcome", "relative"))
    ratings = {rule: d.ratings, **{str(k): v for k, v in d.rerated.items() if isinstance(v, list)}}
    return Job(label, str(d.start.get("aug", "")), rule, list(d.players), ratings, d.updates)


def _augs(jobs: list[Job]) -> list[str]:
    seen = list(dict.fromkeys(j.aug for j in jobs))
    return sorted(seen, key=lambda a: (AUG_ORDER.index(a) if a in AUG_ORDER else len(AUG_ORDER), a))


def _save(fig, out: Path, name: str) -> str:
    fig.savefig(out / name, dpi=110)
    plt.close(fig)
    return name


def _mu_sigma(rows: list[dict[str, Any]]) -> dict[str, tuple[float, float]]:
    return {r["player"]: (float(r["mu"]), float(r["sigma"])) for r in rows
            if r.get("mu") is not None and r.get("sigma") is not None}


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
    fig, axes = plt.subplots(len(rules), len(augs), figsize=(2.9 * len(augs) + 1.2, 0.32 * len(players) * len(rules) + 1.6 * len(rules)),
                             squeeze=False, sharey=True, sharex="row", layout="constrained")
    for r, rule in enumerate(rules):
        for a, aug in enumerate(augs):
            ax = axes[r][a]
            got = cells.get((rule, aug), [])
            names = [p for p in players if any(p in g for g in got)]
            if names:
                mu = [np.mean([g[p][0] for g in got if p in g]) for p in names]
                sigma = [np.mean([g[p][1] for g in got if p in g]) for p in names]
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
    return (_save(fig, out, "strategy_grid.png"),
            "μ ± σ of every player for each augmentation strategy and outcome rule (SKATE Fig. 2); rows other "
            "than the game's own rule re-rate the same game (config rerate); jobs sharing a cell are averaged.")


def rating_curves(jobs: list[Job], out: Path, max_panels: int = 12) -> tuple[str, str] | None:
    """SKATE Fig. 9: every job's μ ± σ curves side by side (one panel per job, the same colour
    for a player throughout), so the strategies' games can be compared at a glance."""
    shown = [j for j in jobs if not j.updates.empty and "mu_a" in j.updates][:max_panels]
    if len(shown) < 2:
        return None
    players = list(dict.fromkeys(p for j in shown for p in j.players))
    colour = {p: plt.get_cmap("tab10" if len(players) <= 10 else "tab20")(i % 20) for i, p in enumerate(players)}
    cols = min(len(shown), 5 if len(shown) != 6 else 3)
    rows = -(-len(shown) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols + 1, 2.8 * rows + 0.8), squeeze=False, sharey=True,
                             layout="constrained")
    common = set.intersection(*(set(j.label.split()) for j in shown))  # e.g. the preset, in every label
    for ax, j in zip(axes.flat, shown, strict=False):
        u = j.updates
        for player in j.players:
            parts = [u[u[side] == player][["update", f"mu_{side}", f"sigma_{side}"]].set_axis(["update", "mu", "sigma"], axis=1)
                     for side in ("a", "b")]
            s = pd.concat(parts).sort_values("update")
            if s.empty:
                continue
            ax.plot(s["update"], s["mu"], lw=1, color=colour[player], label=player)
            ax.fill_between(s["update"], s["mu"] - s["sigma"], s["mu"] + s["sigma"], alpha=0.12, color=colour[player])
        ax.set_title(" ".join(w for w in j.label.split() if w not in common) or j.label, fontsize=8)
        ax.set_xlabel("rating update", fontsize=8)
    for ax in list(axes.flat)[len(shown):]:
        ax.set_visible(False)
    axes[0][0].set_ylabel("TrueSkill μ ± σ")
    handles = [plt.Line2D([], [], color=colour[p], label=p) for p in players]
    fig.legend(handles=handles, loc="outside lower center", ncol=min(len(players), 8), fontsize=8)
    return (_save(fig, out, "rating_curves.png"),
            "TrueSkill μ ± σ over each job's game, one panel per job (SKATE Fig. 9)"
            + (f"; the first {max_panels} jobs" if len(jobs) > max_panels else "") + ".")


SWEEP_PLOTS: list[Callable[[list[Job], Path], tuple[str, str] | None]] = [strategy_grid, rating_curves]

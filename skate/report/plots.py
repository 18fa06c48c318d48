"""The report's figures, each drawn from a run's tables alone (no model call)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from skate.report.data import RunData, group_accuracy

# Per-player figures with a row and a column per player: names on the axes up to this many
# players, each cell's number written in it up to this many (a 200-player game's 80,000 cell
# labels took minutes to draw and hundreds of MB, and could not be read).
MAX_LABELLED = 60
MAX_ANNOTATED = 20

DPI = 110
# PNGs are compressed with zlib's fastest level: the same pixels, files about 4% larger than at
# Pillow's default level (6), and about 15 ms less CPU per figure.
PNG = {"compress_level": 1}
# The margins (inches: left, right, bottom, top) of a figure whose labels are numbers and fixed
# words (no player name outside the axes): what tight_layout found for them, with room for
# 4-digit tick labels. Laying such a figure out with tight_layout drew its text once more
# (~30 ms a figure); figures with names outside the axes are still laid out by it.
MARGINS = (0.8, 0.2, 0.6, 0.4)


def figure(nrows: int = 1, ncols: int = 1, *, figsize: tuple[float, float], **kw: Any) -> tuple[Figure, Any]:
    """A figure and its axes (as ``plt.subplots``), made without pyplot: nothing is registered
    with pyplot's figure manager, and nothing needs closing (its import is saved too).
    ``layout`` goes to the figure (e.g. ``"constrained"``), the rest to ``Figure.subplots``."""
    fig = Figure(figsize=figsize, layout=kw.pop("layout", None))
    return fig, fig.subplots(nrows, ncols, **kw)


def save_png(fig: Figure, path: Path) -> None:
    fig.savefig(path, dpi=DPI, pil_kwargs=PNG)


def _save(
    fig: Figure,
    out: Path,
    name: str,
    margins: tuple[float, float, float, float] | None = None,
    wspace: float | None = None,
) -> str:
    """Write ``out/name``: laid out with fixed ``margins`` (inches; see MARGINS), or by tight_layout
    when none are given (figures with player names on or beside their axes)."""
    if margins is None:
        fig.tight_layout()
    else:
        w, h = fig.get_size_inches()
        left, right, bottom, top = margins
        fig.subplots_adjust(left=left / w, right=1 - right / w, bottom=bottom / h, top=1 - top / h, wspace=wspace)
    save_png(fig, out / name)
    return name


def rating_evolution(d: RunData, out: Path) -> tuple[str, str] | None:
    """μ ± σ of every player after each task (or rating update) that moved it (TrueSkill runs)."""
    u = d.updates
    if u.empty or "mu" not in u:
        return None
    fig, ax = figure(figsize=(8, 4.5))
    for player in d.players:
        s = u[u["player"] == player].sort_values("update", kind="stable")
        if s.empty:
            continue
        (line,) = ax.plot(s["update"], s["mu"], label=player, lw=1.2)
        ax.fill_between(s["update"], s["mu"] - s["sigma"], s["mu"] + s["sigma"], alpha=0.15, color=line.get_color())
    ax.set(xlabel="rating update", ylabel="TrueSkill μ ± σ", title="Ratings over the game")
    ax.legend(fontsize=8, ncol=2)
    if d.per_task:
        every = "each task" if d.update_stride == 1 else f"one task in {d.update_stride} (and the last)"
        every += f" ({d.update_count:,} pairwise updates in all)"
    else:
        every = (
            "each update"
            if d.update_stride == 1
            else f"one update in {d.update_stride} of {d.update_count:,} (and each player's last)"
        )
    return _save(fig, out, "rating_evolution.png", MARGINS), f"TrueSkill μ ± σ of every player after {every}."


def _score_of(row: dict[str, Any]) -> float | None:
    """A ratings row's score (``mu`` in the records of runs from before scores)."""
    score = row.get("score")
    return row.get("mu") if score is None else score


def final_ratings(d: RunData, out: Path) -> tuple[str, str] | None:
    scored = sorted(((s, r) for r in d.ratings if (s := _score_of(r)) is not None), key=lambda t: t[0])
    if not scored:
        return None
    rows = [r for _, r in scored]
    score = [s for s, _ in scored]
    lo = [r["lo"] if r.get("lo") is not None else s for s, r in scored]
    hi = [r["hi"] if r.get("hi") is not None else s for s, r in scored]
    fig, ax = figure(figsize=(7, 0.5 * len(rows) + 1.5))
    y = np.arange(len(rows))
    ax.errorbar(score, y, xerr=[np.subtract(score, lo), np.subtract(hi, score)], fmt="o", capsize=4)
    ax.set_yticks(y, [f"{r['player']} (#{r.get('rank', '-')})" for r in rows])
    ax.set(xlabel="score with interval", title="Final ratings")
    return _save(fig, out, "final_ratings.png"), "Final score of each player with its interval and rank."


def setter_progress(d: RunData, out: Path) -> tuple[str, str] | None:
    """Cumulative mean p(correct) of each setter on its own tasks, and of the others on them."""
    if d.p.empty or not d.set_by_players:  # a built benchmark: no player set a task
        return None
    fig, axes = figure(1, 2, figsize=(11, 4.2), sharey=True)
    tasks = d.tasks.set_index("task_id").loc[d.p.index]
    for setter in d.players:
        ids = tasks.index[tasks["setter"] == setter]
        if not len(ids):
            continue
        own = d.p.loc[ids, setter]
        others = d.p.loc[ids, [x for x in d.players if x != setter]].mean(axis=1)
        k = np.arange(1, len(ids) + 1)
        axes[0].plot(k, own.expanding().mean(), label=setter)
        axes[1].plot(k, others.expanding().mean(), label=setter)
    axes[0].axhline(d.pass_mark, ls=":", c="grey")
    axes[0].set(title="setter on its own tasks", xlabel="tasks set", ylabel="cumulative mean p(correct)")
    axes[1].set(title="the others on the setter's tasks", xlabel="tasks set")
    axes[1].legend(fontsize=8)
    return (
        _save(fig, out, "setter_progress.png", MARGINS, wspace=0.05),
        "Cumulative mean p(correct) of each setter on its own tasks (left) and of the other players on them (right).",
    )


def self_preference(d: RunData, filtered: bool) -> pd.DataFrame:
    """Rows: setter's tasks; columns: player; value: mean (player's p − mean of the others' p)."""
    tasks = d.tasks.set_index("task_id").loc[d.p.index]
    out = pd.DataFrame(index=d.players, columns=d.players, dtype=float)
    for setter in d.players:
        ids = list(tasks.index[tasks["setter"] == setter])
        if filtered:
            ids = [t for t in ids if d.p.loc[t, setter] >= d.pass_mark]
        if not len(ids):
            continue
        block = d.p.loc[ids, d.players].to_numpy(dtype=float)  # tasks x players, NaN: no estimate
        seen = ~np.isnan(block)
        total, count = np.where(seen, block, 0.0).sum(axis=1, keepdims=True), seen.sum(axis=1, keepdims=True)
        # each player's p minus the mean of the others' p on the same task (all players at once)
        others = count - seen
        with np.errstate(invalid="ignore", divide="ignore"):
            rest = np.where(others > 0, (total - np.where(seen, block, 0.0)) / others, np.nan)
            diff = block - rest
        kept = ~np.isnan(diff)
        with np.errstate(invalid="ignore", divide="ignore"):
            out.loc[setter, :] = np.where(
                kept.any(axis=0), np.where(kept, diff, 0.0).sum(axis=0) / kept.sum(axis=0), np.nan
            )
    return out


def self_preference_plot(d: RunData, out: Path) -> tuple[str, str] | None:
    if d.p.empty or not d.set_by_players:
        return None
    fig, axes = figure(1, 2, figsize=(12, 5), layout="constrained")
    for ax, filtered in zip(axes, (False, True), strict=True):
        m = self_preference(d, filtered)
        im = ax.imshow(m.values.astype(float), cmap="RdBu", vmin=-0.5, vmax=0.5)
        if len(d.players) <= MAX_LABELLED:
            ax.set_xticks(range(len(d.players)), d.players, rotation=45, ha="right", fontsize=8)
            ax.set_yticks(range(len(d.players)), d.players, fontsize=8)
        ax.set(
            xlabel="player",
            ylabel="setter's tasks",
            title="all tasks" if not filtered else f"setter p(correct) ≥ {d.pass_mark:g}",
        )
        if len(d.players) <= MAX_ANNOTATED:  # beyond that the numbers cannot be read (and cost minutes)
            for i in range(len(d.players)):
                for j in range(len(d.players)):
                    v = m.values[i, j]
                    if v == v:
                        ax.text(j, i, f"{v:+.2f}", ha="center", va="center", fontsize=7)
    fig.colorbar(im, ax=axes, shrink=0.8, label="p(correct) − mean of the others")
    save_png(fig, out / "self_preference.png")
    return (
        "self_preference.png",
        "Self-preferencing: on each setter's tasks, each player's p(correct) minus the "
        "mean of the others; left all tasks, right only tasks the setter itself passes.",
    )


def variance_histogram(d: RunData, out: Path) -> tuple[str, str, list[dict]] | None:
    if d.p.empty:
        return None
    var = d.p.var(axis=1, ddof=0).dropna()
    fig, ax = figure(figsize=(7, 4))
    ax.hist(var, bins=30)
    ax.set(xlabel="variance of p(correct) across players", ylabel="tasks", title="Points of difference")
    low, high = str(var.idxmin()), str(var.idxmax())  # task ids
    examples = []
    for label, tid in (("lowest variance", low), ("highest variance", high)):
        row = d.tasks.set_index("task_id").loc[tid]
        ps = cast(pd.Series, d.p.loc[tid])  # one task's row (task ids are unique)
        examples.append(
            {
                "label": label,
                "task_id": tid,
                "setter": row["setter"],
                "prompt": row["prompt"],
                "answer": row["answer"],
                "p": {k: round(float(v), 2) for k, v in ps.items() if v == v},
            }
        )
    return _save(fig, out, "variance_histogram.png", MARGINS), "How much the players disagree on each task.", examples


def asking_vs_answering(d: RunData, out: Path) -> tuple[str, str] | None:
    """Asking: how hard the others find a player's tasks (1 − their mean p). Answering: the
    player's mean p on the others' tasks."""
    if d.p.empty:
        return None
    tasks = d.tasks.set_index("task_id").loc[d.p.index]
    ask, answer = {}, {}
    for pl in d.players:
        mine = tasks.index[tasks["setter"] == pl]
        theirs = tasks.index[tasks["setter"] != pl]
        if len(mine):
            ask[pl] = 1 - float(d.p.loc[mine, [x for x in d.players if x != pl]].mean(axis=1).mean())
        if len(theirs):
            answer[pl] = float(d.p.loc[theirs, pl].mean())
    both = [pl for pl in d.players if pl in ask and pl in answer]
    if not both:
        return None
    fig, ax = figure(figsize=(6, 5))
    ax.scatter([answer[p] for p in both], [ask[p] for p in both])
    for pl in both:
        ax.annotate(pl, (answer[pl], ask[pl]), fontsize=8, xytext=(3, 3), textcoords="offset points")
    ax.set(
        xlabel="answering: mean p(correct) on others' tasks",
        ylabel="asking: 1 − others' mean p on own tasks",
        title="Asking versus answering",
    )
    return _save(fig, out, "asking_vs_answering.png"), "Each player's skill at asking against its skill at answering."


def recovered_vs_true(d: RunData, out: Path) -> tuple[str, str] | None:
    truth = {k: v for k, v in d.true_skill.items() if v is not None}
    rows = [r for r in d.ratings if r["player"] in truth and r.get("score", r.get("mu")) is not None]
    if len(rows) < 2:
        return None
    fig, ax = figure(figsize=(6, 5))
    xs = [truth[r["player"]] for r in rows]
    ys = [r.get("score", r.get("mu")) for r in rows]
    ax.scatter(xs, ys)
    for r, x, y in zip(rows, xs, ys, strict=True):
        ax.annotate(r["player"], (x, y), fontsize=8, xytext=(3, 3), textcoords="offset points")
    ax.set(xlabel="true skill (simulated)", ylabel="recovered score", title="Recovered versus true skill")
    return _save(fig, out, "recovered_vs_true.png"), "Simulated players: the rating against the skill they were given."


def cost_per_player(d: RunData, out: Path) -> tuple[str, str] | None:
    if not d.usage:
        return None
    per = d.usage["players"]
    names = list(per)
    fig, axes = figure(1, 2, figsize=(10, 4))
    axes[0].bar(names, [per[n]["cost_usd"] for n in names])
    axes[0].set(ylabel="USD", title="Cost per player")
    axes[1].bar(names, [per[n]["prompt_tokens"] + per[n]["completion_tokens"] for n in names])
    axes[1].set(ylabel="tokens", title="Tokens per player")
    for ax in axes:
        ax.tick_params(axis="x", rotation=45)
    return _save(fig, out, "cost_per_player.png"), "Model cost and tokens per player."


def accuracy_by_group_plot(d: RunData, out: Path) -> tuple[str, str] | None:
    """Heat maps of each player's mean p(correct) per value of each group key (tasks whose events
    carry ``groups``, e.g. SCP's question type and domain)."""
    tables = []
    for key in d.group_keys:
        acc = group_accuracy(d, [key])
        if not acc.empty:
            tables.append((key, acc.pivot(index="player", columns=key, values="accuracy").reindex(index=d.players)))
    if not tables:
        return None
    widths = [max(2, m.shape[1]) for _, m in tables]
    fig, axes = figure(
        1,
        len(tables),
        figsize=(min(18, 2.2 + 0.9 * sum(widths)), 0.45 * len(d.players) + 2.2),
        layout="constrained",
        squeeze=False,
        width_ratios=widths,
    )
    for ax, (key, m) in zip(axes[0], tables, strict=True):
        values = m.values.astype(float)
        im = ax.imshow(values, cmap="viridis", vmin=0, vmax=1, aspect="auto")
        ax.set_xticks(range(m.shape[1]), list(m.columns), rotation=45, ha="right", fontsize=8)
        ax.set_yticks(range(len(d.players)), d.players, fontsize=8)
        ax.set(xlabel=key, title=f"by {key}")
        for i in range(values.shape[0]):
            for j in range(values.shape[1]):
                v = values[i, j]
                if not np.isnan(v):
                    ax.text(
                        j, i, f"{v:.2f}", ha="center", va="center", fontsize=7, color="black" if v > 0.6 else "white"
                    )
    fig.colorbar(im, ax=axes[0].tolist(), shrink=0.8, label="mean p(correct)")
    save_png(fig, out / "accuracy_by_group.png")
    return (
        "accuracy_by_group.png",
        "Mean p(correct) of each player over the tasks of each "
        + " and each ".join(key for key, _ in tables)
        + " (void estimates left out).",
    )


def novelty_distances(d: RunData, out: Path) -> tuple[str, str] | None:
    """SKATE Fig. 7: how far each proposal was from its setter's nearest earlier task, for
    accepted tasks and for those turned away as not unique, with the embedder's threshold."""
    a = d.attempts.dropna(subset=["novelty_distance"]) if not d.attempts.empty else d.attempts
    if a.empty:
        return None
    dist = a["novelty_distance"].astype(float)
    rejected = a["reason"] == "not_unique"
    fig, axes = figure(1, 2, figsize=(12, 4.2), width_ratios=[1, 1.3])
    bins = np.linspace(0, max(1.0, float(dist.max())), 41)
    axes[0].hist(dist[~rejected], bins=bins, alpha=0.7, label=f"accepted ({int((~rejected).sum())})")
    if rejected.any():
        axes[0].hist(dist[rejected], bins=bins, alpha=0.7, label=f"not unique ({int(rejected.sum())})")
    setters = [p for p in d.players if (a["player"] == p).any()]
    axes[1].boxplot([a.loc[a["player"] == p, "novelty_distance"].astype(float) for p in setters], tick_labels=setters)
    axes[1].tick_params(axis="x", rotation=45, labelsize=8)
    if d.novelty_threshold is not None:
        for ax in axes:
            (ax.axvline if ax is axes[0] else ax.axhline)(
                d.novelty_threshold, ls="--", c="k", lw=1, label=f"threshold {d.novelty_threshold:g}"
            )
    axes[0].set(xlabel="1 − cosine to the setter's nearest earlier task", ylabel="proposals", title="Novelty distances")
    axes[0].legend(fontsize=8)
    axes[1].set(ylabel="1 − cosine to the nearest earlier task", title="by setter")
    return (
        _save(fig, out, "novelty_distances.png"),
        "Distance of each proposal to its setter's nearest earlier task (SKATE Fig. 7): accepted "
        "against turned away as not unique, and by setter; the dashed line is the embedder's threshold.",
    )


def _stage_rows(d: RunData) -> list[tuple[str, dict[str, dict]]]:
    """Each stage's name and its ratings by player (rows with μ and σ only)."""
    out = []
    for e in d.stages:
        rows = {r["player"]: r for r in e["ratings"] if r.get("mu") is not None and r.get("sigma") is not None}
        if rows:
            out.append((e["stage"], rows))
    return out


def stage_panels(d: RunData, out: Path) -> tuple[str, str] | None:
    """SKATE Fig. 5: μ ± σ of every player at the end of each stage, one panel per stage."""
    stages = _stage_rows(d)
    if not stages:
        return None
    fig, axes = figure(
        1, len(stages), figsize=(3.6 * len(stages) + 1, 0.35 * len(d.players) + 2.2), sharex=True, squeeze=False
    )
    at = {p: i for i, p in enumerate(d.players[::-1])}  # the same row for a player in every panel
    for ax, (name, rows) in zip(axes[0], stages, strict=True):
        names = [p for p in d.players if p in rows]
        ax.errorbar(
            [rows[p]["mu"] for p in names],
            [at[p] for p in names],
            xerr=[rows[p]["sigma"] for p in names],
            fmt="o",
            capsize=3,
        )
        ax.set_yticks(range(len(at)), list(at), fontsize=8)
        ax.set_ylim(-0.5, len(at) - 0.5)
        ax.set(title=name, xlabel="μ ± σ")
    return (_save(fig, out, "stage_panels.png"), "μ ± σ of every player at the end of each stage (SKATE Fig. 5).")


def mu_sigma_paths(d: RunData, out: Path) -> tuple[str, str] | None:
    """SKATE Fig. 10: each player's (μ, σ) at the end of each stage, joined in stage order."""
    stages = _stage_rows(d)
    if len(stages) < 2:
        return None
    fig, ax = figure(figsize=(7.5, 5))
    for player in d.players:
        pts = [(rows[player]["mu"], rows[player]["sigma"]) for _, rows in stages if player in rows]
        if not pts:
            continue
        xs, ys = zip(*pts, strict=True)
        (line,) = ax.plot(xs, ys, "-o", ms=3, label=player)
        ax.annotate(
            "",
            xy=pts[-1],
            xytext=pts[-2] if len(pts) > 1 else pts[-1],
            arrowprops={"arrowstyle": "->", "color": line.get_color()},
        )
    ax.set(
        xlabel="μ", ylabel="σ", title="μ and σ as players are added (stages: " + " → ".join(n for n, _ in stages) + ")"
    )
    ax.legend(fontsize=8, ncol=2)
    return (
        _save(fig, out, "mu_sigma_paths.png", MARGINS),
        "Each player's μ and σ at the end of each stage, in stage order (SKATE Fig. 10).",
    )


def mcqa_sensitivity(d: RunData, out: Path) -> tuple[str, str] | None:
    """SKATE Fig. 6, from ``skate sensitivity`` (``sensitivity.csv`` in the run
    folder): each probed task's fraction correct over different option sets (left) and over
    orders of one option set (right), one row of panels per player."""
    path = d.run_dir / "sensitivity.csv"
    if not path.exists():
        return None
    t = pd.read_csv(path).dropna(subset=["fraction"])
    if t.empty:
        return None
    players = list(dict.fromkeys(t["player"]))
    fig, axes = figure(len(players), 2, figsize=(12, 2.8 * len(players) + 0.8), squeeze=False, sharey=True)
    for r, player in enumerate(players):
        for c, probe in enumerate(("option set", "ordering")):
            ax = axes[r][c]
            part = t[(t["player"] == player) & (t["probe"] == probe)]
            ids = list(dict.fromkeys(part["task_id"]))
            for k, tid in enumerate(ids):
                ys = part.loc[part["task_id"] == tid, "fraction"].to_numpy()
                xs = k + np.linspace(-0.25, 0.25, len(ys)) if len(ys) > 1 else [k]
                ax.scatter(xs, ys, s=12, alpha=0.7)
                ax.plot([k - 0.3, k + 0.3], [ys.mean()] * 2, c="k", lw=1)
            ax.set_xticks(range(len(ids)), [str(i) for i in range(1, len(ids) + 1)], fontsize=8)
            ax.set_ylim(-0.05, 1.05)
            ax.set(
                title=f"{player}: {'different option sets' if probe == 'option set' else 'orders of one set'}",
                xlabel="task",
                ylabel="fraction correct" if c == 0 else None,
            )
    samples = int(t["samples"].max())
    return (
        _save(fig, out, "mcqa_sensitivity.png"),
        f"Fraction correct ({samples} answers each) on each probed task over different option sets and over "
        "orders of one set; the black bar is the task's mean (SKATE Fig. 6; skate sensitivity).",
    )


def ranking_confidence(d: RunData, out: Path) -> tuple[str, str] | None:
    """How sure the ranking was after each round: each adjacent pair's probability of being in
    the right order (the rating's own model), and the level at which the game stops."""
    o = d.order
    if o.empty:
        return None
    fig, ax = figure(figsize=(8, 4.2))
    worst = o.groupby("round")["confidence"].min()
    ax.plot(worst.index, worst.values, color="black", lw=2, label="least sure pair")
    last = o[o["round"] == o["round"].max()]
    for _, pair in last.iterrows():
        s = o[(o["above"] == pair["above"]) & (o["below"] == pair["below"])]
        ax.plot(s["round"], s["confidence"], lw=1, alpha=0.7, label=f"{pair['above']} > {pair['below']}")
    if d.settled_at is not None:
        ax.axhline(d.settled_at, ls="--", c="grey", lw=1)
    ax.set(
        xlabel="round",
        ylabel="P(order right)",
        ylim=(0.45, 1.01),
        title="How sure the ranking is (adjacent pairs of the final ranking)",
    )
    ax.legend(fontsize=7, ncol=2)
    caption = (
        "After each round, each adjacent pair of the ranking with the probability, under the rating's "
        "model, that its order is right; black: the least sure pair."
    )
    if d.settled_at is not None:
        caption += f" Dashed: stop.settled={d.settled_at}."
    if d.ended_detail:
        caption += f" The game ended {d.ended_detail}." if d.ended == "settled" else ""
    return _save(fig, out, "ranking_confidence.png", MARGINS), caption


PLOTS: list[Callable] = [
    rating_evolution,
    ranking_confidence,
    final_ratings,
    accuracy_by_group_plot,
    setter_progress,
    self_preference_plot,
    variance_histogram,
    asking_vs_answering,
    recovered_vs_true,
    cost_per_player,
    novelty_distances,
    stage_panels,
    mu_sigma_paths,
    mcqa_sensitivity,
]

"""The run's page and the sweep's page: what :mod:`skate.report` exports (see its docstring)."""

from __future__ import annotations

import base64
import contextlib
import html
import json
import logging
import math
import numbers
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from skate.report.clusters import cluster_figure, cluster_section, export, shares_table, task_clusters
from skate.report.data import ReportError, RunData, accuracy_by_group, group_accuracy, load_run
from skate.report.plots import PLOTS
from skate.report.sweep import SWEEP_PLOTS, job_of
from skate.report.viewer import ViewerError, build_viewer

log = logging.getLogger(__name__)

__all__ = [
    "ReportError",
    "accuracy_by_group",
    "build_report",
    "build_sweep_report",
    "correlations",
    "group_tables",
    "load_run",
]

CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}img{max-width:100%}
pre{background:#f7f7f7;padding:.6em;overflow-x:auto;font-size:.85em}figure{margin:1.5em 0}
figcaption{color:#555;font-size:.9em}ol.notes{font-size:.9em;color:#444}"""


def correlations(ratings: list[dict[str, Any]], benchmarks: pd.DataFrame) -> pd.DataFrame:
    """Pearson, Spearman and Kendall correlation of the rating score with each benchmark column."""
    from scipy.stats import kendalltau, pearsonr, spearmanr

    if "player" not in benchmarks.columns:
        raise ReportError("the benchmark table needs a 'player' column naming the players as in the run")
    score = {r["player"]: r.get("score", r.get("mu")) for r in ratings}
    rows = []
    for col in [c for c in benchmarks.columns if c != "player"]:
        pairs = [
            (score[p], float(v))
            for p, v in zip(benchmarks["player"], benchmarks[col], strict=True)
            if p in score and score[p] is not None and pd.notna(v)
        ]
        if len(pairs) < 3:
            rows.append({"benchmark": col, "players": len(pairs), "pearson": None, "spearman": None, "kendall": None})
            continue
        x, y = zip(*pairs, strict=True)
        rows.append(
            {
                "benchmark": col,
                "players": len(pairs),
                "pearson": float(pearsonr(x, y).statistic),
                "spearman": float(spearmanr(x, y).statistic),
                "kendall": float(kendalltau(x, y).statistic),
            }
        )
    return pd.DataFrame(rows, columns=["benchmark", "players", "pearson", "spearman", "kendall"])


GROUP_TASKS = "(tasks)"  # the row of a per-key table counting each value's tasks


def group_tables(d: RunData) -> list[tuple[str, pd.DataFrame]]:
    """The report's accuracy-by-group tables, each with its title; none when no task carries
    groups. Per key: one row per player (a column per value of the key, cells mean p(correct)
    over that value's tasks with non-void estimates, and ``tasks``: the player's non-void
    estimates among them), then a row ``(tasks)`` counting each value's tasks that have a
    non-void estimate. With two or more keys, one more table over their combinations: one row
    per combination, ``tasks``, then a column per player."""
    keys = d.group_keys
    out = []
    for key in keys:
        acc = group_accuracy(d, [key])
        if acc.empty:
            continue
        wide = acc.pivot(index="player", columns=key, values="accuracy").reindex(index=d.players)
        wide["tasks"] = acc.groupby("player")["tasks"].sum().reindex(d.players)
        counts = _task_counts(d, [key])
        wide.loc[GROUP_TASKS] = [*counts.reindex(wide.columns[:-1]).tolist(), counts.sum()]
        wide.columns.name = None
        out.append((f"by {key}", wide.rename_axis("player").reset_index()))
    if len(keys) >= 2:
        acc = group_accuracy(d, keys)
        if not acc.empty:
            wide = acc.pivot(index=keys, columns="player", values="accuracy").reindex(columns=d.players)
            wide.insert(0, "tasks", _task_counts(d, keys).reindex(wide.index))
            wide.columns.name = None
            out.append((f"by {' × '.join(keys)}", wide.reset_index()))
    return out


def with_se(d: RunData, title: str, wide: pd.DataFrame) -> pd.DataFrame:
    """A per-key table of :func:`group_tables` (``by <key>``) with each player's cells written
    ``accuracy ± standard error`` (for the page; the numbers are in accuracy_by_group.csv)."""
    key = title.removeprefix("by ")
    if key not in d.group_keys:
        return wide
    acc = group_accuracy(d, [key])
    cell = {(r["player"], str(r[key])): (r["accuracy"], r["se"]) for r in acc.to_dict("records")}
    out = wide.astype(object).copy()
    for i, player in enumerate(out["player"]):
        for j, col in enumerate(out.columns[1:-1], start=1):
            a, se = cell.get((player, str(col)), (float("nan"), float("nan")))
            if pd.notna(a):
                out.iat[i, j] = f"{a:.3f} ± {se:.3f}" if pd.notna(se) else f"{a:.3f}"
    return out


def value_correlations(d: RunData) -> pd.DataFrame:
    """How the values of each group key agree across players (e.g. SCP's three question types):
    for each pair of values, the Pearson, Spearman and Kendall correlations of the players'
    accuracy on one with their accuracy on the other (players with both; empty under three
    players or when one side does not vary)."""
    from scipy.stats import kendalltau, pearsonr, spearmanr

    rows = []
    for key in d.group_keys:
        acc = group_accuracy(d, [key])
        if acc.empty:
            continue
        wide = acc.pivot(index="player", columns=key, values="accuracy")
        values = list(wide.columns)
        for i, a in enumerate(values):
            for b in values[i + 1 :]:
                both = wide[[a, b]].dropna()
                row: dict[str, Any] = {"key": key, "a": a, "b": b, "players": len(both)}
                if len(both) >= 3 and both[a].nunique() > 1 and both[b].nunique() > 1:
                    x, y = both[a].to_numpy(), both[b].to_numpy()
                    row |= {
                        "pearson": float(pearsonr(x, y).statistic),
                        "spearman": float(spearmanr(x, y).statistic),
                        "kendall": float(kendalltau(x, y).statistic),
                    }
                rows.append(row)
    return pd.DataFrame(rows, columns=["key", "a", "b", "players", "pearson", "spearman", "kendall"])


def _task_counts(d: RunData, keys: list[str]) -> pd.Series:
    """Per combination of values of ``keys``: tasks with at least one non-void estimate."""
    g = d.groups.loc[d.groups.index.intersection(d.p.index), keys].dropna()
    g = g[d.p.loc[g.index].notna().any(axis=1)]
    return g.groupby(keys).size() if len(keys) > 1 else g.groupby(keys[0]).size()


def _table(df: pd.DataFrame, floats: int = 3) -> str:
    return df.to_html(index=False, float_format=lambda x: f"{x:.{floats}f}", na_rep="–", border=0)


def ratings_table(rows: list[dict[str, Any]]) -> str:
    """The ratings as HTML. A row carrying an ``unbounded`` note (a player with no win or no loss,
    whose rating only the prior holds) gets a numbered marker after its player's name and the
    note, under that number, below the table; rows without one are shown as they are."""
    notes: list[tuple[str, str]] = []
    shown = []
    for row in rows:
        row = dict(row)
        note = row.pop("unbounded", None)
        player = html.escape(str(row.get("player", "")))
        if note:
            notes.append((player, str(note)))
            player += f'<sup><a href="#unbounded-{len(notes)}">{len(notes)}</a></sup>'
        shown.append({**row, "player": player})
    df = pd.DataFrame(shown)
    for col in df.columns.drop("player", errors="ignore"):
        df[col] = df[col].map(lambda v: html.escape(v) if isinstance(v, str) else v)
    text = df.to_html(index=False, escape=False, float_format=lambda x: f"{x:.3f}", na_rep="–", border=0)
    if notes:
        text += (
            '<ol class="notes">'
            + "".join(
                f'<li id="unbounded-{i}">{player}: {html.escape(note)}</li>'
                for i, (player, note) in enumerate(notes, 1)
            )
            + "</ol>"
        )
    return text


def _group_table(df: pd.DataFrame) -> str:
    """A table of :func:`group_tables` as HTML: task counts as integers, accuracies to 3 places."""

    def cell(row: pd.Series, col: str) -> str:
        v = row[col]
        if not isinstance(v, numbers.Real) or isinstance(v, bool):
            return str(v)
        x = float(v)
        if math.isnan(x):
            return "–"
        return str(int(x)) if col == "tasks" or row.iloc[0] == GROUP_TASKS else f"{x:.3f}"

    shown = pd.DataFrame([{c: cell(row, c) for c in df.columns} for _, row in df.iterrows()], columns=df.columns)
    return shown.to_html(index=False, border=0)


def _img(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode()


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Numerical libraries (OpenBLAS, OpenMP) on one thread while a report is built. Its matrices
    are small (a few hundred tasks): their threads spent more CPU waiting on one another than
    working (the clusters' projection, a 300 x 1,024 SVD, took 0.24 s of CPU on two threads of a
    busy machine and 0.04 s on one), and the results are the same."""
    from threadpoolctl import threadpool_limits  # scikit-learn's dependency, as the clusters' choose_k has it

    with threadpool_limits(limits=1):
        yield


def build_report(run_dir: str | Path, benchmarks: str | Path | None = None, data: RunData | None = None) -> Path:
    """Write ``run_dir/report/``; ``data`` saves reading the log again when the caller has it."""
    with one_thread():
        return _build_report(run_dir, benchmarks, data)


def _build_report(run_dir: str | Path, benchmarks: str | Path | None, data: RunData | None) -> Path:
    d: RunData = data or load_run(run_dir)
    out = d.run_dir / "report"
    out.mkdir(exist_ok=True)
    # The task × player table, with the task's round and setter.
    table = d.tasks.set_index("task_id").loc[d.p.index, ["round", "setter"]].join(d.p)
    table.reset_index().to_csv(out / "p_correct.csv", index=False)
    table.reset_index().to_parquet(out / "p_correct.parquet", index=False)

    figures, examples = [], []
    for plot in PLOTS:
        got = plot(d, out)
        if got is None:
            continue
        if len(got) == 3:
            examples = got[2]
        figures.append((got[0], got[1]))

    viewer = _viewer(d.run_dir)
    parts = [f"<h1>skate report: {html.escape(d.run_dir.name)}</h1>"]
    if viewer is not None:
        parts.append(
            '<p class="viewer"><a href="../viewer/index.html">Open the game viewer</a>: every task, '
            "answer, rejected attempt and reply of this run.</p>"
        )
    s = d.start
    parts.append(
        f"<p>game <b>{s.get('game')}</b>, {len(d.players)} players, {len(d.tasks)} tasks over "
        f"{s.get('rounds')} rounds; rating {html.escape(str(s.get('rating')))}, aug {s.get('aug')}, "
        f"sandbox {s.get('sandbox')}, seed {s.get('seed')}"
        f"{'' if d.finished else ' — <b>the run did not finish</b>'}</p>"
    )
    if d.ended == "settled":
        parts.append(f"<p>The game ended early: {html.escape(d.ended_detail)}.</p>")
    parts.append("<h2>Ratings</h2>" + ratings_table(d.ratings))
    if d.stages:  # a staged game (SKATE §6.1/§6.2): the ranking at the end of each stage
        rows = [
            {"stage": e["stage"], "after round": e["round"], "ranking": " > ".join(r["player"] for r in e["ratings"])}
            for e in d.stages
        ]
        parts.append("<h2>Rankings by stage</h2>" + _table(pd.DataFrame(rows)))
    exports = ["p_correct.csv", "p_correct.parquet"]
    tables = group_tables(d)
    if tables:  # tasks with groups (e.g. SCP's question type and domain)
        accuracy_by_group(d).to_csv(out / "accuracy_by_group.csv", index=False)
        exports.append("accuracy_by_group.csv")
        parts.append(
            f"<h2>Accuracy by {html.escape(' and '.join(d.group_keys))}</h2>"
            "<p>Mean p(correct) over each group's tasks ± its standard error over those tasks, "
            "void estimates left out (with estimator=greedy, one answer a task: accuracy); "
            f"<code>tasks</code>: the estimates it averages (row <code>{GROUP_TASKS}</code>: "
            "the group's tasks).</p>"
        )
        parts += [f"<h3>{html.escape(title)}</h3>" + _group_table(with_se(d, title, t)) for title, t in tables]
        agree = value_correlations(d)
        if not agree.empty:
            agree.to_csv(out / "group_correlations.csv", index=False)
            exports.append("group_correlations.csv")
            parts.append(
                "<h3>How the groups agree</h3><p>For each pair of values of a key (e.g. two question "
                "types), the correlation across players of their accuracy on one with their accuracy on "
                "the other.</p>" + _table(agree)
            )
    if d.summary:
        counts = {k: v for k, v in d.summary.items() if not isinstance(v, dict)}
        parts.append("<h2>Counts</h2>" + _table(pd.DataFrame([counts])))
    if d.usage:
        per = pd.DataFrame([{"player": k, **v} for k, v in d.usage["players"].items()])
        parts.append("<h2>Model usage and cost</h2>" + _table(per, 4))
    if benchmarks is not None:
        corr = correlations(d.ratings, pd.read_csv(benchmarks))
        corr.to_csv(out / "correlations.csv", index=False)
        parts.append("<h2>Correlation with external benchmarks</h2>" + _table(corr))
    for name, caption in figures:
        parts.append(
            f'<figure><img alt="{name}" src="{_img(out / name)}"><figcaption>{html.escape(caption)}'
            "</figcaption></figure>"
        )
    for ex in examples:
        parts.append(
            f"<h3>Example task, {ex['label']} ({html.escape(ex['task_id'])}, set by "
            f"{html.escape(ex['setter'])})</h3><pre>{html.escape(ex['prompt'])}</pre>"
            f"<p>answer: <code>{html.escape(str(ex['answer']))}</code>; p(correct): "
            f"{html.escape(json.dumps(ex['p']))}</p>"
        )
    clusters = task_clusters(d)  # SKATE Fig. 8
    image = cluster_figure(clusters, out)
    exports += export(clusters, out)
    parts.append(
        cluster_section(
            clusters,
            f'<img alt="{image}" src="{_img(out / image)}">' if image else None,
            _table(shares_table(clusters)),
        )
    )
    parts.append(
        "<p>Exports: <code>p_correct.csv</code>, <code>p_correct.parquet</code> (task × player)"
        + "".join(f", <code>{name}</code>" for name in exports[2:])
        + ".</p>"
    )
    page = out / "index.html"
    page.write_text(
        f"<!doctype html><html><head><meta charset='utf-8'><title>skate report</title>"
        f"<style>{CSS}</style></head><body>{''.join(parts)}</body></html>",
        encoding="utf-8",
    )
    return page


def _viewer(run_dir: Path) -> Path | None:
    """The run's game viewer, written beside the report (None, and said, where it cannot be)."""
    try:
        return build_viewer(run_dir, report=True)[0]
    except (ViewerError, OSError) as exc:
        log.warning("no game viewer for %s: %s", run_dir, exc)
        return None


def build_sweep_report(sweep_dir: str | Path, benchmarks: str | Path | None = None) -> Path:
    """Report every job of a sweep, and one page comparing them."""
    with one_thread():
        return _build_sweep_report(sweep_dir, benchmarks)


def _build_sweep_report(sweep_dir: str | Path, benchmarks: str | Path | None) -> Path:
    from scipy.stats import kendalltau

    sweep_dir = Path(sweep_dir)
    jobs = sorted(
        (p for p in sweep_dir.iterdir() if p.is_dir() and (p / "events.jsonl").exists()),
        key=lambda p: (len(p.name), p.name),
    )
    if not jobs:
        raise ReportError(f"{sweep_dir} holds no job folders with an events.jsonl")
    rows, compared = [], []
    for job in jobs:
        d = load_run(job)
        page = job / "report" / "index.html"
        if benchmarks is not None or not page.exists() or page.stat().st_mtime < (job / "events.jsonl").stat().st_mtime:
            build_report(job, benchmarks, data=d)
        overrides = job / ".hydra" / "overrides.yaml"
        label = (
            " ".join(x.strip("- ").strip() for x in overrides.read_text().splitlines())
            if overrides.exists()
            else job.name
        )
        compared.append(job_of(d, label))
        order = [r["player"] for r in sorted(d.ratings, key=lambda r: r.get("rank") or 1e9)]
        truth = {k: v for k, v in d.true_skill.items() if v is not None}
        tau = None
        if len(truth) >= 2 and all(p in truth for p in order):
            score = {r["player"]: r.get("score", r.get("mu")) for r in d.ratings}
            tau = float(kendalltau([score[p] for p in order], [truth[p] for p in order]).statistic)
        stage_rankings = "; ".join(f"{e['stage']}: " + " > ".join(r["player"] for r in e["ratings"]) for e in d.stages)
        if not (job / "viewer" / "index.html").exists():
            _viewer(job)
        viewer = (
            f' (<a class="viewer" href="{job.name}/viewer/index.html">viewer</a>)'
            if (job / "viewer" / "index.html").exists()
            else ""
        )
        rows.append(
            {
                "job": f'<a href="{job.name}/report/index.html">{html.escape(job.name)}</a>{viewer}',
                "overrides": html.escape(label),
                "finished": d.finished,
                "tasks": len(d.tasks),
                "samples": d.summary.get("samples"),
                "ranking": " > ".join(order),
                "kendall_tau": tau,
                **({"rankings by stage": html.escape(stage_rankings)} if stage_rankings else {}),
            }
        )
        del d
    df = pd.DataFrame(rows)
    out = sweep_dir / "report"
    out.mkdir(exist_ok=True)
    plain = df.assign(job=[j.name for j in jobs]).apply(
        lambda c: c.map(lambda v: html.unescape(v) if isinstance(v, str) else v)
    )
    plain.to_csv(out / "jobs.csv", index=False)  # the comparison table, for W&B and spreadsheets
    figures = [got for plot in SWEEP_PLOTS if (got := plot(compared, out)) is not None]
    parts = [
        f"<h1>skate sweep: {html.escape(str(sweep_dir))}</h1>",
        df.to_html(index=False, escape=False, border=0, na_rep="–"),
    ]
    parts += [
        f'<figure><img alt="{name}" src="{_img(out / name)}"><figcaption>{html.escape(caption)}</figcaption></figure>'
        for name, caption in figures
    ]
    page = sweep_dir / "report.html"
    page.write_text(
        f"<!doctype html><html><head><meta charset='utf-8'><title>skate sweep</title>"
        f"<style>{CSS}</style></head><body>{''.join(parts)}</body></html>",
        encoding="utf-8",
    )
    return page

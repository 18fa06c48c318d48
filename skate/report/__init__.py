"""The report: PNG plots, exports and one self-contained HTML page, from the event log alone.

``build_report(run_dir)`` writes ``run_dir/report/`` (``index.html`` with every plot embedded,
the PNGs, ``p_correct.parquet`` and ``p_correct.csv``: the task × player p(correct) table) and
returns the path of the page. ``build_sweep_report(sweep_dir)`` reports every job and writes one
page comparing them. Given a table of external benchmark scores (CSV with a ``player`` column
and one column per benchmark), the report adds Pearson and Spearman correlations with the
ratings (SKATE App. I).
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any

import pandas as pd

from skate.report.data import ReportError, RunData, load_run

__all__ = ["ReportError", "build_report", "build_sweep_report", "correlations", "load_run"]

CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}img{max-width:100%}
pre{background:#f7f7f7;padding:.6em;overflow-x:auto;font-size:.85em}figure{margin:1.5em 0}
figcaption{color:#555;font-size:.9em}"""


def correlations(ratings: list[dict[str, Any]], benchmarks: pd.DataFrame) -> pd.DataFrame:
    """Pearson and Spearman correlation of the rating score with each benchmark column."""
    from scipy.stats import pearsonr, spearmanr

    if "player" not in benchmarks.columns:
        raise ReportError("the benchmark table needs a 'player' column naming the players as in the run")
    score = {r["player"]: r.get("score", r.get("mu")) for r in ratings}
    rows = []
    for col in [c for c in benchmarks.columns if c != "player"]:
        pairs = [(score[p], float(v)) for p, v in zip(benchmarks["player"], benchmarks[col], strict=True)
                 if p in score and score[p] is not None and pd.notna(v)]
        if len(pairs) < 3:
            rows.append({"benchmark": col, "players": len(pairs), "pearson": None, "spearman": None})
            continue
        x, y = zip(*pairs, strict=True)
        rows.append({"benchmark": col, "players": len(pairs), "pearson": float(pearsonr(x, y).statistic),
                     "spearman": float(spearmanr(x, y).statistic)})
    return pd.DataFrame(rows, columns=["benchmark", "players", "pearson", "spearman"])


def _table(df: pd.DataFrame, floats: int = 3) -> str:
    return df.to_html(index=False, float_format=lambda x: f"{x:.{floats}f}", na_rep="–", border=0)


def _img(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode()


def build_report(run_dir: str | Path, benchmarks: str | Path | None = None, data: RunData | None = None) -> Path:
    """Write ``run_dir/report/``; ``data`` saves reading the log again when the caller has it."""
    from skate.report.plots import PLOTS

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

    parts = [f"<h1>skate report: {html.escape(d.run_dir.name)}</h1>"]
    s = d.start
    parts.append(f"<p>game <b>{s.get('game')}</b>, {len(d.players)} players, {len(d.tasks)} tasks over "
                 f"{s.get('rounds')} rounds; rating {html.escape(str(s.get('rating')))}, aug {s.get('aug')}, "
                 f"sandbox {s.get('sandbox')}, seed {s.get('seed')}"
                 f"{'' if d.finished else ' — <b>the run did not finish</b>'}</p>")
    parts.append("<h2>Ratings</h2>" + _table(pd.DataFrame(d.ratings)))
    if d.stages:  # a staged game (SKATE §6.1/§6.2): the ranking at the end of each stage
        rows = [{"stage": e["stage"], "after round": e["round"],
                 "ranking": " > ".join(r["player"] for r in e["ratings"])} for e in d.stages]
        parts.append("<h2>Rankings by stage</h2>" + _table(pd.DataFrame(rows)))
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
        parts.append(f'<figure><img alt="{name}" src="{_img(out / name)}"><figcaption>{html.escape(caption)}'
                     "</figcaption></figure>")
    for ex in examples:
        parts.append(f"<h3>Example task, {ex['label']} ({html.escape(ex['task_id'])}, set by "
                     f"{html.escape(ex['setter'])})</h3><pre>{html.escape(ex['prompt'])}</pre>"
                     f"<p>answer: <code>{html.escape(str(ex['answer']))}</code>; p(correct): "
                     f"{html.escape(json.dumps(ex['p']))}</p>")
    parts.append("<p>Exports: <code>p_correct.csv</code>, <code>p_correct.parquet</code> (task × player).</p>")
    page = out / "index.html"
    page.write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>skate report</title>"
                    f"<style>{CSS}</style></head><body>{''.join(parts)}</body></html>", encoding="utf-8")
    return page


def build_sweep_report(sweep_dir: str | Path, benchmarks: str | Path | None = None) -> Path:
    """Report every job of a sweep, and one page comparing them."""
    from scipy.stats import kendalltau

    sweep_dir = Path(sweep_dir)
    jobs = sorted((p for p in sweep_dir.iterdir() if p.is_dir() and (p / "events.jsonl").exists()),
                  key=lambda p: (len(p.name), p.name))
    if not jobs:
        raise ReportError(f"{sweep_dir} holds no job folders with an events.jsonl")
    rows = []
    for job in jobs:
        d = load_run(job)
        page = job / "report" / "index.html"
        if benchmarks is not None or not page.exists() or page.stat().st_mtime < (job / "events.jsonl").stat().st_mtime:
            build_report(job, benchmarks, data=d)
        overrides = (job / ".hydra" / "overrides.yaml")
        label = " ".join(x.strip("- ").strip() for x in overrides.read_text().splitlines()) if overrides.exists() else job.name
        order = [r["player"] for r in sorted(d.ratings, key=lambda r: r.get("rank") or 1e9)]
        truth = {k: v for k, v in d.true_skill.items() if v is not None}
        tau = None
        if len(truth) >= 2 and all(p in truth for p in order):
            score = {r["player"]: r.get("score", r.get("mu")) for r in d.ratings}
            tau = float(kendalltau([score[p] for p in order], [truth[p] for p in order]).statistic)
        stage_rankings = "; ".join(f"{e['stage']}: " + " > ".join(r["player"] for r in e["ratings"])
                                   for e in d.stages)
        rows.append({"job": f'<a href="{job.name}/report/index.html">{html.escape(job.name)}</a>',
                     "overrides": html.escape(label), "finished": d.finished, "tasks": len(d.tasks),
                     "samples": d.summary.get("samples"), "ranking": " > ".join(order), "kendall_tau": tau,
                     **({"rankings by stage": html.escape(stage_rankings)} if stage_rankings else {})})
    df = pd.DataFrame(rows)
    page = sweep_dir / "report.html"
    page.write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>skate sweep</title>"
                    f"<style>{CSS}</style></head><body><h1>skate sweep: {html.escape(str(sweep_dir))}</h1>"
                    f"{df.to_html(index=False, escape=False, border=0, na_rep='–')}</body></html>", encoding="utf-8")
    return page

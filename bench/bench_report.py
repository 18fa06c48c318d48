"""CPU of the run report (``skate.report.build_report``): cold, warm, per part, and a sweep job's.

Usage:
    .venv/bin/python bench/bench_report.py                      # plays the two games once, then measures
    .venv/bin/python bench/bench_report.py --repeat 5 --cold 3
    .venv/bin/python bench/bench_report.py --run /tmp/rep/r1     # report on a run you already have
    PYTHONPATH=/tmp/before .venv/bin/python bench/bench_report.py   # another tree's skate (before/after)

Two runs are reported on: the default game (``python -m skate``, 6 simulated players, the game's
own rounds; about 300 valid tasks) and a sweep job's (the same with ``game.rounds=2``, as the
test suite's sweeps and a short job play). Each is played once, with ``report=false``, into
``--games`` (default ``/tmp/skate-bench-report``) and reused afterwards; their events do not depend
on the code measured here, so a before/after comparison reports on the very same logs.

All numbers are CPU seconds (``time.process_time``: this process, user + system), never wall time:

* ``cold``: a fresh ``python`` process that first loads what ``python -m skate`` has loaded
  before the report (``skate.runner``, a game's settings), then imports the report and builds it once: what a game
  with ``report=true`` pays at its end (imports included). Median of ``--cold`` processes.
* ``warm``: ``build_report`` again in this process (after one call that warms the imports and
  the caches), median of ``--repeat`` calls: what each further call of the test suite pays.
* per part, warm: ``load_run``, the p_correct exports, each figure of ``PLOTS`` (those that
  draw for this run), the task clustering (``task_clusters``, of which ``choose_k``) and its figure.
* ``sweep page``: ``build_sweep_report`` over two sweep-job-sized jobs whose own reports are
  already written (the comparison page alone).

Paste the tables into BENCHMARKS.md with the command; machine speed drifts, so compare trees
measured in one session, alternating.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GAMES = {"default": [], "sweep job": ["game.rounds=2"]}


def play(folder: Path, overrides: list[str]) -> Path:
    """The game's run folder, played once (``report=false``) and then reused."""
    if (folder / "events.jsonl").exists():
        return folder
    if folder.exists():
        shutil.rmtree(folder)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "skate",
            f"hydra.run.dir={folder}",
            "logger=none",
            "report=false",
            "print_table=false",
            *overrides,
        ],
        check=True,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    return folder


def copy_run(run: Path, into: Path) -> Path:
    """The run's log alone, in a folder of its own (so that reports never overwrite one another)."""
    into.mkdir(parents=True, exist_ok=True)
    shutil.copy(run / "events.jsonl", into / "events.jsonl")
    if (run / ".hydra").exists() and not (into / ".hydra").exists():
        shutil.copytree(run / ".hydra", into / ".hydra")
    return into


def cpu(fn, repeat: int) -> tuple[float, object]:
    """Median CPU seconds of ``repeat`` calls of ``fn``, and its last result."""
    times, got = [], None
    for _ in range(repeat):
        t0 = time.process_time()
        got = fn()
        times.append(time.process_time() - t0)
    return statistics.median(times), got


def child_cold(run: Path) -> None:
    """In a fresh process: the report's imports and its first build, in CPU seconds (printed as JSON)."""
    t0 = time.process_time()
    import skate
    import skate.runner  # what python -m skate has loaded before the report ...

    skate.config()  # ... and its settings (every game's modules: reading the run's settings needs them)
    t1 = time.process_time()
    from skate.report import (
        build_report,
        page,  # noqa: F401 - the report's own imports (skate.report is lazy)
    )

    t2 = time.process_time()
    build_report(run)
    t3 = time.process_time()
    heavy = sorted(m for m in ("matplotlib", "pandas", "pyarrow", "sklearn", "scipy") if m in sys.modules)
    print(json.dumps({"runner": t1 - t0, "imports": t2 - t1, "build": t3 - t2, "loaded": heavy}))


def cold(run: Path, times: int, scratch: Path) -> dict:
    rows = []
    for i in range(times):
        folder = copy_run(run, scratch / f"cold{i}")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        res = subprocess.run(
            [sys.executable, __file__, "--child-cold", str(folder)], capture_output=True, text=True, check=True, env=env
        )
        rows.append(json.loads(res.stdout.strip().splitlines()[-1]))
    return {k: statistics.median(r[k] for r in rows) for k in ("imports", "build")} | {"loaded": rows[-1]["loaded"]}


def parts(run: Path, repeat: int, scratch: Path) -> list[tuple[str, float]]:
    """Warm CPU of each part of the report, in the order build_report does them (under the
    thread limits build_report sets, where the tree measured has them)."""
    from skate.report import page

    with getattr(page, "one_thread", contextlib.nullcontext)():
        return _parts(run, repeat, scratch)


def _parts(run: Path, repeat: int, scratch: Path) -> list[tuple[str, float]]:
    from skate.report import clusters as cl
    from skate.report.data import load_run
    from skate.report.plots import PLOTS

    out = scratch / "parts"
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    t, d = cpu(lambda: load_run(run), repeat)
    rows.append(("load_run", t))

    def exports():
        table = d.tasks.set_index("task_id").loc[d.p.index, ["round", "setter"]].join(d.p)
        table.reset_index().to_csv(out / "p_correct.csv", index=False)
        table.reset_index().to_parquet(out / "p_correct.parquet", index=False)

    rows.append(("p_correct.csv + .parquet", cpu(exports, repeat)[0]))
    for plot in PLOTS:
        t, got = cpu(lambda plot=plot: plot(d, out), repeat)
        if got is not None:
            rows.append((f"figure {plot.__name__}", t))
    t, c = cpu(lambda: cl.task_clusters(d), repeat)
    rows.append(("task_clusters (all)", t))
    if c.tried:
        import numpy as np

        emb = cl.embedder_of(d)[0]
        vectors = np.asarray(emb.embed([str(x) for x in d.tasks.drop_duplicates("task_id")["prompt"]]), dtype=float)
        rows.append(("  of which choose_k", cpu(lambda: cl.choose_k(vectors), repeat)[0]))
    rows.append(("figure question_clusters", cpu(lambda: cl.cluster_figure(c, out), repeat)[0]))
    return rows


def sweep_page(runs: list[Path], repeat: int, scratch: Path) -> float:
    from skate.report import build_report, build_sweep_report

    root = scratch / "sweep"
    for i, run in enumerate(runs):
        build_report(copy_run(run, root / str(i)))
    return cpu(lambda: build_sweep_report(root), repeat)[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--games",
        type=Path,
        default=Path(tempfile.gettempdir()) / "skate-bench-report",
        help="where the two games are played once and kept",
    )
    ap.add_argument("--run", type=Path, default=None, help="report on this run instead of the default game")
    ap.add_argument("--repeat", type=int, default=3, help="warm calls per measure (median)")
    ap.add_argument("--cold", type=int, default=2, help="fresh processes per cold measure (median)")
    ap.add_argument("--no-parts", action="store_true", help="leave out the per-part table")
    ap.add_argument("--child-cold", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_cold is not None:
        return child_cold(args.child_cold)

    import skate.report

    runs = {
        "default": args.run or play(args.games / "default", GAMES["default"]),
        "sweep job": play(args.games / "sweep-job", GAMES["sweep job"]),
    }
    print(
        f"python {platform.python_version()}, {os.cpu_count()} cores, skate from "
        f"{Path(skate.report.__file__).resolve().parents[1]}, load average {os.getloadavg()[0]:.2f}\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        print("| run | tasks | cold: imports s | cold: first build s | warm build s |")
        print("|---|---:|---:|---:|---:|")
        for name, run in runs.items():
            c = cold(run, args.cold, scratch / name)
            from skate.report import build_report
            from skate.report.data import load_run

            folder = copy_run(run, scratch / name / "warm")
            build_report(folder)  # warms imports and caches
            warm = cpu(lambda folder=folder: build_report(folder), args.repeat)[0]
            print(
                f"| {name} | {len(load_run(run).tasks)} | {c['imports']:.2f} | {c['build']:.2f} | {warm:.2f} |",
                flush=True,
            )
        print(f"\ncold process loaded: {', '.join(c['loaded'])}")
        print(
            f"sweep page (2 sweep-job-sized jobs, their reports written): "
            f"{sweep_page([runs['sweep job']] * 2, args.repeat, scratch):.2f} s"
        )
        if not args.no_parts:
            for name, run in runs.items():
                print(f"\n| {name}: part (warm) | CPU s |\n|---|---:|")
                for part, t in parts(run, args.repeat, scratch / name):
                    print(f"| {part} | {t:.3f} |", flush=True)
        print(f"\nload average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

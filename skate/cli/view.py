"""``skate view RUN_DIR [--no-open]``: the game viewer of a run, in the browser.

Writes ``RUN_DIR/viewer/`` (a static page that opens from ``file://``, no server: every task, its
answers and the replies behind them, every rejected attempt with its reason and what its setter
was shown, a page per player; see :mod:`skate.report.viewer`) and opens it in the browser when run
from a terminal. Nothing else in the folder is changed. ``skate report`` writes the viewer too.
Exit status: 0 done, 2 bad input.
"""

from __future__ import annotations

import argparse
import sys
import webbrowser
from pathlib import Path

from skate.report.viewer import ViewerError, build_viewer


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="skate view", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("run_dir", type=Path, help="a run folder (the one that holds its events.jsonl)")
    ap.add_argument("--no-open", action="store_true", help="write the viewer, do not open a browser")
    args = ap.parse_args(argv)
    run_dir = args.run_dir
    if not run_dir.is_dir():
        print(
            f"skate view: {run_dir} is not a folder: give a run folder (the one that holds events.jsonl)",
            file=sys.stderr,
        )
        return 2
    if not (run_dir / "events.jsonl").exists() and any(
        (p / "events.jsonl").exists() for p in run_dir.iterdir() if p.is_dir()
    ):
        print(
            f"skate view: {run_dir} is a sweep's folder: give one of its jobs (skate report {run_dir} writes "
            "a page that links each job's viewer)",
            file=sys.stderr,
        )
        return 2
    try:
        page, notes = build_viewer(run_dir)
    except ViewerError as exc:
        print(f"skate view: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"skate view: cannot write {run_dir / 'viewer'}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    for note in notes:
        print(f"note: {note}")
    print(f"viewer: {page}")
    if not args.no_open and sys.stdout.isatty():
        webbrowser.open(page.as_uri())
    return 0

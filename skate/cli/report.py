"""``skate report RUN_DIR [--benchmarks FILE]``: plots, exports and an HTML page.

RUN_DIR is a game's folder, or a sweep's folder (then every job is reported and one page
compares them). Only the event log is read: no model call. Exit status: 0 done, 2 bad input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from skate.report import ReportError, build_report, build_sweep_report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="skate report", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("run_dir", type=Path, help="a run folder, or a sweep folder")
    ap.add_argument(
        "--benchmarks",
        type=Path,
        help="CSV of external benchmark scores: a 'player' column and one column per benchmark",
    )
    args = ap.parse_args(argv)
    if args.benchmarks is not None and not args.benchmarks.exists():
        print(f"skate.report: no benchmark table at {args.benchmarks}", file=sys.stderr)
        return 2
    if not args.run_dir.is_dir():
        print(
            f"skate.report: {args.run_dir} is not a folder: give a run folder (with events.jsonl) or a sweep folder",
            file=sys.stderr,
        )
        return 2
    try:
        if (args.run_dir / "events.jsonl").exists():
            page = build_report(args.run_dir, args.benchmarks)
        else:
            page = build_sweep_report(args.run_dir, args.benchmarks)
    except (ReportError, FileNotFoundError) as exc:
        print(f"skate.report: {exc}", file=sys.stderr)
        return 2
    print(f"report: {page}")
    return 0

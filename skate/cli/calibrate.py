"""``skate calibrate``: an embedder's uniqueness threshold from labelled near-duplicate and
distinct pairs (what it measures and writes: :mod:`skate.tools.calibrate`)."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from typing import Any

from skate.cli.compose import edits_of
from skate.errors import ConfigError
from skate.runlog.events import RunLogError
from skate.runlog.records import StopRun
from skate.tools.calibrate import Calibration, calibrate, table


def arg_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="skate calibrate",
        description="Measure each embedder's distances between near-duplicate and distinct "
        "tasks, and the uniqueness threshold at a false-rejection rate.",
    )
    ap.add_argument(
        "--embedders",
        nargs="+",
        default=["hashing"],
        metavar="NAME",
        help="embedder configs (conf/embedder/NAME.yaml): hashing, minilm, openai (default: hashing)",
    )
    ap.add_argument(
        "--frr",
        type=float,
        default=0.05,
        help="false-rejection rate: share of distinct pairs the threshold may reject (default 0.05)",
    )
    ap.add_argument("--programs", type=int, default=200, help="CRUXEval programs sampled (default 200; 800 = all)")
    ap.add_argument("--distinct", type=int, default=2000, help="distinct CRUXEval pairs (default 2000)")
    ap.add_argument(
        "--runs", nargs="*", default=[], metavar="RUN_DIR", help="finished runs whose tasks give more distinct pairs"
    )
    ap.add_argument(
        "--run-pairs", type=int, default=500, help="distinct pairs drawn from the runs' tasks (default 500)"
    )
    ap.add_argument("--data", default=None, help="CRUXEval JSON lines (default: the copy shipped with skate)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--set",
        nargs="*",
        default=[],
        metavar="EMBEDDER.KEY=VALUE",
        help="embedder settings, e.g. openai.api_base=http://127.0.0.1:8000/v1 openai.model=openai/emb",
    )
    ap.add_argument("--out", default="calibration", help="output folder (default ./calibration)")
    return ap


def embedder_values(sets: list[str]) -> dict[str, dict[str, Any]]:
    """``--set EMBEDDER.KEY=VALUE ...`` as each embedder's values, ``{"openai": {"api_base": ...}}``
    (each value read by Hydra's override parser, as on any command line)."""
    values: dict[str, dict[str, Any]] = {}
    try:
        edits = edits_of(sets)
    except ConfigError:
        raise ConfigError(
            f"--set {' '.join(sets)!r}: write EMBEDDER.KEY=VALUE, e.g. openai.api_base=http://127.0.0.1:8000/v1"
        ) from None
    for key, value in edits.items():
        target, _, rest = key.partition(".")
        if not rest:
            raise ConfigError(f"--set {key}: write EMBEDDER.KEY=VALUE, e.g. openai.api_base=http://127.0.0.1:8000/v1")
        values.setdefault(target, {})[rest] = value
    return values


def main(argv: Sequence[str] | None = None) -> int:
    ap = arg_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = ap.parse_args(argv)
    if not 0.0 <= args.frr < 1.0:
        ap.error(f"--frr {args.frr}: give a rate in [0, 1), e.g. 0.05")
    if args.programs < 2 or args.distinct < 1:
        ap.error("--programs must be >= 2 and --distinct >= 1")
    try:
        results = calibrate(
            Calibration(
                embedders=args.embedders,
                frr=args.frr,
                programs=args.programs,
                distinct=args.distinct,
                runs=args.runs,
                run_pairs=args.run_pairs,
                data=args.data,
                seed=args.seed,
                values=embedder_values(args.set),
                out=args.out,
                command=shlex.join(["skate", "calibrate", *argv]),
            )
        )
    except (ConfigError, RunLogError, StopRun, ValueError, OSError) as exc:
        print(f"skate calibrate: {exc}", file=sys.stderr)
        return 2
    print(table(results))
    print(f"\nplots, CSV and calibration.json in {args.out}")
    return 0

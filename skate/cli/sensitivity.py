"""``skate sensitivity RUN_DIR``: how much a measured p(correct) hangs on which wrong options are
shown, and in which order (SKATE Fig. 6); the probe is :mod:`skate.tools.sensitivity`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from skate.cli.compose import edits_of
from skate.report import build_report
from skate.tools import sensitivity
from skate.tools.sensitivity import SENSITIVITY_FILE, SensitivityError, log_probe, run_probe, spread


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="skate sensitivity", description=sensitivity.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("run_dir", type=Path, help="a finished game's folder (a multiple-choice game: cop, scp)")
    ap.add_argument("--players", nargs="+", help="probe only these players (default: every player)")
    ap.add_argument("--tasks", type=int, default=10, help="tasks drawn at random from the run (default 10)")
    ap.add_argument("--task-ids", nargs="+", help="probe these tasks instead")
    ap.add_argument("--sets", type=int, default=10, help="option sets per task (default 10)")
    ap.add_argument("--orders", type=int, default=10, help="orders of one option set per task (default 10)")
    ap.add_argument("--samples", type=int, default=10, help="answers per variant (default 10)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--wandb",
        nargs="?",
        const="run",
        choices=("run", "offline", "online"),
        help="also log the figure and table to W&B (the run's W&B settings, or this mode)",
    )
    ap.add_argument(
        "--set",
        dest="overrides",
        nargs="+",
        metavar="KEY=VALUE",
        help="change the run's config for the probe, e.g. llm.budget_usd=2",
    )
    args = ap.parse_args(argv)
    try:
        table = run_probe(
            args.run_dir,
            args.players,
            args.tasks,
            args.sets,
            args.orders,
            args.samples,
            args.seed,
            args.task_ids,
            edits_of(args.overrides or []),
        )
    except (SensitivityError, ValueError) as exc:  # ConfigError is a ValueError
        print(f"skate.sensitivity: {exc}", file=sys.stderr)
        return 2
    print(spread(table).to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    print(f"\nsaved {args.run_dir / SENSITIVITY_FILE}")
    print(f"report: {build_report(args.run_dir)}")
    if args.wandb:  # a W&B run of its own beside the game's, with the figure and the table
        if log_probe(args.run_dir, args.wandb):
            print(f"W&B: {args.run_dir / 'wandb'}")
        else:
            print("W&B: not logged (the run's logger is not W&B)")
    return 0

"""Wall time of the default game (6 simulated players, the game's own rounds) and what it did.

Usage:
    python bench/bench_game.py [--seeds 0 1 2] [--rounds N] [override ...]
    python bench/bench_game.py game=mathquiz
    python bench/bench_game.py game=pyjail

Runs the composed default config (plus any Hydra overrides) in temporary folders, one game per
seed, and prints a Markdown table: wall time, valid tasks, attempts, answer samples, rating
updates, sandbox executions per second of the game, Kendall's tau between the ranking and the true skills, how many pairs the ranking
swaps (and whether each swap is of neighbours in the true order), and whether the ranking
equals the true-skill order. Paste results into docs/benchmarks/games.md (SCP: docs/benchmarks/scp.md)
together with the command.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

from scipy.stats import kendalltau

from skate.cli.compose import compose_config
from skate.runner import run_game
from skate.settings.options import build_settings


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--rounds", type=int, default=None, help="game.rounds (default: the game's own)")
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, overrides: {args.overrides or 'none'}\n")
    print(
        "| seed | wall s | tasks | attempts | samples | updates | executions/s | Kendall τ | swapped pairs "
        "| exact order |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|")
    for seed in args.seeds:
        rounds = [f"game.rounds={args.rounds}"] if args.rounds else []
        cfg = compose_config([f"seed={seed}", *rounds, "logger=none", *args.overrides])
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            result = run_game(build_settings(cfg), Path(tmp))
            wall = time.perf_counter() - t0
        rows = result.table
        truth = [r["player"] for r in sorted(rows, key=lambda r: -r["true_skill"])]
        ranked = [r["player"] for r in rows]
        tau = kendalltau([r["score"] for r in rows], [r["true_skill"] for r in rows]).statistic
        swapped = [(a, b) for i, a in enumerate(truth) for b in truth[i + 1 :] if ranked.index(a) > ranked.index(b)]
        adjacent = all(truth.index(b) == truth.index(a) + 1 for a, b in swapped)
        s = result.summary
        rate = s.sandbox_executions / wall
        print(
            f"| {seed} | {wall:.1f} | {s.tasks} | {s.attempts} | {s.samples} | {s.updates} | {rate:.1f} | "
            f"{tau:.3f} | {len(swapped)}{' (adjacent)' if swapped and adjacent else ''} | "
            f"{'yes' if ranked == truth else 'no'} |",
            flush=True,
        )


if __name__ == "__main__":
    main()

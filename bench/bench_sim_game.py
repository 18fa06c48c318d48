"""CPU time of a simulated game in-process: the default game (COP) and mathquiz, at one seed.

Usage:
    .venv/bin/python bench/bench_sim_game.py [--seed 0] [--repeats 3] [--games cop mathquiz]

Each game is played once to warm up (imports, caches of the process), then ``--repeats`` times;
the CPU time (``time.process_time``: this process, every thread) of each play is printed with
the best of them, and a digest of the run's events (all but ``run_start``, without timestamps or
elapsed times) so that two versions of the code can be shown to play the same game. The logger
is off and no report is written. Caches that outlive a run (``code_difficulty``'s and
``normalize_number``'s, when they have one) are emptied before each play, so that each costs
what a new process's first game would; with ``--keep-caches`` they are not (a process that plays
the same game again, as tests do). Paste results into BENCHMARKS.md with the command.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import skate
from skate.answers import exact
from skate.games.cop.difficulty import code_difficulty
from skate.runlog.files import read_events
from skate.runner import run_game
from skate.settings.config import SkateConfig


def digest(run_dir: Path) -> str:
    """SHA-256 (first 12 hex digits) over the events but ``run_start``, without what varies by run."""
    h = hashlib.sha256()
    for e in read_events(run_dir):
        if e["event"] == "run_start":
            continue
        e = {k: v for k, v in e.items() if k != "ts"}
        if e["event"] == "run_end":
            e["summary"] = {k: v for k, v in e["summary"].items() if k != "elapsed_s"}
        h.update(json.dumps(e, sort_keys=True).encode())
    return h.hexdigest()[:12]


def settings(game: str, seed: int) -> SkateConfig:
    """The game's settings: its default cohort at ``seed``, no logger, no report."""
    return skate.config(values={"seed": seed, "report": False}, game=game, logger="none")


def play(settings: SkateConfig, root: Path, n: int, keep_caches: bool) -> tuple[float, str]:
    out = root / f"run{n}"
    if not keep_caches:
        for cached in (code_difficulty, getattr(exact, "_normalized", None)):
            if hasattr(cached, "cache_clear"):
                cached.cache_clear()
    c0 = time.process_time()
    run_game(settings, out)
    return time.process_time() - c0, digest(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--games", nargs="+", default=["cop", "mathquiz"], choices=["cop", "mathquiz"])
    ap.add_argument("--keep-caches", action="store_true", help="do not empty caches between plays")
    args = ap.parse_args()
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, seed {args.seed}")
    with tempfile.TemporaryDirectory() as tmp:
        n = 0
        for game in args.games:
            made = settings(game, args.seed)
            play(made, Path(tmp), n := n + 1, args.keep_caches)  # warm-up
            cpu, digests = [], set()
            for _ in range(args.repeats):
                t, d = play(made, Path(tmp), n := n + 1, args.keep_caches)
                cpu.append(t)
                digests.add(d)
            runs = ", ".join(f"{t:.2f}" for t in cpu)
            print(f"{game}: CPU best {min(cpu):.2f} s (runs {runs}); events {', '.join(sorted(digests))}")


if __name__ == "__main__":
    main()

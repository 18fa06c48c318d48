"""What ``compose_config`` costs: the first compose of a set of group choices (Hydra's own compose),
then N calls that only change values (the fast path: the cached config, overrides applied to a
copy), as tests and tools call it. CPU time is reported beside wall time: on a shared machine it
is the steadier of the two.

    .venv/bin/python bench/bench_compose.py [--calls 200]
"""

from __future__ import annotations

import argparse
import statistics
import time

from skate.settings.config import compose_config


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    t0 = time.perf_counter()
    compose_config(["game=mathquiz"])
    first = time.perf_counter() - t0
    runs, cpu = [], []
    for _r in range(args.repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        for i in range(args.calls):
            cfg = compose_config(["game=mathquiz", f"seed={i}", f"game.rounds={i % 7 + 1}",
                                  "players.simulated.0.skill=0.3", "rating.mu=20"])
        runs.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        assert cfg.seed == args.calls - 1 and cfg.game.rounds == (args.calls - 1) % 7 + 1
    print(f"first compose (Hydra): {first * 1000:.0f} ms")
    print(f"{args.calls} calls with 4 value overrides: median {statistics.median(runs) * 1000:.0f} ms "
          f"(min {min(runs) * 1000:.0f}, max {max(runs) * 1000:.0f}; {args.repeats} repeats), "
          f"{statistics.median(runs) / args.calls * 1000:.2f} ms a call; CPU time median "
          f"{statistics.median(cpu) * 1000:.0f} ms (min {min(cpu) * 1000:.0f})")


if __name__ == "__main__":
    main()

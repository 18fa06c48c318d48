"""Bradley–Terry with bootstrap intervals at scale: 50 players, ~100,000 pairwise outcomes.

Outcomes come from a known Bradley–Terry model (skills evenly spread over [-2, 2], 10% draws),
in tasks of 20 players each (190 outcomes per task); the table is fitted once on all of them
and refitted on ``--bootstrap`` resamples of whole tasks.

    .venv/bin/python bench/bench_bt.py                      # 1000 resamples
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skate.ratings.bradley_terry import BradleyTerryRating
from skate.ratings.outcomes import PairOutcome


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--players", type=int, default=50)
    ap.add_argument("--outcomes", type=int, default=100_000)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    names = [f"p{i:02d}" for i in range(args.players)]
    skill = np.linspace(-2, 2, args.players)
    outcomes, t = [], 0
    while len(outcomes) < args.outcomes:
        t += 1
        seat = rng.choice(args.players, size=20, replace=False)
        for i in range(len(seat)):
            for j in range(i + 1, len(seat)):
                a, b = seat[i], seat[j]
                r = 0.5 if rng.random() < 0.1 else float(rng.random() < 1 / (1 + np.exp(skill[b] - skill[a])))
                outcomes.append(PairOutcome(f"t{t}", names[a], names[b], 0.0, 0.0, r))
    times = []
    for _ in range(args.repeats):
        bt = BradleyTerryRating(bootstrap=args.bootstrap, seed=1)
        bt.add_players(names)
        for o in outcomes:
            bt.games[o.a] += 1
            bt.games[o.b] += 1
            bt.history.append(o)
        start = time.perf_counter()
        rows = bt.table()
        times.append(time.perf_counter() - start)
    scores = {r.player: r.score for r in rows}
    tau = kendalltau([scores[n] for n in names], skill).statistic
    width = np.mean([r.hi - r.lo for r in rows])
    print(
        f"{args.players} players, {len(outcomes)} outcomes in {t} tasks, {args.bootstrap} task resamples, "
        f"{os.cpu_count()} cores"
    )
    print(
        f"table (fit + bootstrap): best {min(times):.2f} s, median {np.median(times):.2f} s over {args.repeats}; "
        f"Kendall tau to the true skills {tau:.3f}; mean 95% interval width {width:.3f}"
    )


if __name__ == "__main__":
    main()

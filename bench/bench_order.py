"""Order dependence: TrueSkill ranks over shuffles of the same outcomes, and Bradley–Terry.

Takes the outcomes of a played game (a stored run, or plays the default game), shuffles their
order 20 times, and reports each player's spread of TrueSkill ranks: one ordering per shuffle,
then averaged over K orderings (``rating.orderings``) per shuffle. Also reports how often each
agrees with the Bradley–Terry ranking (which does not depend on order) and with the true skills.

    .venv/bin/python bench/bench_order.py                    # plays the default game, 20 rounds
    .venv/bin/python bench/bench_order.py RUN_DIR --shuffles 20 --k 20
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import skate  # noqa: E402
from skate.players.config import SimPlayerConfig  # noqa: E402
from skate.ratings.bradley_terry import BradleyTerryRating  # noqa: E402
from skate.ratings.trueskill_backend import TrueSkillRating  # noqa: E402
from skate.runlog.events import read_run  # noqa: E402
from skate.runner import run_game  # noqa: E402

# The close cohort: six players two points of skill apart.
CLOSE = [
    SimPlayerConfig(name="c1", skill=0.66),
    SimPlayerConfig(name="c2", skill=0.64),
    SimPlayerConfig(name="c3", skill=0.62),
    SimPlayerConfig(name="c4", skill=0.60),
    SimPlayerConfig(name="c5", skill=0.58),
    SimPlayerConfig(name="c6", skill=0.56),
]


def ranks(backend, players, tasks) -> dict[str, int]:
    backend.add_players(players)
    for t, p in tasks:
        backend.update(t, p)
    return {r.player: r.rank for r in backend.table()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", nargs="?", type=Path)
    ap.add_argument("--shuffles", type=int, default=20)
    ap.add_argument("--k", type=int, default=20, help="orderings averaged per shuffle")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--cohort", choices=["default", "close"], default="default")
    args = ap.parse_args()
    run_dir = args.run_dir
    if run_dir is None:
        values = {"game.rounds": args.rounds, **({"players.simulated": CLOSE} if args.cohort == "close" else {})}
        settings = skate.config(values=values, logger="none")
        run_dir = Path(tempfile.mkdtemp(prefix="bench-order-"))
        run_game(settings, run_dir)
    run = read_run(run_dir)
    players, tasks, truth = run.players, run.rated_scores(), run.true_skill
    true_rank = {n: i + 1 for i, n in enumerate(sorted(players, key=lambda n: -(truth[n] or 0)))}
    bt = ranks(BradleyTerryRating(bootstrap=200), players, tasks)
    rng = np.random.default_rng(0)
    single, averaged = [], []
    for s in range(args.shuffles):
        order = [tasks[i] for i in rng.permutation(len(tasks))]
        # one shuffle: outcomes in a new task order, then TrueSkill once, and averaged over K orderings
        single.append(ranks(TrueSkillRating(), players, order))
        averaged.append(ranks(TrueSkillRating(orderings=args.k, seed=s), players, order))
    print(f"{len(tasks)} tasks, {len(players)} players, {args.shuffles} shuffles, K={args.k}\n")
    print(
        "| player | true rank | BT rank (interval rule) | TrueSkill ranks, one ordering (min–max, sd) | TrueSkill ranks, mean of K orderings (min–max, sd) |"
    )
    print("|---|---:|---:|---|---|")
    for n in sorted(players, key=lambda n: true_rank[n]):
        a = [r[n] for r in single]
        b = [r[n] for r in averaged]
        print(
            f"| {n} | {true_rank[n]} | {bt[n]} | {min(a)}–{max(a)}, {np.std(a):.2f} | {min(b)}–{max(b)}, {np.std(b):.2f} |"
        )

    def agree(rs):
        exact_true = np.mean([all(r[n] == true_rank[n] for n in players) for r in rs])
        tau_bt = np.mean([kendalltau([r[n] for n in players], [bt[n] for n in players]).statistic for r in rs])
        return exact_true, tau_bt

    for label, rs in (("one ordering", single), (f"mean of {args.k} orderings", averaged)):
        e, t = agree(rs)
        print(f"\nTrueSkill, {label}: exact true order in {e:.0%} of shuffles; mean Kendall tau to BT {t:.3f}")


if __name__ == "__main__":
    main()

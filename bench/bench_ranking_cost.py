"""The cost of a correct ranking: answer samples spent versus Kendall τ to the true skill order.

For each simulated cohort (one well separated, one close), estimator and seed, plays one game;
then, after every task, rates the tasks so far with each backend and records the cumulative
answer samples and Kendall τ between the ranking and the true skills. Per (estimator, backend)
it reports the mean samples at the first task count from which the mean τ over seeds stays
≥ 0.9, and the
ratio to the paper-faithful configuration (Algorithm 1 + TrueSkill, relative rule).

    .venv/bin/python bench/bench_ranking_cost.py                   # 2 cohorts x 4 seeds x 20 rounds
    .venv/bin/python bench/bench_ranking_cost.py --seeds 0 1 --rounds 12
    .venv/bin/python bench/bench_ranking_cost.py --draws          # TrueSkill draw_probability 0.10 vs auto

``--draws`` compares TrueSkill's draw probability fixed at 0.10 with ``auto`` (the observed draw
rate) under both outcome rules, on the same games, and prints the share of outcomes drawn.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skate.config import compose_config  # noqa: E402
from skate.ratings.bradley_terry import BradleyTerryRating  # noqa: E402
from skate.ratings.elo import EloRating  # noqa: E402
from skate.ratings.trueskill_backend import TrueSkillRating  # noqa: E402
from skate.runner import run_game  # noqa: E402
from skate.events import Estimated, read_run  # noqa: E402

COHORTS = {
    "separated": [],  # the default cohort: skills 0.90 ... 0.30
    "close": ["players.simulated=[{name: c1, skill: 0.66}, {name: c2, skill: 0.64}, {name: c3, skill: 0.62},"
              " {name: c4, skill: 0.60}, {name: c5, skill: 0.58}, {name: c6, skill: 0.56}]"],
}
ESTIMATORS = {
    "algorithm1": ["estimator=algorithm1"],
    "fixed_n10": ["estimator=fixed_n", "estimator.n=10"],
    "decided": ["estimator=decided"],
    "decided_strict": ["estimator=decided", "estimator.confidence=0.95", "estimator.max_samples=200"],
}
BACKENDS = {
    "trueskill_rel": lambda: TrueSkillRating(outcome="relative"),
    "trueskill_abs": lambda: TrueSkillRating(outcome="absolute"),
    "bt_rel": lambda: BradleyTerryRating(outcome="relative", bootstrap=1),
    "elo_rel": lambda: EloRating(outcome="relative"),
}
DRAW_BACKENDS = {
    "trueskill_rel_0.10": lambda: TrueSkillRating(outcome="relative", draw_probability=0.10),
    "trueskill_rel_auto": lambda: TrueSkillRating(outcome="relative", draw_probability="auto"),
    "trueskill_abs_0.10": lambda: TrueSkillRating(outcome="absolute", draw_probability=0.10),
    "trueskill_abs_auto": lambda: TrueSkillRating(outcome="absolute", draw_probability="auto"),
}
TARGET = 0.9


def load_game(run_dir: Path) -> tuple[list[str], list, list[float], dict[str, int]]:
    """Players, each task's p(correct), the true skills, and the samples spent per task."""
    run = read_run(run_dir)
    players, tasks = run.players, run.rated_scores()
    truth = [run.true_skill[n] for n in players]
    samples_of: dict[str, int] = {}
    for e in run.of(Estimated):
        samples_of[e.task_id] = samples_of.get(e.task_id, 0) + e.n
    return players, tasks, truth, samples_of


def trajectory(game, make) -> list[tuple[int, float]]:
    """(cumulative samples, τ) after each task, in the order the game produced them."""
    players, tasks, truth, samples_of = game
    backend = make()
    backend.add_players(players)
    out, spent = [], 0
    for t, p in tasks:
        backend.update(t, p)
        spent += samples_of.get(t, 0)
        scores = {row.player: row.score for row in backend.table()}
        tau = kendalltau([scores[n] if scores[n] is not None else -1e9 for n in players], truth).statistic
        out.append((spent, float(tau) if tau == tau else 0.0))
    return out


def draw_share(game, rule: str) -> tuple[int, int]:
    """(outcomes drawn, outcomes) of a game's tasks under one outcome rule."""
    players, tasks, _, _ = game
    backend = TrueSkillRating(outcome=rule)
    backend.add_players(players)
    for t, p in tasks:
        backend.update(t, p)
    return backend.draws, backend.n_updates


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--draws", action="store_true", help="TrueSkill draw_probability 0.10 vs auto")
    args = ap.parse_args()
    backends = DRAW_BACKENDS if args.draws else BACKENDS
    base_backend = "trueskill_rel_0.10" if args.draws else "trueskill_rel"
    t0 = time.perf_counter()
    draws: dict[tuple[str, str], list[int]] = {}
    results: dict[tuple[str, str, str], list[list[tuple[int, float]]]] = {}
    for cohort, c_over in COHORTS.items():
        for est, e_over in ESTIMATORS.items():
            for seed in args.seeds:
                cfg = compose_config([f"game.rounds={args.rounds}", "logger=none", f"seed={seed}", *c_over, *e_over])
                out = Path(tempfile.mkdtemp(prefix="bench-cost-"))
                run_game(cfg, out)
                game = load_game(out)  # read once; every backend rates the same games
                for backend, make in backends.items():
                    results.setdefault((cohort, est, backend), []).append(trajectory(game, make))
                if args.draws:
                    for rule in ("relative", "absolute"):
                        d, n = draw_share(game, rule)
                        tally = draws.setdefault((cohort, rule), [0, 0])
                        tally[0], tally[1] = tally[0] + d, tally[1] + n
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, seeds {args.seeds}, "
          f"{args.rounds} rounds, {time.perf_counter() - t0:.0f} s\n")
    if args.draws:
        print("| cohort | outcome rule | outcomes drawn (all estimators and seeds) |\n|---|---|---:|")
        for (cohort, rule), (d, n) in draws.items():
            print(f"| {cohort} | {rule} | {d / max(n, 1):.1%} of {n} |")
        print()
    for cohort in COHORTS:
        base = None
        rows = []
        for est in ESTIMATORS:
            for backend in backends:
                trajs = results[(cohort, est, backend)]
                n_rounds = min(len(t) for t in trajs)
                mean_tau = [np.mean([t[r][1] for t in trajs]) for r in range(n_rounds)]
                mean_spent = [np.mean([t[r][0] for t in trajs]) for r in range(n_rounds)]
                # the first point from which the mean τ stays at or above the target
                hit = next((r for r in range(n_rounds) if all(x >= TARGET for x in mean_tau[r:])), None)
                cost = mean_spent[hit] if hit is not None else None
                if (est, backend) == ("algorithm1", base_backend):
                    base = cost
                rows.append((est, backend, cost, hit, mean_tau[-1], mean_spent[-1], float(np.mean(mean_tau))))
        print(f"### cohort: {cohort}\n")
        # --draws: also τ averaged over every task of the game (how good the ranking is throughout)
        extra_head, extra_rule = (" mean τ, all tasks |", "---:|") if args.draws else ("", "")
        print("| estimator | backend | samples until mean τ stays ≥ 0.9 | tasks needed | ratio to Alg. 1 + TrueSkill rel. "
              f"| final τ | samples, all rounds |{extra_head}")
        print(f"|---|---|---:|---:|---:|---:|---:|{extra_rule}")
        for est, backend, cost, hit, final_tau, total, avg_tau in rows:
            ratio = f"{cost / base:.2f}" if cost is not None and base else "–"
            extra = f" {avg_tau:.3f} |" if args.draws else ""
            print(f"| {est} | {backend} | {cost:.0f} | {hit + 1} | {ratio} | {final_tau:.2f} | {total:.0f} |{extra}"
                  if cost is not None else
                  f"| {est} | {backend} | not reached | – | – | {final_tau:.2f} | {total:.0f} |{extra}")
        print()


if __name__ == "__main__":
    main()

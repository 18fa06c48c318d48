"""The cost of a correct ranking: model calls spent versus Kendall τ to the true skill order.

A model call is one answer sample or one setter attempt (what a hosted model bills); void
samples count too. For each simulated cohort, configuration and seed this plays one game; then,
after every task, it rates the tasks so far with each backend the configuration names and
records the calls so far and Kendall τ between the ranking and the true skills (the attempts of
a round are charged before its first task is answered). Per (configuration, backend) it reports
the mean calls at the first task from which the mean τ over seeds stays ≥ 0.9 to the end of the
game, and the ratio to a baseline. A game that stopped early keeps its last ranking and its
calls from then on, so it is charged what it spent.

    .venv/bin/python bench/bench_ranking_cost.py                    # every cohort and configuration, seeds 0-7 (≈ 40 min)
    .venv/bin/python bench/bench_ranking_cost.py --cohorts close --configs paper fewer_calls --seeds 0 1
    .venv/bin/python bench/bench_ranking_cost.py --draws           # TrueSkill draw_probability 0.10 vs auto

Cohorts (COP, the default game):

- ``separated``: the default six players, skills 0.90 … 0.30.
- ``close``: six players at 0.66, 0.64, … 0.56.
- ``misspecified``: answers off the logistic rule the item-response model assumes. Two players
  swap order between kinds of program (x-a is 0.12 better at half of COP's kinds and 0.12 worse at
  the other half, x-b the other way round; the true order is their mean skill over the kinds),
  two answer sloppily (they get wrong 10% of the samples they know), one has blind spots three
  times as wide as the others', and three set tasks sloppily (40% of attempts carry a defect).

Configurations (each plays its own games; the backends listed rate them afterwards, ``live``
being the game's own rating as configured):

- ``paper``: Algorithm 1, rated by TrueSkill (relative rule: the paper's configuration),
  Bradley–Terry, TrueSkill Through Time and the item-response model (``irt``, curvature intervals);
- ``fixed_n10`` (10 samples a player and task) and ``decided`` (skate's earlier estimator), the
  cheapest configurations before ``fewer_calls``;
- ``fewer_calls``: ``experiment=fewer_calls`` as shipped (its own ``game.rounds`` cap);
- ``fewer_calls_1``, ``fewer_calls_2``: the same with one (two) samples for each player asked and
  no top-up; ``--configs`` names further variants (``fewer_calls_4``, ``fewer_calls_6``,
  ``fewer_calls_3to9``, ``fixed_n4``).

``--draws`` compares TrueSkill's draw probability fixed at 0.10 with ``auto`` (the observed draw
rate) under both outcome rules, on the same games, and prints the share of outcomes drawn.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import kendalltau

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import skate  # noqa: E402
from skate.players.config import SimPlayerConfig as Sim  # noqa: E402
from skate.ratings.bradley_terry import BradleyTerryRating  # noqa: E402
from skate.ratings.config import RatingConfig  # noqa: E402
from skate.ratings.elo import EloRating  # noqa: E402
from skate.ratings.irt import IRTRating  # noqa: E402
from skate.ratings.trueskill_backend import TrueSkillRating  # noqa: E402
from skate.ratings.ttt import TrueSkillThroughTimeRating  # noqa: E402
from skate.runlog.events import AttemptMade, Estimated, RatedTask, read_run  # noqa: E402
from skate.runner import run_game  # noqa: E402

_HALF = ("arithmetic", "strings", "slicing", "dicts", "recursion", "closures")
_OTHER = ("sorting", "bitwise", "generators", "exceptions", "classes", "comprehensions")


def _swap(up: tuple[str, ...], down: tuple[str, ...], by: float) -> dict[str, float]:
    return {**{k: by for k in up}, **{k: -by for k in down}}


# Each cohort's settings (values): the default cohort's are the game's own.
COHORTS: dict[str, dict[str, Any]] = {
    "separated": {},  # the default cohort: skills 0.90 ... 0.30
    "close": {
        "players.simulated": [
            Sim(name="c1", skill=0.66),
            Sim(name="c2", skill=0.64),
            Sim(name="c3", skill=0.62),
            Sim(name="c4", skill=0.60),
            Sim(name="c5", skill=0.58),
            Sim(name="c6", skill=0.56),
        ]
    },
    "misspecified": {
        "players.simulated": [
            Sim(name="x-ace", skill=0.88, pitch=-0.2, slip=0.1, sloppiness=0.4),
            Sim(name="x-a", skill=0.74, pitch=-0.1, topic_skill=_swap(_HALF, _OTHER, 0.12)),
            Sim(name="x-b", skill=0.66, pitch=-0.05, topic_skill=_swap(_OTHER, _HALF, 0.12)),
            Sim(name="x-erratic", skill=0.56, noise=0.24, sloppiness=0.4),
            Sim(name="x-weak", skill=0.46, pitch=0.1, slip=0.1),
            Sim(name="x-novice", skill=0.34, pitch=0.2, sloppiness=0.4),
        ]
    },
}

# A live configuration: the group choices and values of the game it plays, and the backends that
# rate its games afterwards ("live" = the game's own rating, as it was configured).
FEWER_CALLS = {"experiment": "fewer_calls"}
CONFIGS: dict[str, tuple[dict[str, str], dict[str, Any], list[str]]] = {
    "paper": ({"estimator": "algorithm1"}, {}, ["trueskill_rel", "bt_rel", "ttt_rel", "irt"]),
    "fixed_n10": ({"estimator": "fixed_n"}, {"estimator.n": 10}, ["trueskill_rel", "bt_rel", "irt"]),
    "decided": ({"estimator": "decided"}, {}, ["trueskill_abs", "bt_rel", "irt"]),
    "fewer_calls": (FEWER_CALLS, {}, ["live"]),
    # the preset with a fixed number of samples for each player asked (no top-up)
    "fewer_calls_1": (FEWER_CALLS, {"estimator.first": 1, "estimator.max_samples": 1}, ["live"]),
    "fewer_calls_2": (FEWER_CALLS, {"estimator.first": 2, "estimator.max_samples": 2}, ["live"]),
    # not in the default list: the other variants tried on the close cohort (--configs NAME ...)
    "fewer_calls_4": (FEWER_CALLS, {"estimator.first": 4, "estimator.max_samples": 4}, ["live"]),
    "fewer_calls_6": (FEWER_CALLS, {"estimator.first": 6, "estimator.max_samples": 6}, ["live"]),
    "fewer_calls_3to9": (
        FEWER_CALLS,
        {"estimator.first": 3, "estimator.step": 3, "estimator.max_samples": 9},
        ["live"],
    ),
    "fixed_n4": ({"estimator": "fixed_n"}, {"estimator.n": 4}, ["bt_rel", "irt"]),
}
DEFAULT_CONFIGS = ["paper", "fixed_n10", "decided", "fewer_calls", "fewer_calls_1", "fewer_calls_2"]
BACKENDS: dict[str, Callable[[], Any]] = {
    "trueskill_rel": lambda: TrueSkillRating(outcome="relative"),
    "trueskill_abs": lambda: TrueSkillRating(outcome="absolute"),
    "bt_rel": lambda: BradleyTerryRating(outcome="relative", bootstrap=1),
    "elo_rel": lambda: EloRating(outcome="relative"),
    "irt": lambda: IRTRating(interval="hessian"),
    "ttt_rel": lambda: TrueSkillThroughTimeRating(outcome="relative"),
}
DRAW_BACKENDS = {
    "trueskill_rel_0.10": lambda: TrueSkillRating(outcome="relative", draw_probability=0.10),
    "trueskill_rel_auto": lambda: TrueSkillRating(outcome="relative", draw_probability="auto"),
    "trueskill_abs_0.10": lambda: TrueSkillRating(outcome="absolute", draw_probability=0.10),
    "trueskill_abs_auto": lambda: TrueSkillRating(outcome="absolute", draw_probability="auto"),
}
TARGET = 0.9
# Backends that refit everything at each table (seconds a fit): rated at the end of each round
# only, the τ of a round's earlier tasks being the last round's.
PER_ROUND = {"ttt_rel"}


def true_order(described: list[dict[str, Any]], kinds: tuple[str, ...]) -> dict[str, float]:
    """Each simulated player's true skill: its base skill plus its mean offset over the game's kinds."""
    return {
        d["name"]: d["true_skill"] + sum((d.get("topic_skill") or {}).get(k, 0.0) for k in kinds) / len(kinds)
        for d in described
    }


def load_game(run_dir: Path) -> dict[str, Any]:
    """Players, the rating stream, the true skills and the calls made up to each rated task."""
    from skate.games import get_game

    run = read_run(run_dir, keep_updates=0)
    stream = [t for t in run.rating_stream() if isinstance(t, RatedTask)]
    truth = true_order(run.start.players, get_game(run.start.game).spec.kinds)
    calls_at: dict[str, int] = {}
    spent = 0
    for e in run.events:
        if isinstance(e, AttemptMade):
            spent += 1
        elif isinstance(e, Estimated):
            spent += e.n + e.void
            calls_at[e.task_id] = spent
    end = run.end
    return {
        "players": run.players,
        "stream": stream,
        "truth": [truth[n] for n in run.players],
        "calls_at": calls_at,
        "total": spent,
        "ended": end.get("ended", "rounds") if end else "unfinished",
    }


def trajectory(game: dict[str, Any], make: Callable[[], Any], per_round: bool = False) -> list[tuple[int, float]]:
    """(calls so far, τ) after each rated task, in the order the game rated them (``per_round``:
    τ from the table at each round's end, earlier tasks of a round keeping the last round's)."""
    players, truth = game["players"], game["truth"]
    backend = make()
    backend.add_players(players)
    out, tau = [], 0.0
    stream = game["stream"]
    for k, t in enumerate(stream):
        t.apply(backend)
        last_of_round = k + 1 == len(stream) or stream[k + 1].task_id[:4] != t.task_id[:4]
        if not per_round or last_of_round:
            scores = {row.player: row.score for row in backend.table()}
            tau = kendalltau([scores[n] if scores[n] is not None else -1e9 for n in players], truth).statistic
            tau = float(tau) if tau == tau else 0.0
        out.append((game["calls_at"].get(t.task_id, 0), tau))
    return out


def live_backend(rating: RatingConfig) -> Callable[[], Any]:
    """A fresh backend of the game's own rating settings (as the run records them)."""
    from skate.ratings.base import rating as ratings  # as skate builds it (skate.ratings.rerate.rate_stream)

    return lambda: ratings.build(rating)


def play(job: tuple[str, str, int, int, tuple[str, ...]]) -> tuple[tuple[str, str, int], dict[str, Any]]:
    """One game; its trajectories for each backend and what it spent."""
    cohort, config, seed, rounds, backends = job
    choices, values, _ = CONFIGS[config]
    settings = skate.config(
        values={**values, "game.rounds": rounds, "report": False, "seed": seed, **COHORTS[cohort]},
        logger="none",
        **choices,
    )
    out = Path(tempfile.mkdtemp(prefix="bench-cost-"))
    try:
        run_game(settings, out)
        game = load_game(out)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    table = {**BACKENDS, **DRAW_BACKENDS}
    trajs = {
        b: trajectory(game, live_backend(settings.rating) if b == "live" else table[b], per_round=b in PER_ROUND)
        for b in backends
    }
    rounds_played = max((t.task_id for t in game["stream"]), default="r000")[1:4]
    return (cohort, config, seed), {
        "trajs": trajs,
        "total": game["total"],
        "ended": game["ended"],
        "rounds": int(rounds_played),
        "draws": draw_share(game),
    }


def draw_share(game: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """(outcomes drawn, outcomes) of a game's tasks under each symmetric outcome rule."""
    out = {}
    for rule in ("relative", "absolute"):
        backend = TrueSkillRating(outcome=rule)
        backend.add_players(game["players"])
        for t in game["stream"]:
            t.apply(backend)
        out[rule] = (backend.draws, backend.n_updates)
    return out


def summarise(runs: list[dict[str, Any]], backend: str) -> dict[str, Any]:
    """Mean calls at the first task from which the seed-mean τ stays ≥ TARGET; final τ; totals."""
    trajs = [r["trajs"][backend] for r in runs]
    length = max(len(t) for t in trajs)
    padded = [t + [t[-1]] * (length - len(t)) for t in trajs]  # a game that stopped keeps its end
    mean_tau = [float(np.mean([t[i][1] for t in padded])) for i in range(length)]
    mean_calls = [float(np.mean([t[i][0] for t in padded])) for i in range(length)]
    hit = next((i for i in range(length) if all(x >= TARGET for x in mean_tau[i:])), None)
    return {
        "cost": mean_calls[hit] if hit is not None else None,
        "tasks": hit + 1 if hit is not None else None,
        "final_tau": mean_tau[-1],
        "min_final_tau": min(t[-1][1] for t in trajs),
        "total": float(np.mean([r["total"] for r in runs])),
        "rounds": float(np.mean([r["rounds"] for r in runs])),
        "settled": sum(r["ended"] == "settled" for r in runs),
        "seeds": len(runs),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=list(range(8)))
    ap.add_argument("--rounds", type=int, default=20, help="game.rounds of every configuration but fewer_calls")
    ap.add_argument(
        "--preset-rounds",
        type=int,
        default=None,
        help="game.rounds of fewer_calls and its variant (default: the preset's own)",
    )
    ap.add_argument("--cohorts", nargs="+", default=list(COHORTS), choices=list(COHORTS))
    ap.add_argument("--configs", nargs="+", default=DEFAULT_CONFIGS, choices=list(CONFIGS))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--draws", action="store_true", help="TrueSkill draw_probability 0.10 vs auto")
    args = ap.parse_args()
    t0 = time.perf_counter()
    jobs = []
    configs = ["paper", "fixed_n10", "decided"] if args.draws else args.configs
    preset_rounds = args.preset_rounds or (
        int(skate.config(**FEWER_CALLS).game.rounds) if any(c.startswith("fewer_calls") for c in configs) else None
    )
    for cohort in args.cohorts:
        for config in configs:
            backends = tuple(DRAW_BACKENDS) if args.draws else tuple(CONFIGS[config][2])
            rounds = preset_rounds if config.startswith("fewer_calls") else args.rounds
            jobs += [(cohort, config, seed, rounds, backends) for seed in args.seeds]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        done = dict(pool.map(play, jobs))
    print(
        f"python {platform.python_version()}, {os.cpu_count()} cores, seeds {args.seeds}, "
        f"{args.rounds} rounds (fewer_calls: its own), {time.perf_counter() - t0:.0f} s\n"
    )
    if args.draws:
        print("| cohort | outcome rule | outcomes drawn (all estimators and seeds) |\n|---|---|---:|")
        for cohort in args.cohorts:
            for rule in ("relative", "absolute"):
                d = sum(r["draws"][rule][0] for (c, _, _), r in done.items() if c == cohort)
                n = sum(r["draws"][rule][1] for (c, _, _), r in done.items() if c == cohort)
                print(f"| {cohort} | {rule} | {d / max(n, 1):.1%} of {n} |")
        print()
    for cohort in args.cohorts:
        rows = []
        for config in ["paper", "fixed_n10", "decided"] if args.draws else args.configs:
            runs = [done[(cohort, config, s)] for s in args.seeds]
            for backend in runs[0]["trajs"]:
                rows.append((config, backend, summarise(runs, backend)))
        base = {(c, b): r for c, b, r in rows}
        paper_ts = base.get(("paper", "trueskill_rel") if not args.draws else ("paper", "trueskill_rel_0.10"))
        paper_bt = base.get(("paper", "bt_rel"))
        print(f"### cohort: {cohort}\n")
        print(
            "| configuration | backend | calls until mean τ stays ≥ 0.9 | tasks | × paper (TrueSkill) "
            "| × paper (Bradley–Terry) | final τ (worst seed) | calls, whole game | rounds played (settled) |"
        )
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for config, backend, r in rows:

            def ratio(b: dict[str, Any] | None) -> str:
                return f"{r['cost'] / b['cost']:.2f}" if r["cost"] is not None and b and b["cost"] else "–"  # noqa: B023 - called within the iteration that defines it

            cost = f"{r['cost']:,.0f}" if r["cost"] is not None else "not reached"
            tasks = r["tasks"] if r["tasks"] is not None else "–"
            print(
                f"| {config} | {backend} | {cost} | {tasks} | {ratio(paper_ts)} | {ratio(paper_bt)} "
                f"| {r['final_tau']:.2f} ({r['min_final_tau']:.2f}) | {r['total']:,.0f} "
                f"| {r['rounds']:.1f} ({r['settled']}/{r['seeds']}) |"
            )
        print()


if __name__ == "__main__":
    main()

"""The standing leaderboard against full replays (issue 36).

``place``: a bank from a game among 20 simulated players (skills 0.92 down to 0.28); then five
newcomers placed one at a time with ``skate leaderboard add`` (spread over the range, and one
with exactly an incumbent's skill). For each: its rank and interval on the board against those
of a full replay (the same game played by the 20 and it), the calls each took (answer samples
plus setter attempts, counted the same way from each run's events), and how far a full refit
after it moves the incumbents (against their interval widths). At the end, the board's Kendall
τ to the true skills against a replay of the game with all 25 players.

    python bench/bench_leaderboard.py place [--games 3] [--rounds 6] [--game mathquiz] [--budget N] [--confidence P]

Numbers go to docs/benchmarks/leaderboard.md.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_load import as_override, spread_players  # noqa: E402


def play(folder: Path, players: list[dict[str, Any]], game: str, rounds: int, seed: int) -> Path:
    from skate.config import compose_config
    from skate.runner import run_game

    run_game(compose_config([f"game={game}", f"game.rounds={rounds}", f"seed={seed}", "logger=none", "report=false",
                             "print_table=false", f"players.simulated={as_override(players)}"]), folder)
    return folder


def run_calls(folder: Path) -> int:
    from skate.leaderboard.place import _run_calls

    return _run_calls(folder)


def tau(scores: dict[str, float], truth: dict[str, float]) -> float:
    from scipy.stats import kendalltau

    names = sorted(scores)
    return float(kendalltau([scores[n] for n in names], [truth[n] for n in names]).statistic)


def place_bench(args: argparse.Namespace) -> None:
    from skate.leaderboard.bank import import_run
    from skate.leaderboard.fit import refit
    from skate.leaderboard.place import add
    from skate.leaderboard.settings import AddSettings
    from skate.leaderboard.store import Store

    incumbents = spread_players(20)
    tied = incumbents[9]
    newcomers = [{"name": "new-a", "skill": 0.85, "pitch": -0.2, "sloppiness": 0.12},
                 {"name": "new-b", "skill": 0.71, "pitch": -0.1, "sloppiness": 0.15},
                 {"name": "new-tie", "skill": tied["skill"], "pitch": tied["pitch"], "sloppiness": tied["sloppiness"]},
                 {"name": "new-c", "skill": 0.45, "pitch": 0.1, "sloppiness": 0.2},
                 {"name": "new-d", "skill": 0.31, "pitch": 0.2, "sloppiness": 0.24}]
    truth = {p["name"]: p["skill"] for p in incumbents + newcomers}
    with tempfile.TemporaryDirectory(prefix="bench-lb-") as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        store = Store.open(tmp / "board.db")
        bank_calls = 0
        for g in range(args.games):
            bank = play(tmp / f"bank-{g}", incumbents, args.game, args.rounds, seed=g)
            import_run(store, bank)
            bank_calls += run_calls(bank)
        refit(store)
        print(f"bank: {args.games} games of {args.game} among 20 players, {args.rounds} rounds each, "
              f"{len(store.tasks())} tasks, {bank_calls} calls, {time.perf_counter() - t0:.0f} s\n")
        print("Ranks are among the 20 incumbents and the newcomer (truth: by true skill; board: the board's "
              "scores; replay: the replay's).\n")
        print("| newcomer | true skill | true rank | board rank | board interval | add calls | replay rank "
              "| replay interval | replay calls | add/replay | refit drift / interval width | the add stopped |")
        print("|---|---:|---:|---:|---|---:|---:|---|---:|---:|---:|---|", flush=True)
        names = {p["name"] for p in incumbents}
        for k, new in enumerate(newcomers):
            spec = f"simulated:{new['skill']}"
            before = {r["model"]: r for r in store.board(args.game)[1]}
            got = add(store, spec, new["name"], AddSettings(budget=args.budget, confidence=args.confidence,
                                                             runs_dir=tmp / "adds", seed=k),
                      overrides=[f"players.simulated.0.pitch={new['pitch']}",
                                 f"players.simulated.0.sloppiness={new['sloppiness']}"])
            row = next(r for r in store.board(args.game)[1] if r["model"] == new["name"])
            # a full refit after it, on a copy: how far do the incumbents move?
            copy = tmp / f"refit-{k}.db"
            store.close()
            shutil.copy(tmp / "board.db", copy)
            store = Store.open(tmp / "board.db")
            with Store.open(copy) as other:
                after = {r["model"]: r for r in refit(other)[args.game]}
            drift = max(abs(after[m]["score"] - before[m]["score"]) / (before[m]["hi"] - before[m]["lo"])
                        for m in before if m in after)
            replay_store = Store.open(tmp / f"replay-{k}.db")
            calls = 0
            for g in range(args.games):
                replay = play(tmp / f"replay-{k}-{g}", [*incumbents, new], args.game, args.rounds, seed=g)
                import_run(replay_store, replay)
                calls += run_calls(replay)
            replayed = {r["model"]: r for r in refit(replay_store)[args.game]}
            replay_store.close()
            rb = replayed[new["name"]]
            board_now = {r["model"]: r["score"] for r in store.board(args.game)[1]}

            def rank(scores: dict[str, float]) -> int:
                return 1 + sum(scores[m] > scores[new["name"]] for m in names)

            true_rank = 1 + sum(truth[m] > new["skill"] for m in names)
            print(f"| {new['name']} | {new['skill']} | {true_rank} | {rank(board_now)} | [{row['lo']:.2f}, {row['hi']:.2f}] "
                  f"| {got.calls} | {rank({m: r['score'] for m, r in replayed.items()})} "
                  f"| [{rb['lo']:.2f}, {rb['hi']:.2f}] | {calls} | {got.calls / calls:.1%} | {drift:.2f} | {got.stopped} |",
                  flush=True)
        final = {r["model"]: r["score"] for r in store.board(args.game)[1]}
        everyone = Store.open(tmp / "replay-all.db")
        all_calls = 0
        for g in range(args.games):
            run = play(tmp / f"replay-all-{g}", [*incumbents, *newcomers], args.game, args.rounds, seed=g)
            import_run(everyone, run)
            all_calls += run_calls(run)
        replay_scores = {r["model"]: r["score"] for r in refit(everyone)[args.game]}
        print(f"\nKendall τ to the true skills over all 25: board {tau(final, truth):.3f}, "
              f"replay with all 25 {tau(replay_scores, truth):.3f} ({all_calls} calls); "
              f"{time.perf_counter() - t0:.0f} s in all")


def main() -> None:
    from skate.leaderboard.settings import AddSettings

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    p = sub.add_parser("place")
    p.add_argument("--game", default="mathquiz")
    p.add_argument("--games", type=int, default=3)
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--budget", type=int, default=AddSettings().budget)
    p.add_argument("--confidence", type=float, default=AddSettings().confidence)
    args = ap.parse_args()
    place_bench(args)


if __name__ == "__main__":
    main()

"""The standing leaderboard against full replays (issue 36).

``place``: a bank from a game among 20 simulated players (skills 0.92 down to 0.28); then five
newcomers placed one at a time with ``skate leaderboard add`` (spread over the range, and one
with exactly an incumbent's skill). For each: its rank and interval on the board against those
of a full replay (the same game played by the 20 and it), the calls each took (answer samples
plus setter attempts, counted the same way from each run's events), and how far a full refit
after it moves the incumbents (against their interval widths). At the end, the board's Kendall
τ to the true skills against a replay of the game with all 25 players.

    python bench/bench_leaderboard.py place [--games 3] [--rounds 6] [--game mathquiz] [--budget N] [--confidence P]

``store``: the store's queries (pick the next task, record a response, refit one newcomer, show
the board) on a synthetic bank of 50,000 tasks and 200 models, in SQLite through skate's store
and in DuckDB with the same tables and SQL (DuckDB is not a dependency: pip install duckdb==1.4.3).

    python bench/bench_leaderboard.py store [--tasks 50000] [--models 200] [--per-task 20]

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

from bench.bench_load import spread_players  # noqa: E402

# What every game played here leaves out besides the logger (logger=none): the report, the table.
QUIET = {"report": False, "print_table": False}


def play(folder: Path, players: list[dict[str, Any]], game: str, rounds: int, seed: int) -> Path:
    import skate
    from skate.players.config import SimPlayerConfig
    from skate.runner import run_game

    cohort = [SimPlayerConfig(**p) for p in players]
    run_game(
        skate.config(
            values={**QUIET, "game.rounds": rounds, "seed": seed, "players.simulated": cohort}, game=game, logger="none"
        ),
        folder,
    )
    return folder


def run_calls(folder: Path) -> int:
    from skate.leaderboard.place import run_calls as _rc

    return _rc(folder)


def tau(scores: dict[str, float], truth: dict[str, float]) -> float:
    from scipy.stats import kendalltau

    names = sorted(scores)
    return float(kendalltau([scores[n] for n in names], [truth[n] for n in names]).statistic)


def place_bench(args: argparse.Namespace) -> None:
    from skate.leaderboard.bank import import_run
    from skate.leaderboard.fit import above, refit
    from skate.leaderboard.place import add
    from skate.leaderboard.settings import AddSettings
    from skate.leaderboard.store import Store

    incumbents = spread_players(20)
    tied = incumbents[9]
    newcomers = [
        {"name": "new-a", "skill": 0.85, "pitch": -0.2, "sloppiness": 0.12},
        {"name": "new-b", "skill": 0.71, "pitch": -0.1, "sloppiness": 0.15},
        {"name": "new-tie", "skill": tied["skill"], "pitch": tied["pitch"], "sloppiness": tied["sloppiness"]},
        {"name": "new-c", "skill": 0.45, "pitch": 0.1, "sloppiness": 0.2},
        {"name": "new-d", "skill": 0.31, "pitch": 0.2, "sloppiness": 0.24},
    ]
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
        print(
            f"bank: {args.games} games of {args.game} among 20 players, {args.rounds} rounds each, "
            f"{len(store.tasks())} tasks, {bank_calls} calls, {time.perf_counter() - t0:.0f} s\n"
        )
        print(
            "Ranks are among the 20 incumbents and the newcomer (truth: by true skill; board: the board's "
            "scores; replay: the replay's).\n"
        )
        print(
            "Replay rank: its rank, then the ranks it allows (where it cannot separate the newcomer from a "
            "neighbour at 0.95), and whether the board's rank is one of them.\n"
        )
        print(
            "| newcomer | true skill | true rank | board rank | board interval | add calls | replay rank "
            "| replay interval | replay calls | add/replay | refit drift / interval width | the add stopped |"
        )
        print("|---|---:|---:|---:|---|---:|---:|---|---:|---:|---:|---|", flush=True)
        names = {p["name"] for p in incumbents}
        hits = 0
        for k, new in enumerate(newcomers):
            spec = f"simulated:{new['skill']}"
            before = {r["model"]: r for r in store.board(args.game)[1]}
            got = add(
                store,
                spec,
                new["name"],
                AddSettings(
                    budget=args.budget,
                    confidence=args.confidence,
                    window=args.window,
                    max_placed=args.max_placed,
                    samples=args.samples,
                    runs_dir=tmp / "adds",
                    seed=k,
                ),
                edits={"players.simulated.0.pitch": new["pitch"], "players.simulated.0.sloppiness": new["sloppiness"]},
            )
            row = next(r for r in store.board(args.game)[1] if r["model"] == new["name"])
            # a full refit after it, on a copy: how far do the incumbents move?
            copy = tmp / f"refit-{k}.db"
            store.close()
            shutil.copy(tmp / "board.db", copy)
            store = Store.open(tmp / "board.db")
            with Store.open(copy) as other:
                after = {r["model"]: r for r in refit(other)[args.game]}
            drift = max(
                abs(after[m]["score"] - before[m]["score"]) / (before[m]["hi"] - before[m]["lo"])
                for m in before
                if m in after
            )
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
                return 1 + sum(scores[m] > scores[new["name"]] for m in names)  # noqa: B023 - called within the iteration that defines it

            true_rank = 1 + sum(truth[m] > new["skill"] for m in names)
            # The ranks the replay allows: it cannot separate the newcomer from an incumbent whose
            # order against it is less sure than 0.95 (each ability a normal with its sd).
            sure = {m: above((rb["score"], rb["sd"]), (replayed[m]["score"], replayed[m]["sd"])) for m in names}
            allowed = (1 + sum(p <= 0.05 for p in sure.values()), 1 + sum(p < 0.95 for p in sure.values()))
            ok = allowed[0] <= rank(board_now) <= allowed[1]
            hits += ok
            print(
                f"| {new['name']} | {new['skill']} | {true_rank} | {rank(board_now)} | [{row['lo']:.2f}, {row['hi']:.2f}] "
                f"| {got.calls} | {rank({m: r['score'] for m, r in replayed.items()})} "
                f"({allowed[0]}–{allowed[1]}: {'yes' if ok else 'no'}) "
                f"| [{rb['lo']:.2f}, {rb['hi']:.2f}] | {calls} | {got.calls / calls:.1%} | {drift:.2f} | {got.stopped} |",
                flush=True,
            )
        final = {r["model"]: r["score"] for r in store.board(args.game)[1]}
        everyone = Store.open(tmp / "replay-all.db")
        all_calls = 0
        for g in range(args.games):
            run = play(tmp / f"replay-all-{g}", [*incumbents, *newcomers], args.game, args.rounds, seed=g)
            import_run(everyone, run)
            all_calls += run_calls(run)
        replay_scores = {r["model"]: r["score"] for r in refit(everyone)[args.game]}
        print(f"\n{hits} of {len(newcomers)} newcomers at a rank the replay allows")
        print(
            f"Kendall τ to the true skills over all 25: board {tau(final, truth):.3f}, "
            f"replay with all 25 {tau(replay_scores, truth):.3f} ({all_calls} calls); "
            f"{time.perf_counter() - t0:.0f} s in all"
        )


# ------------------------------------------------------------------------------------- fake
def fake_bench(args: argparse.Namespace) -> None:
    """One add against one replay, counted by the fake OpenAI-compatible server itself."""
    import skate
    from skate.leaderboard.bank import import_run
    from skate.leaderboard.fit import refit
    from skate.leaderboard.place import add
    from skate.leaderboard.settings import AddSettings
    from skate.leaderboard.store import Store
    from skate.llm.fake_server import FakeLLMServer, FakeModel
    from skate.players.config import LLMPlayerConfig
    from skate.runner import run_game

    skills = {f"m{i}": round(0.9 - 0.6 * i / (args.players - 1), 3) for i in range(args.players)}
    new, incumbents = "m-new", list(skills)
    skills[new] = args.new_skill

    def cohort(base: str, names: list[str]) -> list[LLMPlayerConfig]:
        return [LLMPlayerConfig(name=n, model=f"openai/{n}", api_base=base, api_key_env="SKATE_NO_KEY") for n in names]

    def game(base: str, names: list[str], folder: Path, cache: Path) -> None:
        run_game(
            skate.config(
                values={
                    **QUIET,
                    "game.rounds": args.rounds,
                    "players.simulated": [],
                    "players.llm": cohort(base, names),
                    "llm.cache_dir": str(cache),
                    "llm.preflight": False,
                    "estimator.n": args.n,
                },
                game=args.game,
                logger="none",
                estimator="fixed_n",
            ),
            folder,
        )

    with (
        tempfile.TemporaryDirectory(prefix="bench-lb-fake-") as tmp,
        FakeLLMServer({n: FakeModel(s) for n, s in skills.items()}) as srv,
    ):
        tmp = Path(tmp)
        game(srv.api_base, incumbents, tmp / "bank", tmp / "cache-bank")
        bank_requests = srv.stats.requests
        store = Store.open(tmp / "board.db")
        import_run(store, tmp / "bank")
        refit(store)
        before = srv.stats.requests
        got = add(
            store,
            f"openai/{new}",
            new,
            AddSettings(runs_dir=tmp / "adds", budget=args.budget),
            edits={"llm.cache_dir": str(tmp / "cache-add"), "llm.preflight": False},
            api_base=srv.api_base,
            api_key_env="SKATE_NO_KEY",
        )
        add_requests = srv.stats.requests - before
        before = srv.stats.requests
        game(srv.api_base, [*incumbents, new], tmp / "replay", tmp / "cache-replay")
        replay_requests = srv.stats.requests - before
        bank_calls, replay_calls = run_calls(tmp / "bank"), run_calls(tmp / "replay")
    print(
        f"{args.game}, {args.players} fake models through the fake server ({args.rounds} rounds, "
        f"estimator=fixed_n n={args.n}); newcomer skill {args.new_skill}\n"
    )
    print("| | server requests | skate's count of calls |")
    print("|---|---:|---:|")
    print(f"| the bank's game ({args.players} models) | {bank_requests} | {bank_calls} |")
    print(f"| add the newcomer (rank {got.rank}, stopped: {got.stopped}) | {add_requests} | {got.calls} |")
    print(f"| replay with {args.players + 1} models | {replay_requests} | {replay_calls} |")
    print(
        f"\nadd / replay: {add_requests / replay_requests:.1%} of the server's requests, "
        f"{got.calls / replay_calls:.1%} of skate's count of calls"
    )


# ------------------------------------------------------------------------------------- store
DUCKDB_SCHEMA = """
CREATE SEQUENCE seq_models; CREATE SEQUENCE seq_tasks;
CREATE TABLE models (id INTEGER PRIMARY KEY DEFAULT nextval('seq_models'), name VARCHAR UNIQUE NOT NULL,
                     kind VARCHAR, spec VARCHAR, added DOUBLE, how VARCHAR);
CREATE TABLE tasks (id INTEGER PRIMARY KEY DEFAULT nextval('seq_tasks'), run_id INTEGER, game VARCHAR,
                    task_id VARCHAR, setter VARCHAR, created DOUBLE, body VARCHAR, difficulty DOUBLE,
                    difficulty_sd DOUBLE, exposure INTEGER DEFAULT 0, placed INTEGER DEFAULT 0,
                    retired BOOLEAN DEFAULT false);
CREATE TABLE responses (model_id INTEGER, task_id INTEGER, correct INTEGER, samples INTEGER, "at" DOUBLE,
                        how VARCHAR, PRIMARY KEY (model_id, task_id));
CREATE TABLE ratings (snapshot_id INTEGER, model_id INTEGER, score DOUBLE, lo DOUBLE, hi DOUBLE, sd DOUBLE,
                      rank INTEGER, tasks INTEGER);
"""


def _timed(fn: Any, repeat: int) -> float:
    """Median wall time of ``fn()`` in milliseconds."""
    import statistics

    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def synthetic(n_tasks: int, n_models: int, per_task: int, seed: int = 0) -> tuple[Any, Any, list[tuple[int, int, int]]]:
    """Abilities, difficulties and responses (model index, task index, correct of 10) of a
    synthetic bank: each task answered by ``per_task`` models drawn at random."""
    import numpy as np

    rng = np.random.default_rng(seed)
    theta, b = rng.normal(0, 1.5, n_models), rng.normal(0, 1.6, n_tasks)
    rows = []
    for j in range(n_tasks):
        for i in rng.choice(n_models, size=per_task, replace=False):
            rows.append((int(i), j, int(rng.binomial(10, 1 / (1 + np.exp(-(theta[i] - b[j])))))))
    return theta, b, rows


def store_bench(args: argparse.Namespace) -> None:
    import json as _json

    from skate.leaderboard import store as st
    from skate.leaderboard.fit import ability

    theta, b, rows = synthetic(args.tasks, args.models, args.per_task)
    body = _json.dumps({"prompt": "x" * 400, "answer": "42", "setter": "m", "task_id": "t"})
    print(
        f"{args.tasks} tasks x {args.models} models, {len(rows)} responses ({args.per_task} models a task); "
        f"median of {args.repeat} runs of each query, ms\n"
    )
    results: dict[str, dict[str, float]] = {}
    newcomer = args.models  # answers the first 100 tasks, then asks for more
    with tempfile.TemporaryDirectory(prefix="bench-lb-store-") as tmp:
        # SQLite, through skate's own store
        t0 = time.perf_counter()
        store = st.Store.open(Path(tmp) / "board.db")
        with store.transaction() as conn:
            conn.execute(
                st.models.insert(),
                [
                    {"name": f"m{i}", "kind": "simulated", "spec": "{}", "added": 0.0, "how": "import"}
                    for i in range(args.models + 1)
                ],
            )
            run = store.add_run(conn, "k", "/x", "cop", {}, 2, 0.0)
            conn.execute(
                st.tasks.insert(),
                [
                    {
                        "run_id": run,
                        "game": "cop",
                        "task_id": f"t{j}",
                        "setter": "m0",
                        "created": 0.0,
                        "body": body,
                        "difficulty": float(b[j]),
                        "exposure": args.per_task,
                    }
                    for j in range(args.tasks)
                ],
            )
            conn.execute(
                st.responses.insert(),
                [
                    {"model_id": i + 1, "task_id": j + 1, "correct": k, "samples": 10, "at": 0.0, "how": "run"}
                    for i, j, k in rows
                ]
                + [
                    {"model_id": newcomer + 1, "task_id": j + 1, "correct": 5, "samples": 10, "at": 0.0, "how": "add"}
                    for j in range(100)
                ],
            )
            store.snapshot(
                conn,
                "cop",
                "refit",
                {},
                [
                    {
                        "model": f"m{i}",
                        "score": float(theta[i]),
                        "lo": 0.0,
                        "hi": 0.0,
                        "sd": 0.1,
                        "rank": i + 1,
                        "tasks": 1,
                    }
                    for i in range(args.models)
                ],
            )
        build = time.perf_counter() - t0
        free = iter(range(101, args.tasks))

        def record() -> None:
            with store.transaction() as conn:
                store.record(conn, newcomer + 1, next(free), 1, 2, "add", 4)

        def refit_one() -> None:
            resp = store.model_responses(f"m{newcomer}", "cop")
            ability([(d, k, n, sd) for _, k, n, d, sd in resp])

        results["SQLite (skate's store)"] = {
            "build": build * 1000,
            "pick the next task": _timed(lambda: store.candidates("cop", f"m{newcomer}", 0.3, 4, 5), args.repeat),
            "record a response": _timed(record, args.repeat),
            "refit one newcomer": _timed(refit_one, args.repeat),
            "show the board": _timed(lambda: store.board("cop"), args.repeat),
        }
        store.close()
        size_sqlite = sum(f.stat().st_size for f in Path(tmp).glob("board.db*"))
        # DuckDB, the same tables and queries in its own SQL
        try:
            import duckdb
        except ImportError:
            print("DuckDB: not installed (pip install duckdb==1.4.3 to measure it)")
            duckdb = None
        if duckdb is not None:
            t0 = time.perf_counter()
            db = duckdb.connect(str(Path(tmp) / "board.duckdb"))
            db.execute(DUCKDB_SCHEMA)
            db.executemany(
                "INSERT INTO models (name, kind, spec, added, how) VALUES (?, 'simulated', '{}', 0, 'import')",
                [(f"m{i}",) for i in range(args.models + 1)],
            )
            import pyarrow as pa

            n = args.tasks
            tasks_df = pa.table(  # noqa: F841 - DuckDB reads it by name in the SQL below
                {
                    "id": list(range(1, n + 1)),
                    "run_id": [1] * n,
                    "game": ["cop"] * n,
                    "task_id": [f"t{j}" for j in range(n)],
                    "setter": ["m0"] * n,
                    "created": [0.0] * n,
                    "body": [body] * n,
                    "difficulty": b.tolist(),
                    "difficulty_sd": [None] * n,
                    "exposure": [args.per_task] * n,
                    "placed": [0] * n,
                    "retired": [False] * n,
                }
            )
            db.execute("INSERT INTO tasks SELECT * FROM tasks_df")
            every = [(i + 1, j + 1, k) for i, j, k in rows] + [(newcomer + 1, j + 1, 5) for j in range(100)]
            resp_df = pa.table(  # noqa: F841 - DuckDB reads it by name in the SQL below
                {
                    "model_id": [r[0] for r in every],
                    "task_id": [r[1] for r in every],
                    "correct": [r[2] for r in every],
                    "samples": [10] * len(every),
                    "at": [0.0] * len(every),
                    "how": ["run"] * len(every),
                }
            )
            db.execute("INSERT INTO responses SELECT * FROM resp_df")
            db.executemany(
                "INSERT INTO ratings VALUES (1, ?, ?, 0, 0, 0.1, ?, 1)",
                [(i + 1, float(theta[i]), i + 1) for i in range(args.models)],
            )
            build = time.perf_counter() - t0
            free = iter(range(101, args.tasks))
            mid = newcomer + 1

            def d_pick() -> None:
                db.execute(
                    "SELECT * FROM tasks WHERE game = 'cop' AND NOT retired AND difficulty IS NOT NULL AND "
                    "placed < 4 AND id NOT IN (SELECT task_id FROM responses WHERE model_id = ?) "
                    "ORDER BY abs(difficulty - 0.3), id LIMIT 5",
                    [mid],
                ).fetchall()

            def d_record() -> None:
                t = next(free)
                db.execute("BEGIN TRANSACTION")
                db.execute(
                    "UPDATE tasks SET exposure = exposure + 1, placed = placed + 1 WHERE id = ? AND placed < 4", [t]
                )
                db.execute("INSERT INTO responses VALUES (?, ?, 1, 2, 0, 'add')", [mid, t])
                db.execute("COMMIT")

            def d_refit() -> None:
                got = db.execute(
                    "SELECT r.correct, r.samples, t.difficulty FROM responses r JOIN tasks t "
                    "ON t.id = r.task_id WHERE r.model_id = ? AND t.game = 'cop'",
                    [mid],
                ).fetchall()
                ability([(d, k, n) for k, n, d in got])

            def d_board() -> None:
                db.execute(
                    "SELECT m.name, r.* FROM ratings r JOIN models m ON m.id = r.model_id "
                    "WHERE r.snapshot_id = 1 ORDER BY r.rank"
                ).fetchall()

            results["DuckDB (same SQL)"] = {
                "build": build * 1000,
                "pick the next task": _timed(d_pick, args.repeat),
                "record a response": _timed(d_record, args.repeat),
                "refit one newcomer": _timed(d_refit, args.repeat),
                "show the board": _timed(d_board, args.repeat),
            }
            db.close()
            size_duck = (Path(tmp) / "board.duckdb").stat().st_size
        names = list(next(iter(results.values())))
        print("| database | " + " | ".join(names) + " |")
        print("|---|" + "---:|" * len(names))
        for db_name, r in results.items():
            print(f"| {db_name} | " + " | ".join(f"{r[n]:,.1f}" for n in names) + " |")
        print(
            f"\nfile size: SQLite {size_sqlite / 1e6:.0f} MB"
            + (f", DuckDB {size_duck / 1e6:.0f} MB" if duckdb is not None else "")
        )


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
    p.add_argument("--window", type=float, default=AddSettings().window)
    p.add_argument("--samples", type=int, default=AddSettings().samples)
    p.add_argument("--max-placed", type=int, default=AddSettings().max_placed)
    f = sub.add_parser("fake")
    f.add_argument("--game", default="mathquiz")
    f.add_argument("--players", type=int, default=8)
    f.add_argument("--rounds", type=int, default=4)
    f.add_argument("--n", type=int, default=6)
    f.add_argument("--new-skill", type=float, default=0.55)
    f.add_argument("--budget", type=int, default=AddSettings().budget)
    q = sub.add_parser("store")
    q.add_argument("--tasks", type=int, default=50_000)
    q.add_argument("--models", type=int, default=200)
    q.add_argument("--per-task", type=int, default=20)
    q.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    {"place": place_bench, "fake": fake_bench, "store": store_bench}[args.what](args)


if __name__ == "__main__":
    main()

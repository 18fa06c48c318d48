"""A killed add or import (issue 49, part 2): ``skate leaderboard import`` and ``add`` killed
(SIGKILL) at every point of a fixed choice, on SQLite and on PostgreSQL, then run again.

The bank is two six-round MathQuiz games of the default simulated cohort (seeds 0 and 1, as the
suite's ``runs_to_bank``). ``import`` banks both into an empty store and refits; ``add`` places
``simulated:0.5`` on the board that import made, with the suite's small add
(tests/leaderboard/test_store_kill.py's ``ADD``). Each command is first run uninterrupted and
traced; then, for each point (at least ``--points`` per command, chosen by
tests/leaderboard/kills.py's ``choose``: the first, middle and last write and the first and last
commit of each step of skate, then evenly spread), a fresh copy of the starting store, the command
killed there, the store checked against the trace as it stood after the last commit before the
point, the command run again, and its store checked against the uninterrupted run's.
tests/leaderboard/kills.py says what the comparison leaves out (ids, wall-clock times, the run key
of a game played during the add).

    .venv/bin/python bench/bench_kill.py [--points 24] [--stores sqlite,postgresql]

PostgreSQL is a throwaway server started here, as the suite starts it (Debian's postgresql
package; as root it runs as the postgres user). The table goes to docs/benchmarks/leaderboard.md.
"""

from __future__ import annotations

import argparse
import contextlib
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.leaderboard import kills  # noqa: E402
from tests.leaderboard.test_store_kill import ADD  # noqa: E402


def cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def bank(folder: Path) -> list[Path]:
    import skate
    from skate.runner import run_game

    game = {"game.rounds": 6, "report": False, "print_table": False}
    for seed in (0, 1):
        run_game(skate.config(values={**game, "seed": seed}, game="mathquiz", logger="none"), folder / f"r{seed}")
    return [folder / "r0", folder / "r1"]


class Stores:
    """New stores of one backend: ``new(folder, copy_of=None)`` as ``--store`` takes it."""

    def __init__(self, backend: str, server: object | None) -> None:
        self.backend, self.server = backend, server

    def new(self, folder: Path, copy_of: str | None = None) -> str:
        if self.backend == "sqlite":
            path = folder / "board.db"
            if copy_of is not None:
                shutil.copyfile(copy_of, path)
            return str(path)
        return self.server.database(copy_of=copy_of)  # type: ignore[attr-defined]


def run_points(
    name: str, command, stores: Stores, tmp: Path, n: int, copy_of: str | None, chosen: list[kills.Event] | None
) -> tuple[str | None, list[kills.Event], list[kills.Result]]:
    """Trace ``command``, then kill it at each point; (the reference store, the points, results)."""
    ref = tmp / f"{name}-ref"
    ref.mkdir()
    where = stores.new(ref, copy_of=copy_of)
    trace = kills.trace(command(where, ref), where, ref)
    points = chosen or kills.choose(trace.events, n)
    # The same points on every store: the same statements in the same steps.
    assert all(p in trace.events for p in points), f"{stores.backend}: the {name} differs from the first store's"
    results = []
    for i, point in enumerate(points):
        root = tmp / f"{name}-{i}"
        root.mkdir()
        where_i = stores.new(root, copy_of=copy_of)
        results.append(kills.kill_and_rerun(command(where_i, root), where_i, root, point, trace))
        print(
            f"  {stores.backend} {name} {i + 1}/{len(points)}: {kills.describe(point)}: "
            f"{'ok' if ok(results[-1]) else results[-1].why}",
            flush=True,
        )
    return where, points, results


def ok(r: kills.Result) -> bool:
    return r.status == -9 and r.at_commit and r.again == 0 and r.same


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--points", type=int, default=24, help="kill points per command and store, at least")
    ap.add_argument("--stores", default="sqlite,postgresql")
    args = ap.parse_args()
    backends = args.stores.split(",")
    t0, c0 = time.perf_counter(), cpu()
    results: dict[tuple[str, str], list[kills.Result]] = {}
    chosen: dict[str, list[kills.Event]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-kill-") as tmp_name:
        tmp = Path(tmp_name)
        runs = bank(tmp / "bank")

        def importing(where: str, root: Path) -> list[str]:
            return ["leaderboard", "import", *map(str, runs), "--store", where]

        def adding(where: str, root: Path) -> list[str]:
            return ["leaderboard", "add", *ADD, "--store", where, "--runs-dir", str(root / "adds")]

        for backend in backends:
            with _server(backend) as server:
                stores = Stores(backend, server)
                work = tmp / backend
                work.mkdir()
                board, chosen["import"], results[backend, "import"] = run_points(
                    "import", importing, stores, work, args.points, None, chosen.get("import")
                )
                _, chosen["add"], results[backend, "add"] = run_points(
                    "add", adding, stores, work, args.points, board, chosen.get("add")
                )
    print(
        f"\n{time.perf_counter() - t0:.0f} s, {cpu() - c0:.0f} s of CPU (this process and the killed ones; "
        "the PostgreSQL server's not counted)\n"
    )
    for command in ("import", "add"):
        print(f"`{command}`: {len(chosen[command])} points\n")
        print("| # | killed | step | " + " | ".join(backends) + " |")
        print("|---:|---|---|" + "---|" * len(backends))
        for i, point in enumerate(chosen[command]):
            where = (
                f"after write {point.n} ({point.what}) of transaction {point.commits_before + 1}, before its commit"
                if point.kind == "write"
                else f"right after commit {point.n}"
            )
            cells = [
                "ok" if ok(results[b, command][i]) else "FAILED: " + "; ".join(results[b, command][i].why)[:200]
                for b in backends
            ]
            print(f"| {i + 1} | {where} | {point.phase} | " + " | ".join(cells) + " |")
        print()
    for (backend, command), rs in results.items():
        print(
            f"{backend} {command}: {sum(map(ok, rs))} of {len(rs)} points: killed there, the store as at the last "
            "commit before it, run again to the uninterrupted run's store"
        )


def _server(backend: str) -> contextlib.AbstractContextManager:
    """A throwaway PostgreSQL server for ``postgresql`` (tests/leaderboard/conftest.py's), else nothing."""
    if backend != "postgresql":
        return contextlib.nullcontext()
    from tests.leaderboard.conftest import running_postgres

    return running_postgres()


if __name__ == "__main__":
    main()

"""A killed add or import (issue 49): ``skate leaderboard import`` and ``add`` killed (SIGKILL)
at a few store writes, on SQLite and on PostgreSQL, then run again, end with the store an
uninterrupted run leaves; right after the kill the store is the uninterrupted run's as it stood
after its last commit before the kill, nothing half written. tests/leaderboard/kills.py says how
the points are counted and what the comparison leaves out; bench/bench_kill.py kills at every
point of its choice (at least 20 per command and store)."""

from __future__ import annotations

import signal

from tests.leaderboard import kills

# A small add: at least 20 banked tasks, one round of its own tasks answered by one neighbour.
ADD = [
    "simulated:0.5",
    "--name",
    "mid",
    "--budget",
    "60",
    "--samples",
    "2",
    "--set-rounds",
    "1",
    "--neighbours",
    "1",
    "--set-samples",
    "2",
]

# (step of skate, write or commit, which of them, a write's statement): a few points per store,
# each step once over the two stores; bench/bench_kill.py has them all.
POINTS = {
    "sqlite": {
        "import": [("banking a run", "write", 0.5, "INSERT responses")],  # mid bulk insert
        "add": [
            ("a banked task's answer", "write", 0.5, "INSERT responses"),  # mid-write of an answer
            ("banking its own tasks", "write", 0.5, ""),  # its setting game half banked
            ("its snapshot", "write", -1, ""),
        ],
    },  # its snapshot written, the add not yet done
    "postgresql": {
        "import": [("banking a run", "commit", -1, "")],  # the run banked, not yet fitted
        "add": [
            ("a banked task's answer", "commit", 0.5, ""),  # between two tasks
            ("its snapshot", "commit", -1, ""),
        ],
    },  # right after its last commit
}


def _kill_at(points, trace: kills.Trace, command, new_store, tmp_path, copy_of: str | None) -> None:
    for step, kind, which, what in points:
        point = kills.pick(trace.events, step, kind, which, what)
        root = tmp_path / f"{kind}-{point.n}-{step.split()[-1]}"
        root.mkdir()
        where = new_store(root, copy_of=copy_of)
        got = kills.kill_and_rerun(command(where, root), where, root, point, trace)
        assert got.status == -signal.SIGKILL, f"{kills.describe(point)}: not killed there ({got.status})"
        assert got.at_commit and got.again == 0 and got.same, f"{kills.describe(point)}: {got.why}"


def test_a_killed_import_or_add_run_again_ends_as_an_uninterrupted_one(new_store, runs_to_bank, tmp_path):
    points = POINTS[new_store.backend]

    def importing(where, root):
        return ["leaderboard", "import", str(runs_to_bank[0]), "--store", where]

    def adding(where, root):
        return ["leaderboard", "add", *ADD, "--store", where, "--runs-dir", str(root / "adds")]

    ref = tmp_path / "ref"
    ref.mkdir()
    board = new_store(ref)
    imported = kills.trace(importing(board, ref), board, ref)
    assert len(imported.states[-1]["runs"]) == 1 and imported.states[-1]["snapshots"]
    _kill_at(points["import"], imported, importing, new_store, tmp_path, None)
    # The add starts from the board the import made.
    ref_add = tmp_path / "ref-add"
    ref_add.mkdir()
    where = new_store(ref_add, copy_of=board)
    added = kills.trace(adding(where, ref_add), where, ref_add)
    end = added.states[-1]
    assert [a[:3] for a in end["adds"]] == [("mid", "mathquiz", "done")]
    assert sum(r[0] == "mid" for r in end["responses"]) >= 20 and any(t[3] == "mid" for t in end["tasks"])
    _kill_at(points["add"], added, adding, new_store, tmp_path, board)

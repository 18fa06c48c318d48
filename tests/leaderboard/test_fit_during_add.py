"""A refit during an add (issue 49): it fits every answer the add has stored, waiting for one being
written, and the add's own snapshot then extends the refit's board. Two processes: the add, held
at chosen store writes (tests/leaderboard/kills.py), and the refit, on SQLite and on PostgreSQL."""

from __future__ import annotations

import sqlalchemy as sa

from skate.cli import main
from skate.leaderboard.database import models, ratings, snapshots
from skate.leaderboard.page import board_text, render
from skate.leaderboard.store import Store
from tests.leaderboard import kills

GAME = "mathquiz"
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


def _refits(where: str) -> list[dict[str, dict]]:
    """Each refit snapshot of the game, oldest first: its rows by model."""
    with Store.open(where, create=False) as store, store.engine.connect() as conn:
        ids = (
            conn.execute(
                sa.select(snapshots.c.id)
                .where(snapshots.c.game == GAME, snapshots.c.why == "refit")
                .order_by(snapshots.c.id)
            )
            .scalars()
            .all()
        )
        return [
            {
                r["model"]: dict(r)
                for r in conn.execute(
                    sa.select(models.c.name.label("model"), ratings.c.score, ratings.c.tasks)
                    .join(models, models.c.id == ratings.c.model_id)
                    .where(ratings.c.snapshot_id == sid)
                ).mappings()
            }
            for sid in ids
        ]


def test_a_refit_during_an_add_fits_its_answers_so_far_and_waits_for_one_being_written(
    new_store, runs_to_bank, tmp_path
):
    where = new_store(tmp_path)
    assert main(["leaderboard", "import", str(runs_to_bank[0]), "--store", where]) == 0
    sync = tmp_path / "sync"
    sync.mkdir()

    def adding() -> int:
        """The add, held three times: after its 6th commit (its start and 5 answers stored: between
        two tasks), inside the transaction of its 10th answer (written, not committed), and right
        after that transaction's commit."""
        answers = 0

        def on_write(n: int, statement: str) -> None:
            nonlocal answers
            if statement.lstrip().startswith("INSERT INTO responses"):
                answers += 1
                if answers == 10:
                    kills.pause("inside", sync)

        def on_commit(n: int) -> None:
            if n == 6:
                kills.pause("between", sync)
            elif answers == 10 and not (sync / "after.paused").exists():
                kills.pause("after", sync)

        with kills.Watch(on_write=on_write, on_commit=on_commit):
            return main(["leaderboard", "add", *ADD, "--store", where, "--runs-dir", str(tmp_path / "adds")])

    def refitting() -> int:
        with kills.Watch(on_lock=lambda: (sync / "refit.locking").touch()):
            return main(["leaderboard", "refit", "--store", where])

    add_log, refit_log = tmp_path / "add.out", tmp_path / "refit.out"
    with kills.forked(adding, add_log) as add_pid:
        # 1. Between two of its tasks: a refit fits the 5 answers it has stored, and says so.
        kills.await_file(sync / "between.paused", add_pid, add_log)
        assert main(["leaderboard", "refit", "--store", where]) == 0
        first = _refits(where)[-1]
        assert first["mid"]["tasks"] == 5
        with Store.open(where, create=False) as store:
            text, page = board_text(store), render(store)
        assert "Still being added: mid" in text.split("\n\n")[0] and "Still being added: mid" in text.split("\n\n")[1]
        assert page.count('<p class="meta placing">Still being added: mid') == 2  # overall and the game's
        (sync / "between.go").touch()
        # 2. While its 10th answer is written: a refit in a third process asks for the write lock,
        # waits for that answer's transaction, then fits all 10 (first fitted without the lock, on
        # 9, then again under it: the bank changed meanwhile).
        kills.await_file(sync / "inside.paused", add_pid, add_log)
        with kills.forked(refitting, refit_log) as refit_pid:
            kills.await_file(sync / "refit.locking", refit_pid, refit_log)
            assert len(_refits(where)) == 2  # the import's and the first refit's: this one waits for the lock
            (sync / "inside.go").touch()  # the add commits its 10th answer and is held again, between tasks
            assert kills.wait(refit_pid) == 0, refit_log.read_text()
        second = _refits(where)[-1]
        assert second["mid"]["tasks"] == 10
        (sync / "after.go").touch()
        assert kills.wait(add_pid) == 0, add_log.read_text()
    # 3. The add ends with its own row on the refit's board: every incumbent as the refit left it.
    with Store.open(where, create=False) as store:
        snap, rows = store.board(GAME)
        answered, status = store.model_responses("mid", GAME), store.add_state("mid", GAME)["status"]
        text, page = board_text(store), render(store)
    assert snap["why"] == "add:mid" and status == "done"
    final = {r["model"]: r for r in rows}
    assert {m: r["score"] for m, r in final.items() if m != "mid"} == {
        m: r["score"] for m, r in second.items() if m != "mid"
    }
    assert final["mid"]["tasks"] == len(answered) > 10
    assert "Still being added" not in text and "Still being added" not in page

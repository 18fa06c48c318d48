"""A store on a full disk (issue 49): the write is refused in one line naming where, and nothing
already stored is lost. The disk is a small tmpfs mounted for the test (root only: the suite runs
as root in CI; where it cannot mount one, the test skips, saying why). SQLite's file lives on
it; for PostgreSQL a tablespace on it holds the board's database (the server's own files and its
write-ahead log stay where they are, so only the board's tables run out of room)."""

from __future__ import annotations

import contextlib
import errno
import os
import pwd
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from skate.cli import main
from tests.leaderboard import kills


@contextlib.contextmanager
def small_disk(folder: Path, size: str, owner: str | None = None) -> Iterator[Path]:
    """A tmpfs of ``size`` mounted on ``folder`` (owned by ``owner``) for as long as the block runs."""
    folder.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs as a full disk needs root (CI runs the suite as root)")
    got = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(folder)], capture_output=True, text=True
    )
    if got.returncode != 0:  # root without the right to mount (a container without CAP_SYS_ADMIN)
        pytest.skip(f"cannot mount a small tmpfs as a full disk here: {got.stderr.strip()}")
    try:
        if owner:
            user = pwd.getpwnam(owner)
            os.chown(folder, user.pw_uid, user.pw_gid)
        yield folder
    finally:
        subprocess.run(["umount", "--lazy", str(folder)], check=True)


def fill(disk: Path) -> Path:
    """Fill ``disk`` to its last block; the file that does."""
    filler = disk / "filler"
    with open(filler, "ab", buffering=0) as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
        with contextlib.suppress(OSError):
            while True:
                fh.write(b"\0" * 512)
    return filler


def _one_line(capsys, *said: str) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("skate leaderboard: ") and all(s in err for s in said), err
    return err


def test_a_sqlite_store_on_a_full_disk_refuses_the_write_in_one_line_and_keeps_what_it_held(
    runs_to_bank, tmp_path, capsys
):
    r0, r1 = (str(r) for r in runs_to_bank)
    with small_disk(tmp_path / "disk", "2m") as disk:
        store = str(disk / "board.db")
        assert main(["leaderboard", "import", r0, "--store", store]) == 0
        before = kills.dump(store)
        capsys.readouterr()
        # The disk fills while the next run is banked: that run's transaction is refused.
        filler = None

        def on_write(n: int, statement: str) -> None:
            nonlocal filler
            filler = filler or fill(disk)

        with kills.Watch(on_write=on_write):
            assert main(["leaderboard", "import", r1, "--store", store]) == 2
        _one_line(
            capsys, f"the disk holding {store} is full", "nothing of this write was stored", "free some space there"
        )
        # The disk full before a command starts (topped up: closing the store freed its log): SQLite
        # finds no room for its log's index, so no command can open the store; each says so in one line.
        fill(disk)
        for command in (["import", r1], ["add", "simulated:0.5", "--runs-dir", str(tmp_path / "adds")], ["show"]):
            assert main(["leaderboard", *command, "--store", store]) == 2
            _one_line(capsys, f"the disk holding {store} is full", "cannot be opened", "free some space there")
        os.unlink(filler)
        assert kills.dump(store) == before  # nothing it held was lost
        # With room again, the same import banks the run.
        assert main(["leaderboard", "import", r1, "--store", store]) == 0
        assert len(kills.dump(store)["runs"]) == 2


def test_a_postgresql_board_out_of_disk_space_refuses_the_write_in_one_line_and_keeps_what_it_held(
    runs_to_bank, postgres_server, tmp_path, capsys
):
    r0, r1 = (str(r) for r in runs_to_bank)
    admin = sa.create_engine(
        postgres_server.url("postgres").replace("postgresql://", "postgresql+psycopg://"),
        isolation_level="AUTOCOMMIT",
        poolclass=sa.pool.NullPool,
    )
    name = tmp_path.name.lower().replace("-", "_")[:40]
    # The server runs as postgres: its tablespace's folder is made under one it can reach.
    with small_disk(postgres_server.socket_dir / f"disk_{name}", "16m", owner="postgres") as disk:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"CREATE TABLESPACE ts_{name} LOCATION '{disk}'")
            conn.exec_driver_sql(f"CREATE DATABASE db_{name} TABLESPACE ts_{name}")
        try:
            store = postgres_server.url(f"db_{name}")
            assert main(["leaderboard", "import", r0, "--store", store]) == 0
            before = kills.dump(store)
            capsys.readouterr()
            filler = fill(disk)
            assert main(["leaderboard", "import", r1, "--store", store]) == 2
            _one_line(
                capsys,
                f"the PostgreSQL server of {store} is out of disk space",
                "No space left on device",
                "nothing of this write was stored",
            )
            assert kills.dump(store) == before  # read on the full disk: nothing it held was lost
            assert main(["leaderboard", "show", "--store", store]) == 0
            os.unlink(filler)
            assert main(["leaderboard", "import", r1, "--store", store]) == 0
            assert len(kills.dump(store)["runs"]) == 2
        finally:
            with admin.connect() as conn:
                conn.exec_driver_sql(f"DROP DATABASE IF EXISTS db_{name} WITH (FORCE)")
                conn.exec_driver_sql(f"DROP TABLESPACE IF EXISTS ts_{name}")
            admin.dispose()


def test_an_add_whose_runs_folder_is_on_a_full_disk_stops_in_one_line_and_finishes_when_run_again(
    runs_to_bank, tmp_path, capsys
):
    """The store has room; the folder the add plays its own game in does not."""
    store = str(tmp_path / "board.db")
    assert main(["leaderboard", "import", *(str(r) for r in runs_to_bank), "--store", store]) == 0
    add = [
        "leaderboard",
        "add",
        "simulated:0.5",
        "--store",
        store,
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
    with small_disk(tmp_path / "disk", "1m") as disk:
        filler = fill(disk)
        capsys.readouterr()
        assert main([*add, "--runs-dir", str(disk / "adds")]) == 2
        _one_line(
            capsys,
            f"cannot write the event log {disk / 'adds'}",
            "No space left on device",
            "what is stored is kept: free some space there and run the same command again",
        )
        os.unlink(filler)
        assert main([*add, "--runs-dir", str(disk / "adds")]) == 0, capsys.readouterr().err
    assert "0.5: rank " in capsys.readouterr().out

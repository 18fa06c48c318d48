"""A real PostgreSQL server for the leaderboard's tests, started once per test session (per xdist
worker that needs it): Debian's ``postgresql`` binaries (/usr/lib/postgresql/<version>/bin, which
scripts/system-deps.sh installs for the tests), a throwaway cluster in a temporary folder, reached
through a unix socket in that folder (no port to collide with), stopped at the end, or when the
test process dies without stopping it.

PostgreSQL refuses to run as root: as root (CI), initdb and the server run as Debian's
``postgres`` user (``setpriv``), in a folder it owns. Without the binaries the tests that need the
server skip, unless ``SKATE_REQUIRE_POSTGRES`` is set (scripts/test.sh sets it as root), when
they fail.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

REQUIRE_POSTGRES = bool(os.environ.get("SKATE_REQUIRE_POSTGRES"))
# A throwaway server: nothing it writes needs to survive a crash, and the tests open few connections.
SERVER_SETTINGS = {
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "listen_addresses": "",
    "max_connections": "40",
    "shared_buffers": "16MB",
    "max_wal_size": "64MB",
    "autovacuum": "off",
    "log_min_messages": "warning",
}


def _bin_dir() -> Path | None:
    """The newest installed server's bin folder (Debian's layout), else wherever initdb is on PATH."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0,
    )
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    return Path(on_path).resolve().parent if on_path else None


def _unavailable(reason: str) -> None:
    if REQUIRE_POSTGRES:
        pytest.fail(f"SKATE_REQUIRE_POSTGRES is set but {reason}")
    pytest.skip(f"{reason} (install Debian's postgresql package, e.g. bash scripts/system-deps.sh test as root)")


class PostgresServer:
    """A running throwaway server: :meth:`database` makes a new empty database and gives its URL."""

    def __init__(self, socket_dir: Path, user: str) -> None:
        self.socket_dir, self.user = socket_dir, user

    def url(self, database: str) -> str:
        return f"postgresql://{self.user}@/{database}?host={self.socket_dir}"

    def database(self, prefix: str = "board", copy_of: str | None = None) -> str:
        """A new database's URL: empty, or a copy of the database at ``copy_of`` (a URL of this
        server's, with no one connected to it)."""
        import sqlalchemy as sa

        name = f"{prefix}_{uuid.uuid4().hex[:10]}"
        template = copy_of.split("@/", 1)[1].split("?", 1)[0] if copy_of else "template0"
        engine = sa.create_engine(
            self.url("postgres").replace("postgresql://", "postgresql+psycopg://"),
            isolation_level="AUTOCOMMIT",
            poolclass=sa.pool.NullPool,
        )
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
        finally:
            engine.dispose()
        return self.url(name)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    with running_postgres() as server:
        yield server


@contextlib.contextmanager
def running_postgres() -> Iterator[PostgresServer]:
    """A throwaway server for as long as the block runs (the fixture's; bench/bench_kill.py's too)."""
    bin_dir = _bin_dir()
    if bin_dir is None:
        _unavailable("no PostgreSQL server binaries (initdb, postgres) are installed")
    try:
        import psycopg
    except ImportError:
        _unavailable("psycopg is not installed (the postgres extra: bash scripts/setup.sh test)")
    as_root = os.geteuid() == 0
    # The server is this process's child, and is sent SIGQUIT (its immediate shutdown) should this
    # process die without stopping it (--pdeathsig): a killed test run leaves no server behind.
    prefix = ["setpriv", "--pdeathsig", "QUIT"] if shutil.which("setpriv") else []
    if as_root:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            _unavailable("the tests run as root and there is no postgres user to run the server as")
        if not prefix:
            _unavailable("the tests run as root and there is no setpriv to run the server as postgres")
        prefix += ["--reuid", "postgres", "--regid", "postgres", "--init-groups"]
    prefix += ["--"] if prefix else []
    # Not under pytest's tmp_path: its folders are root's alone (0700), where postgres cannot go.
    # A short path, too: the socket's must fit in 107 bytes.
    root = Path(tempfile.mkdtemp(prefix="skate-pg-"))
    data, log_path = root / "data", root / "server.log"
    if as_root:
        os.chown(root, owner.pw_uid, owner.pw_gid)

    def log_tail() -> str:
        return log_path.read_text(errors="replace")[-2000:] if log_path.exists() else ""

    server = None
    try:
        got = subprocess.run(
            [
                *prefix,
                str(bin_dir / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
                "--encoding=UTF8",
                "--locale=C",
                "--no-instructions",
            ],
            capture_output=True,
            text=True,
            cwd=root,
        )
        if got.returncode != 0:
            pytest.fail(f"initdb failed ({got.returncode}): {got.stderr.strip()[-2000:]}")
        settings = [
            a for k, v in {**SERVER_SETTINGS, "unix_socket_directories": str(root)}.items() for a in ("-c", f"{k}={v}")
        ]
        with open(log_path, "wb") as log:
            server = subprocess.Popen(
                [*prefix, str(bin_dir / "postgres"), "-D", str(data), *settings],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=root,
            )
        deadline = time.monotonic() + 60
        while True:
            if server.poll() is not None:
                pytest.fail(f"the PostgreSQL server stopped ({server.returncode}):\n{log_tail()}")
            try:
                psycopg.connect(host=str(root), user="postgres", dbname="postgres", connect_timeout=5).close()
                break
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    pytest.fail(f"the PostgreSQL server did not start in 60 s:\n{log_tail()}")
                time.sleep(0.05)
        yield PostgresServer(root, "postgres")
    finally:
        if server is not None and server.poll() is None:
            server.send_signal(signal.SIGINT)  # its fast shutdown: ends the sessions, no checkpoint wait
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """A new empty database on the session's server, for one test: its URL."""
    return postgres_server.database()


def interrupt_then_resume(board, tmp_path: Path, monkeypatch, at: int) -> None:
    """Add a model to ``board``, stop it (KeyboardInterrupt) as it asks its ``at``th banked task,
    add it again, and check that it went on where it stopped: every response recorded before the
    stop kept and none asked twice, the add done, its calls all its samples, its row on the board.
    (The same test on SQLite, tests/leaderboard/test_place.py, and on PostgreSQL.)"""
    from skate.leaderboard import place
    from skate.leaderboard.place import add
    from skate.leaderboard.settings import AddSettings

    asked: list = []
    real = place.Sampler

    class Stopping(real):  # one sampler per banked task asked
        def __init__(self, *args, **kw):
            super().__init__(*args, **kw)
            asked.append(self)

        def __call__(self, n, rng):
            if len(asked) >= at and self is asked[at - 1]:
                raise KeyboardInterrupt
            return super().__call__(n, rng)

    monkeypatch.setattr(place, "Sampler", Stopping)
    settings = AddSettings(runs_dir=tmp_path / "adds", set_rounds=0, budget=200, samples=2)
    with pytest.raises(KeyboardInterrupt):
        add(board, "simulated:0.5", "mid", settings)
    game = board.games()[0]
    kept = board.model_responses("mid")
    assert len(kept) == at - 1 and board.add_state("mid", game)["status"] == "placing"
    monkeypatch.setattr(place, "Sampler", real)
    got = add(board, "simulated:0.5", "mid", settings)
    answered = board.model_responses("mid")
    assert set(kept) <= set(answered) and len({t for t, *_ in answered}) == len(answered)
    assert board.add_state("mid", game)["status"] == "done"
    assert got.calls == sum(n for _, _, n, *_ in answered) <= 200
    assert got.model in {r["model"] for r in board.board(game)[1]}


# ------------------------------------------------------------------ stores to copy (the kill tests)
@pytest.fixture(params=["sqlite", "postgresql"])
def new_store(request):
    """``new_store(folder)``: where a store not made yet is, as ``--store`` takes it (a file in
    ``folder``, or a new PostgreSQL database); ``new_store(folder, copy_of=where)``: a copy of the
    store at ``where`` (nothing connected to it). ``new_store.backend`` says which."""
    backend = request.param

    def make(folder: Path, copy_of: str | None = None) -> str:
        if backend == "sqlite":
            path = Path(folder) / "board.db"
            if copy_of is not None:
                shutil.copyfile(copy_of, path)
            return str(path)
        return request.getfixturevalue("postgres_server").database(copy_of=copy_of)

    make.backend = backend
    return make

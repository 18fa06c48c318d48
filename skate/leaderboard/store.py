"""The leaderboard's store: models, the bank of tasks, responses and rating snapshots, in a SQL
database reached through SQLAlchemy Core.

Where it lives: a path is a SQLite file (made on first use); a URL names any database SQLAlchemy
reaches (``postgresql://user@host/db`` for a board shared by several machines, through psycopg).
Every write is one transaction, so two processes adding to one board leave it consistent. Writers
take turns, readers never wait: on SQLite a writer takes the file's write lock when its
transaction starts (``BEGIN IMMEDIATE``), on PostgreSQL the board's own transaction-level advisory
lock (:data:`WRITE_LOCK`); either waits up to
:data:`~skate.leaderboard.database.BUSY_TIMEOUT_S` for another writer to finish.

Its tables, and where and how the database is opened, are :mod:`skate.leaderboard.database`'s.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, CursorResult, Engine, RowMapping

from skate.leaderboard.database import (
    BUSY_TIMEOUT_S,
    SCHEMA_VERSION,
    WRITE,
    _sqlite_engine,
    adds,
    meta,
    metadata,
    models,
    ratings,
    responses,
    runs,
    snapshots,
    tasks,
    url_of,
)
from skate.runlog.events import TaskSet, parse_as
from skate.runlog.records import Task

OVERALL = ""  # the game name of an overall snapshot
# PostgreSQL: the advisory lock each write transaction holds (advisory locks are per database: one
# board per database). Any fixed key that fits a signed 64-bit integer.
WRITE_LOCK = int.from_bytes(b"skate-lb", "big")
ROOM = 1 << 20  # bytes: with less free beside a SQLite store, an I/O error opening it is a full disk
REFIT_DUE = "refit_due"  # the meta key set while banked runs wait for their refit
# Where an add is (adds.status), in order; each step is stored in the transaction that ends the
# one before, so a process killed anywhere leaves the add at a step it can go on from.
ADD_STEPS = ("placing", "setting", "banked", "done")


class StoreError(ValueError):
    """The store cannot be used as asked; the message says what to do instead."""


class DiskFull(StoreError):
    """The disk holding the store is full: nothing of the write was stored."""


@dataclass(frozen=True)
class Imported:
    """What one import added (all zero: the run was on the board already)."""

    run: str
    game: str
    tasks: int
    responses: int
    models: list[str]
    already: bool = False
    run_id: int | None = None  # its row in the runs table


@dataclass(frozen=True)
class Response:
    model: str
    task: int  # the task's row id
    correct: int
    samples: int


@dataclass(frozen=True)
class BankedTask:
    """A task of the bank as stored: its row id, game, run, id in the run, setter and body."""

    id: int
    game: str
    run_id: int
    task_id: str
    setter: str
    created: float
    body: dict[str, Any]
    difficulty: float | None
    difficulty_sd: float | None
    exposure: int
    placed: int
    retired: bool

    def task(self) -> Task:
        """The task as its game asks and grades it: its event's fields read by the event schema."""
        return parse_as({"event": TaskSet.event, **self.body}, TaskSet).task()


class Store:
    """One leaderboard database. Open it with :meth:`open`."""

    def __init__(self, engine: Engine, where: str) -> None:
        self.engine, self.where = engine, where

    @classmethod
    def open(cls, where: str | os.PathLike[str], create: bool = True) -> Store:
        """The store at ``where`` (a path or a URL), made (tables and version) when new and
        ``create``. A store made by a newer skate, or a file that is not a store, is refused."""
        url = url_of(where)
        if url.startswith("sqlite:"):
            path = Path(url.removeprefix("sqlite:///"))
            if not path.exists() and not create:
                raise StoreError(f"no leaderboard at {path}: make one with skate leaderboard import RUN_DIR")
            if path.exists() and path.is_dir():
                raise StoreError(f"{path} is a folder: give the leaderboard's file (e.g. {path / 'board.db'})")
            path.parent.mkdir(parents=True, exist_ok=True)
            engine = _sqlite_engine(url)
        else:
            try:
                engine = sa.create_engine(url, pool_pre_ping=True)
            except (ImportError, sa.exc.ArgumentError, sa.exc.NoSuchModuleError) as exc:
                raise StoreError(f"cannot open the leaderboard at {where}: {exc}") from None
        store = cls(engine, os.fspath(where))
        store._prepare(create)
        return store

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ schema and version
    def _prepare(self, create: bool) -> None:
        try:
            with self.engine.connect() as conn:
                names = set(sa.inspect(conn).get_table_names())
        except sa.exc.OperationalError as exc:
            # First: OperationalError is a DatabaseError. A server that cannot be reached (or a
            # SQLite file that cannot be opened); psycopg's message spans lines, the error is one.
            full = self._disk_full(exc.orig, "the board cannot be opened until there is room for its write-ahead log")
            if full is not None:
                raise DiskFull(full) from None
            raise StoreError(
                f"cannot reach the leaderboard at {self.where}: {' '.join(str(exc.orig).split())}"
            ) from None
        except sa.exc.DatabaseError as exc:
            raise StoreError(
                f"{self.where} is not a leaderboard store ({type(exc.orig).__name__}: {str(exc.orig).strip()})"
            ) from None
        if "meta" in names:
            self._check_version()
            return
        if names - {"meta"} and not names & set(metadata.tables):
            raise StoreError(
                f"{self.where} holds other tables ({', '.join(sorted(names)[:5])}): "
                "give a new file or an empty database for the leaderboard"
            )
        if not create:
            raise StoreError(f"{self.where} is not a leaderboard store yet: make one with skate leaderboard import")
        with self.transaction() as conn:
            metadata.create_all(conn, checkfirst=True)
            if conn.execute(sa.select(meta.c.value).where(meta.c.key == "schema_version")).first() is None:
                conn.execute(
                    meta.insert(),
                    [
                        {"key": "schema_version", "value": str(SCHEMA_VERSION)},
                        {"key": "created", "value": repr(time.time())},
                    ],
                )

    def _check_version(self) -> None:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(meta.c.value).where(meta.c.key == "schema_version")).first()
        version = int(row[0]) if row else 0
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.where} was made by a newer skate (store version {version}; this skate reads "
                f"up to {SCHEMA_VERSION}): upgrade skate to use it"
            )

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """One write transaction: committed when the block ends, rolled back if it raises.
        Read through ``conn`` inside it, not through the store's own reading methods (on SQLite
        those would wait for this transaction's lock). A full disk raises :class:`StoreError`
        in one line; the transaction is rolled back, so the store keeps what it held before."""
        try:
            with self.engine.connect() as conn:
                conn.execution_options(**{WRITE: True})
                with conn.begin():
                    if conn.dialect.name == "postgresql":
                        # One writer at a time, as SQLite's BEGIN IMMEDIATE: a write reads before it
                        # writes (the latest snapshot that an add's extends, whether a run is banked
                        # already), and under READ COMMITTED two writers would both read the same rows
                        # and the second's write would drop the first's. Each statement after the lock
                        # sees every earlier writer's commit. (SERIALIZABLE would raise instead, to be
                        # retried, and every caller's block would have to be replayable: the writes
                        # here are short, so taking turns costs little.) Readers never wait on it.
                        conn.exec_driver_sql(f"SET LOCAL lock_timeout = '{BUSY_TIMEOUT_S}s'")
                        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(WRITE_LOCK)))
                    yield conn
        except sa.exc.OperationalError as exc:
            full = self._disk_full(exc.orig)
            if full is None:
                raise
            raise DiskFull(full) from None

    def _disk_full(self, error: BaseException | None, doing: str = "nothing of this write was stored") -> str | None:
        """What to say when ``error`` (the driver's) comes of a full disk; None when it does not.
        SQLite says so (SQLITE_FULL) when a write finds no room; opening the store on a full disk
        fails to make the index of its write-ahead log beside it, an I/O error, read here as a
        full disk when less than :data:`ROOM` bytes are free there."""
        kept = f"{doing}; what the board held before is all kept; free some space"
        if isinstance(error, sqlite3.Error):
            path = Path(self.engine.url.database or self.where)
            code = getattr(error, "sqlite_errorcode", 0)
            full = code == sqlite3.SQLITE_FULL or "database or disk is full" in str(error)
            if not full and code & 0xFF == sqlite3.SQLITE_IOERR:
                with contextlib.suppress(OSError):
                    room = os.statvfs(path.parent)
                    full = room.f_bavail * room.f_frsize < ROOM
            return f"the disk holding {path} is full: {kept} there and run the command again" if full else None
        if getattr(error, "sqlstate", None) == "53100":  # PostgreSQL's disk_full
            said = str(error).strip().splitlines()[0]
            return (
                f"the PostgreSQL server of {self.where} is out of disk space ({said}): {kept} on the server and run "
                "the command again"
            )
        return None

    def refit_due(self) -> bool:
        """Whether runs banked by ``skate leaderboard import`` wait for a refit (a refit cut
        short: the next import or refit makes it)."""
        with self.engine.connect() as conn:
            return conn.execute(sa.select(meta.c.value).where(meta.c.key == REFIT_DUE)).first() is not None

    def set_refit_due(self, conn: Connection, due: bool) -> None:
        conn.execute(sa.delete(meta).where(meta.c.key == REFIT_DUE))
        if due:
            conn.execute(meta.insert().values(key=REFIT_DUE, value="1"))

    def version(self, conn: Connection | None = None) -> tuple[int, int]:
        """What a fit reads, in two numbers that grow with every write of it: the responses and
        the latest snapshot's id (a refit writes its fit only if they are the same as when it read)."""
        with self._reading(conn) as c:
            return (
                int(c.execute(sa.select(sa.func.count()).select_from(responses)).scalar_one()),
                int(c.execute(sa.select(sa.func.coalesce(sa.func.max(snapshots.c.id), 0))).scalar_one()),
            )

    @contextmanager
    def writing(self, conn: Connection | None = None) -> Iterator[Connection]:
        """``conn`` (a caller's write transaction, which the caller commits), else a transaction
        of its own (:meth:`transaction`)."""
        if conn is not None:
            yield conn
            return
        with self.transaction() as own:
            yield own

    @contextmanager
    def _reading(self, conn: Connection | None) -> Iterator[Connection]:
        """``conn`` (a write transaction's, read through inside it), else a connection of its own."""
        if conn is not None:
            yield conn
            return
        with self.engine.connect() as own:
            yield own

    # ------------------------------------------------------------------ models
    def model_id(self, conn: Connection, name: str) -> int | None:
        row = conn.execute(sa.select(models.c.id).where(models.c.name == name)).first()
        return int(row[0]) if row else None

    def ensure_model(self, conn: Connection, name: str, kind: str, spec: Mapping[str, Any], how: str) -> int:
        """The model's row id, adding it if new; a model of that name with another spec is refused."""
        text = canonical(spec)
        row = conn.execute(sa.select(models.c.id, models.c.spec).where(models.c.name == name)).first()
        if row is not None:
            if row[1] != text:
                raise StoreError(
                    f"the board's model {name!r} is played by {row[1]}, not {text}: give the new one another name"
                )
            return int(row[0])
        return _new_id(
            conn.execute(models.insert().values(name=name, kind=kind, spec=text, added=time.time(), how=how))
        )

    def models(self) -> list[dict[str, Any]]:
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(models).order_by(models.c.id)).mappings().all()
        return [{**r, "spec": json.loads(r["spec"])} for r in rows]

    # ------------------------------------------------------------------ runs and tasks
    def run_key(self, conn: Connection, key: str) -> int | None:
        row = conn.execute(sa.select(runs.c.id).where(runs.c.key == key)).first()
        return int(row[0]) if row else None

    def add_run(
        self,
        conn: Connection,
        key: str,
        path: str,
        game: str,
        config: Mapping[str, Any],
        config_version: int | None,
        played: float | None,
    ) -> int:
        return _new_id(
            conn.execute(
                runs.insert().values(
                    key=key,
                    path=path,
                    game=game,
                    config=canonical(config),
                    config_version=config_version,
                    played=played,
                    imported=time.time(),
                )
            )
        )

    def run_config(self, run_id: int) -> tuple[dict[str, Any], int | None]:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(runs.c.config, runs.c.config_version).where(runs.c.id == run_id)).one()
        return json.loads(row[0]), row[1]

    def add_task(
        self,
        conn: Connection,
        run_id: int,
        game: str,
        task_id: str,
        setter: str,
        created: float,
        body: Mapping[str, Any],
    ) -> int:
        return _new_id(
            conn.execute(
                tasks.insert().values(
                    run_id=run_id, game=game, task_id=task_id, setter=setter, created=created, body=canonical(body)
                )
            )
        )

    def games(self, conn: Connection | None = None) -> list[str]:
        """The games the bank holds tasks of (read through ``conn``, a write transaction's, when given)."""
        with self._reading(conn) as c:
            return [r[0] for r in c.execute(sa.select(tasks.c.game).distinct().order_by(tasks.c.game))]

    def not_overall(self) -> list[str]:
        """The models on a game's latest board but not on the latest overall one: placed (``add``)
        since the last refit on a bank of several games, whose overall fit pools them all."""
        overall = {r["model"] for r in self.board(OVERALL)[1]}
        return sorted({r["model"] for g in self.games() for r in self.board(g)[1]} - overall)

    def being_added(self) -> list[str]:
        """The models whose add has not finished (under way, or stopped and not run again)."""
        with self.engine.connect() as conn:
            return sorted(
                set(
                    conn.execute(
                        sa.select(models.c.name)
                        .join(adds, adds.c.model_id == models.c.id)
                        .where(adds.c.status != "done")
                    ).scalars()
                )
            )

    def tasks(
        self,
        game: str | None = None,
        ids: Iterable[int] | None = None,
        retired: bool | None = None,
        run_id: int | None = None,
        conn: Connection | None = None,
    ) -> list[BankedTask]:
        q = sa.select(tasks)
        if game is not None:
            q = q.where(tasks.c.game == game)
        if ids is not None:
            q = q.where(tasks.c.id.in_(list(ids)))
        if retired is not None:
            q = q.where(tasks.c.retired == retired)
        if run_id is not None:
            q = q.where(tasks.c.run_id == run_id)
        with self._reading(conn) as c:
            rows = c.execute(q.order_by(tasks.c.id)).mappings().all()
        return [_banked(r) for r in rows]

    def candidates(self, game: str, model: str, theta: float, max_placed: int, limit: int) -> list[BankedTask]:
        """Up to ``limit`` tasks of ``game`` that ``model`` has not answered, neither retired nor
        shown to ``max_placed`` models being added already, nearest in difficulty to ``theta``
        first (for a Rasch item, the nearest is the most informative)."""
        answered = (
            sa.select(responses.c.task_id)
            .join(models, models.c.id == responses.c.model_id)
            .where(models.c.name == model)
        )
        usable = (
            tasks.c.game == game,
            tasks.c.retired == sa.false(),
            tasks.c.placed < max_placed,
            tasks.c.id.not_in(answered),
        )
        # The nearest above and the nearest below, each a walk along the (game, retired, difficulty)
        # index from theta, then merged: ordering by |difficulty - theta| would read every task.
        up = sa.select(tasks).where(*usable, tasks.c.difficulty >= theta).order_by(tasks.c.difficulty, tasks.c.id)
        down = (
            sa.select(tasks).where(*usable, tasks.c.difficulty < theta).order_by(tasks.c.difficulty.desc(), tasks.c.id)
        )
        with self.engine.connect() as conn:
            found = [_banked(r) for q in (up, down) for r in conn.execute(q.limit(limit)).mappings()]
        # every one found has a difficulty (a NULL one is neither >= theta nor < theta)
        return sorted(
            found, key=lambda t: (abs(t.difficulty - theta) if t.difficulty is not None else float("inf"), t.id)
        )[:limit]

    def set_difficulty(self, conn: Connection, values: Mapping[int, tuple[float, float | None]]) -> None:
        """Each task's fitted difficulty (and its sd), by row id."""
        if values:
            conn.execute(
                sa.update(tasks)
                .where(tasks.c.id == sa.bindparam("tid"))
                .values(difficulty=sa.bindparam("b"), difficulty_sd=sa.bindparam("sd")),
                [{"tid": t, "b": b, "sd": sd} for t, (b, sd) in values.items()],
            )

    # ------------------------------------------------------------------ responses
    def record(
        self,
        conn: Connection,
        model_id: int,
        task: int,
        correct: int,
        samples: int,
        how: str,
        max_placed: int | None = None,
    ) -> bool:
        """One model's graded samples on one task; False (nothing changed) if it had answered it,
        or, for a model being added (``how="add"``), if ``max_placed`` others being added had
        answered it already (another add took the last place meanwhile). The task's ``exposure``
        counts the models that answered it, ``placed`` those of them being added."""
        if (
            conn.execute(
                sa.select(responses.c.task_id).where(responses.c.model_id == model_id, responses.c.task_id == task)
            ).first()
            is not None
        ):
            return False
        bump = {"exposure": tasks.c.exposure + 1}
        where = [tasks.c.id == task]
        if how == "add":
            bump["placed"] = tasks.c.placed + 1
            if max_placed is not None:
                where.append(tasks.c.placed < max_placed)
        if conn.execute(sa.update(tasks).where(*where).values(**bump)).rowcount != 1:
            return False
        conn.execute(
            responses.insert().values(
                model_id=model_id, task_id=task, correct=int(correct), samples=int(samples), at=time.time(), how=how
            )
        )
        return True

    def responses(self, game: str | None = None, conn: Connection | None = None) -> list[Response]:
        q = sa.select(models.c.name, responses.c.task_id, responses.c.correct, responses.c.samples).join(
            models, models.c.id == responses.c.model_id
        )
        if game is not None:
            q = q.join(tasks, tasks.c.id == responses.c.task_id).where(tasks.c.game == game)
        with self._reading(conn) as c:
            return [Response(*r) for r in c.execute(q.order_by(responses.c.task_id, models.c.name))]

    def model_responses(
        self, model: str, game: str | None = None
    ) -> list[tuple[int, int, int, float | None, float | None]]:
        """(task row id, correct, samples, the task's difficulty and its sd) of each task ``model``
        answered."""
        q = (
            sa.select(
                responses.c.task_id, responses.c.correct, responses.c.samples, tasks.c.difficulty, tasks.c.difficulty_sd
            )
            .join(models, models.c.id == responses.c.model_id)
            .join(tasks, tasks.c.id == responses.c.task_id)
            .where(models.c.name == model)
        )
        if game is not None:
            q = q.where(tasks.c.game == game)
        with self.engine.connect() as conn:
            return [tuple(r) for r in conn.execute(q.order_by(responses.c.task_id))]

    def run_paths(self) -> dict[int, str]:
        """Each run's row id and the folder it was imported from."""
        with self.engine.connect() as conn:
            return {int(i): str(p) for i, p in conn.execute(sa.select(runs.c.id, runs.c.path))}

    def latest_run(self, game: str) -> int | None:
        """The row id of the last run of ``game`` imported (whose settings an add plays with)."""
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(runs.c.id).where(runs.c.game == game).order_by(runs.c.id.desc())).first()
        return int(row[0]) if row else None

    # ------------------------------------------------------------------ adds
    def add_state(self, model: str, game: str) -> dict[str, Any] | None:
        with self.engine.connect() as conn:
            row = (
                conn.execute(
                    sa.select(adds)
                    .join(models, models.c.id == adds.c.model_id)
                    .where(models.c.name == model, adds.c.game == game)
                )
                .mappings()
                .first()
            )
        return dict(row) if row else None

    def start_add(self, conn: Connection, model_id: int, game: str, budget: int) -> None:
        if conn.execute(sa.select(adds.c.status).where(adds.c.model_id == model_id, adds.c.game == game)).first():
            conn.execute(sa.update(adds).where(adds.c.model_id == model_id, adds.c.game == game).values(budget=budget))
            return
        conn.execute(
            adds.insert().values(
                model_id=model_id, game=game, status="placing", calls=0, budget=budget, started=time.time(), detail=""
            )
        )

    def update_add(self, conn: Connection, model_id: int, game: str, calls: int = 0, **values: Any) -> None:
        """Add ``calls`` to the add's count and set any other column given."""
        if values.get("status") == "done":
            values.setdefault("ended", time.time())
        conn.execute(
            sa.update(adds)
            .where(adds.c.model_id == model_id, adds.c.game == game)
            .values(calls=adds.c.calls + int(calls), **values)
        )

    # ------------------------------------------------------------------ snapshots
    def snapshot(
        self, conn: Connection, game: str, why: str, fit: Mapping[str, Any], rows: Iterable[Mapping[str, Any]]
    ) -> int:
        """A fit's table (``rows``: model, score, lo, hi, sd, rank, tasks) for ``game``."""
        sid = _new_id(conn.execute(snapshots.insert().values(at=time.time(), game=game, why=why, fit=canonical(fit))))
        ids = dict(conn.execute(sa.select(models.c.name, models.c.id)).all())
        values = [
            {
                "snapshot_id": sid,
                "model_id": ids[r["model"]],
                **{k: r.get(k) for k in ("score", "lo", "hi", "sd", "rank")},
                "tasks": int(r.get("tasks") or 0),
            }
            for r in rows
        ]
        if values:
            conn.execute(ratings.insert(), values)
        return sid

    def board(
        self, game: str = OVERALL, conn: Connection | None = None
    ) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        """The latest snapshot of ``game`` (``""``: overall): its record and its rows by rank
        (read through ``conn``, a write transaction's, when given)."""
        if conn is None:
            with self.engine.connect() as own:
                return self.board(game, own)
        snap = (
            conn.execute(sa.select(snapshots).where(snapshots.c.game == game).order_by(snapshots.c.id.desc()).limit(1))
            .mappings()
            .first()
        )
        if snap is None:
            return None, []
        rows = (
            conn.execute(
                sa.select(
                    models.c.name.label("model"),
                    ratings.c.score,
                    ratings.c.lo,
                    ratings.c.hi,
                    ratings.c.sd,
                    ratings.c.rank,
                    ratings.c.tasks,
                )
                .join(models, models.c.id == ratings.c.model_id)
                .where(ratings.c.snapshot_id == snap["id"])
            )
            .mappings()
            .all()
        )
        out = sorted((dict(r) for r in rows), key=lambda r: (r["rank"] is None, r["rank"] or 0, r["model"]))
        return {**snap, "fit": json.loads(snap["fit"])}, out

    def counts(self) -> dict[str, int]:
        """How many rows each table holds (models, runs, tasks, responses, snapshots)."""
        with self.engine.connect() as conn:
            return {
                t.name: int(conn.execute(sa.select(sa.func.count()).select_from(t)).scalar_one())
                for t in (models, runs, tasks, responses, snapshots, adds)
            }


def canonical(value: Any) -> str:
    """JSON with sorted keys: equal values give equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def digest(text: str | bytes) -> str:
    return hashlib.sha256(text if isinstance(text, bytes) else text.encode()).hexdigest()[:32]


def _new_id(inserted: CursorResult[Any]) -> int:
    """The row id of the one row an insert added."""
    key = inserted.inserted_primary_key
    if key is None:
        raise StoreError("the database gave no row id for a row just added")
    return int(key[0])


def _banked(r: RowMapping) -> BankedTask:
    return BankedTask(
        id=int(r["id"]),
        game=r["game"],
        run_id=int(r["run_id"]),
        task_id=r["task_id"],
        setter=r["setter"],
        created=float(r["created"]),
        body=json.loads(r["body"]),
        difficulty=r["difficulty"],
        difficulty_sd=r["difficulty_sd"],
        exposure=int(r["exposure"]),
        placed=int(r["placed"]),
        retired=bool(r["retired"]),
    )

"""The leaderboard's database, below its store (:mod:`skate.leaderboard.store`): where it lives
(:func:`url_of`: a path is a SQLite file, a URL names any database SQLAlchemy reaches), how a
SQLite file is opened (:func:`_sqlite_engine`: its pragmas, and a writer's lock taken as its
transaction begins), and the tables.

Tables (:data:`metadata`):

``meta``
    ``schema_version`` (:data:`SCHEMA_VERSION`): a store made by a newer skate is refused;
    ``refit_due`` while runs banked by ``skate leaderboard import`` wait for their refit.
``models``
    one row per model on the board: its name (unique), what plays it (``spec``, JSON: the player's
    entry of the config, ``players.simulated`` or ``players.llm``), when it was added and how.
``runs``
    each imported run, keyed by a digest of its first event (the same run imported again, from
    any path, is the same row), with the settings it was recorded with (to ask its tasks again).
``tasks``
    each banked task: its game, run, id in the run, setter, when it was set, ``body`` (JSON: what
    its ``task`` event recorded, enough to ask and grade it again), fitted difficulty, exposure
    (how many models have answered it) and whether it is retired.
``responses``
    one per model and task: ``correct`` of ``samples`` graded answer samples.
``adds``
    each placement of a model on a game's board (``skate leaderboard add``): where it is
    (:data:`~skate.leaderboard.store.ADD_STEPS`), the calls it has made and its budget, so that an
    interrupted add goes on where it stopped.
``snapshots`` / ``ratings``
    each fit's table, per game and overall (``game`` ``""``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

SCHEMA_VERSION = 1
BUSY_TIMEOUT_S = 60
WRITE = "skate_write"  # the execution option of a connection that writes (store.transaction)

metadata = sa.MetaData()

meta = sa.Table(
    "meta", metadata, sa.Column("key", sa.String(64), primary_key=True), sa.Column("value", sa.Text, nullable=False)
)

models = sa.Table(
    "models",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(200), nullable=False, unique=True),
    sa.Column("kind", sa.String(32), nullable=False),  # simulated | llm
    sa.Column("spec", sa.Text, nullable=False),  # JSON: the player's config entry
    sa.Column("added", sa.Float, nullable=False),  # unix time
    sa.Column("how", sa.String(16), nullable=False),
)  # import | add

runs = sa.Table(
    "runs",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("key", sa.String(64), nullable=False, unique=True),
    sa.Column("path", sa.Text, nullable=False),
    sa.Column("game", sa.String(64), nullable=False),
    sa.Column("config", sa.Text, nullable=False),  # JSON: the run's recorded config
    sa.Column("config_version", sa.Integer, nullable=True),
    sa.Column("played", sa.Float, nullable=True),  # when it started (unix time)
    sa.Column("imported", sa.Float, nullable=False),
)

tasks = sa.Table(
    "tasks",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id"), nullable=False),
    sa.Column("game", sa.String(64), nullable=False),
    sa.Column("task_id", sa.String(200), nullable=False),
    sa.Column("setter", sa.String(200), nullable=False),
    sa.Column("created", sa.Float, nullable=False),  # unix time it was set
    sa.Column("body", sa.Text, nullable=False),  # JSON: the task event's fields
    sa.Column("difficulty", sa.Float, nullable=True),  # logits, on the game's board scale
    sa.Column("difficulty_sd", sa.Float, nullable=True),
    sa.Column("exposure", sa.Integer, nullable=False, server_default="0"),  # models that answered it
    sa.Column("placed", sa.Integer, nullable=False, server_default="0"),  # ... of them while being added
    sa.Column("retired", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.UniqueConstraint("run_id", "task_id"),
    sa.Index("tasks_pick", "game", "retired", "difficulty"),
)

responses = sa.Table(
    "responses",
    metadata,
    sa.Column("model_id", sa.Integer, sa.ForeignKey("models.id"), primary_key=True),
    sa.Column("task_id", sa.Integer, sa.ForeignKey("tasks.id"), primary_key=True),
    sa.Column("correct", sa.Integer, nullable=False),
    sa.Column("samples", sa.Integer, nullable=False),
    sa.Column("at", sa.Float, nullable=False),
    sa.Column("how", sa.String(16), nullable=False),  # run | add
    sa.Index("responses_task", "task_id"),
)

snapshots = sa.Table(
    "snapshots",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("at", sa.Float, nullable=False),
    sa.Column("game", sa.String(64), nullable=False),  # "" = overall
    sa.Column("why", sa.String(64), nullable=False),  # refit | add:<model>
    sa.Column("fit", sa.Text, nullable=False),  # JSON: the fit's own numbers
    sa.Index("snapshots_game", "game", "id"),
)

ratings = sa.Table(
    "ratings",
    metadata,
    sa.Column("snapshot_id", sa.Integer, sa.ForeignKey("snapshots.id"), primary_key=True),
    sa.Column("model_id", sa.Integer, sa.ForeignKey("models.id"), primary_key=True),
    sa.Column("score", sa.Float, nullable=True),
    sa.Column("lo", sa.Float, nullable=True),
    sa.Column("hi", sa.Float, nullable=True),
    sa.Column("sd", sa.Float, nullable=True),
    sa.Column("rank", sa.Integer, nullable=True),
    sa.Column("tasks", sa.Integer, nullable=False),
)


adds = sa.Table(
    "adds",
    metadata,
    sa.Column("model_id", sa.Integer, sa.ForeignKey("models.id"), primary_key=True),
    sa.Column("game", sa.String(64), primary_key=True),
    sa.Column("status", sa.String(16), nullable=False),  # ADD_STEPS: placing | setting | banked | done
    sa.Column("calls", sa.Integer, nullable=False, server_default="0"),  # answer samples and setter attempts
    sa.Column("budget", sa.Integer, nullable=False),
    sa.Column("started", sa.Float, nullable=False),
    sa.Column("ended", sa.Float, nullable=True),
    sa.Column("detail", sa.Text, nullable=False, server_default=""),
)  # why it stopped


def url_of(where: str | os.PathLike[str]) -> str:
    """The database URL of ``where``: a URL as given (``postgresql://`` through psycopg), a path
    as a SQLite file."""
    text = os.fspath(where)
    if "://" not in text:
        return f"sqlite:///{Path(text).expanduser().resolve()}"
    scheme, _, rest = text.partition("://")
    if scheme in ("postgresql", "postgres"):
        return f"postgresql+psycopg://{rest}"
    return text


def _sqlite_engine(url: str) -> Engine:
    engine = sa.create_engine(url)

    @sa.event.listens_for(engine, "connect")
    def _connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # transactions begin below, not in the driver
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_S * 1000}")
        cur.execute("PRAGMA foreign_keys = ON")
        cur.execute("PRAGMA journal_mode = WAL")  # readers do not wait for a writer
        cur.close()

    @sa.event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        # A writer takes the write lock now, not at its first write (two writers that both read
        # first would otherwise deadlock); a reader takes none (WAL: it reads a snapshot).
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(WRITE) else "BEGIN")

    return engine

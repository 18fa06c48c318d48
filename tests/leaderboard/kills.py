"""Killing ``skate leaderboard add`` and ``import`` at chosen store writes, and comparing stores.

A **point** is where the process is killed, counted over its store statements:
``("write", n)`` right after its nth write statement (INSERT, UPDATE, DELETE or CREATE) has run,
its transaction still open; ``("commit", n)`` right after its nth commit has returned. The counts
come from SQLAlchemy's ``after_cursor_execute`` event and a wrapper of the dialect's commit,
installed only in the process they watch (:class:`Watch`); skate itself has no hook. The killed
process is a fork of this one (:func:`killed`): it runs skate's command line and sends itself
SIGKILL at the point, so nothing of its own runs after the kill, as when a user or the machine
kills it; a fork costs no start-up, so the suite can afford a few points.

:func:`trace` runs a command here, uninterrupted, and records each statement and commit with the
step of skate it belongs to (:func:`phase`) and the store after every commit (:func:`dump`). A
store killed at a point must then hold exactly the traced store after its last commit before the
point (nothing half written), and the command run again must leave exactly the traced final
store. :func:`dump` reads every table with what legitimately differs between two runs taken out:

- surrogate ids (``id`` columns, and the foreign keys to them): each row is named by what it is
  instead (a model by its name, a run by its folder, a task by its run and id in the run, a
  snapshot by its game and place among that game's snapshots). PostgreSQL does not hand back the
  sequence numbers a killed transaction took, so ids may skip there;
- wall-clock times: ``models.added``, ``runs.imported``, ``runs.played``, ``tasks.created``,
  ``responses.at``, ``snapshots.at``, ``adds.started``, ``adds.ended`` (whether it is set is
  kept), ``meta.created``;
- ``runs.key``, a digest of a run's first event, which holds its start time: the setting game an
  add plays is played again in each trial. Runs are named by their folder, with each trial's own
  folder written ``<root>``.

Floats are compared to 9 decimals.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
import traceback
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import default

WRITES = ("INSERT", "UPDATE", "DELETE", "CREATE")
LOCKS = ("BEGIN IMMEDIATE", "SELECT pg_advisory_xact_lock")  # a writer asking for the write lock

# The step of skate a statement belongs to: the innermost of these functions on the stack.
PHASES = {
    "import_run": "banking a run",
    "refit": "refit",
    "_fits": "refit",
    "add": "the add's steps",
    "_place": "a banked task's answer",
    "_set_tasks": "banking its own tasks",
    "_snapshot": "its snapshot",
}
STORE = "making the store"


def phase() -> str:
    """The step of skate running now (:data:`PHASES`); a run banked by an add's setting game is
    that add's "banking its own tasks"."""
    names = []  # innermost first
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name in PHASES and f"{os.sep}skate{os.sep}leaderboard{os.sep}" in code.co_filename:
            names.append(code.co_name)
        frame = frame.f_back
    if not names:
        return STORE
    return PHASES["_set_tasks" if "_set_tasks" in names else names[0]]


@dataclass
class Watch:
    """Counts this process's store writes and commits while entered, calling ``on_write(n,
    statement)`` after the nth write statement, ``on_commit(n)`` after the nth commit and
    ``on_lock()`` before a writer asks for the write lock."""

    on_write: Callable[[int, str], None] = lambda n, s: None
    on_commit: Callable[[int], None] = lambda n: None
    on_lock: Callable[[], None] = lambda: None
    writes: int = 0
    commits: int = 0
    quiet: bool = False  # set while the watcher itself reads the store

    def __enter__(self) -> Watch:
        real = default.DefaultDialect.do_commit
        self._real = real
        watch = self

        def do_commit(dialect: Any, dbapi_connection: Any) -> None:
            real(dialect, dbapi_connection)
            if not watch.quiet:
                watch.commits += 1
                watch.on_commit(watch.commits)

        default.DefaultDialect.do_commit = do_commit  # type: ignore[method-assign]
        sa.event.listen(sa.engine.Engine, "before_cursor_execute", self._before)
        sa.event.listen(sa.engine.Engine, "after_cursor_execute", self._after)
        return self

    def __exit__(self, *exc: Any) -> None:
        default.DefaultDialect.do_commit = self._real  # type: ignore[method-assign]
        sa.event.remove(sa.engine.Engine, "before_cursor_execute", self._before)
        sa.event.remove(sa.engine.Engine, "after_cursor_execute", self._after)

    def _before(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if not self.quiet and statement.lstrip().startswith(LOCKS):
            self.on_lock()

    def _after(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if not self.quiet and statement.lstrip().upper().startswith(WRITES):
            self.writes += 1
            self.on_write(self.writes, statement)


# ------------------------------------------------------------------ the store, row by row
def _f(x: Any) -> Any:
    if isinstance(x, float):
        return round(x, 9)
    if isinstance(x, dict):
        return {k: _f(v) for k, v in sorted(x.items())}
    if isinstance(x, list):
        return [_f(v) for v in x]
    return x


def dump(where: str, root: Path | None = None) -> dict[str, list[tuple]]:
    """Every table of the store at ``where`` (``--store``: a path or a URL),
    each row without what legitimately differs between runs (this module's docstring), sorted.
    A store not made yet dumps as empty tables."""
    from skate.leaderboard import database as st

    url = st.url_of(where)
    empty: dict[str, list[tuple]] = {
        t: [] for t in ("meta", "models", "runs", "tasks", "responses", "adds", "snapshots", "ratings")
    }
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            if "meta" not in sa.inspect(conn).get_table_names():
                return empty
            read = lambda t: [dict(r) for r in conn.execute(sa.select(t)).mappings()]  # noqa: E731
            meta, models, runs, tasks, responses, adds, snapshots, ratings = (
                read(t)
                for t in (st.meta, st.models, st.runs, st.tasks, st.responses, st.adds, st.snapshots, st.ratings)
            )
    finally:
        engine.dispose()
    where = str(root) if root is not None else None
    model = {m["id"]: m["name"] for m in models}
    run = {r["id"]: (r["path"].replace(where, "<root>") if where else r["path"]) for r in runs}
    task = {t["id"]: (run[t["run_id"]], t["task_id"]) for t in tasks}
    nth: dict[str, int] = defaultdict(int)
    snap = {}
    for s in sorted(snapshots, key=lambda s: s["id"]):
        snap[s["id"]] = (s["game"], nth[s["game"]])
        nth[s["game"]] += 1
    out = {
        "meta": [(m["key"], m["value"]) for m in meta if m["key"] != "created"],
        "models": [(m["name"], m["kind"], m["spec"], m["how"]) for m in models],
        "runs": [(run[r["id"]], r["game"], r["config"], r["config_version"]) for r in runs],
        "tasks": [
            (
                *task[t["id"]],
                t["game"],
                t["setter"],
                t["body"],
                _f(t["difficulty"]),
                _f(t["difficulty_sd"]),
                t["exposure"],
                t["placed"],
                bool(t["retired"]),
            )
            for t in tasks
        ],
        "responses": [
            (model[r["model_id"]], *task[r["task_id"]], r["correct"], r["samples"], r["how"]) for r in responses
        ],
        "adds": [
            (model[a["model_id"]], a["game"], a["status"], a["calls"], a["budget"], a["detail"], a["ended"] is not None)
            for a in adds
        ],
        "snapshots": [(*snap[s["id"]], s["why"], json.dumps(_f(json.loads(s["fit"])))) for s in snapshots],
        "ratings": [
            (
                *snap[r["snapshot_id"]],
                model[r["model_id"]],
                *(_f(r[k]) for k in ("score", "lo", "hi", "sd")),
                r["rank"],
                r["tasks"],
            )
            for r in ratings
        ],
    }
    return {k: sorted(v, key=repr) for k, v in out.items()}


def differences(got: dict[str, list[tuple]], want: dict[str, list[tuple]]) -> list[str]:
    """What ``got`` holds that ``want`` does not, and the other way, table by table (at most three
    rows each way)."""
    out = []
    for table in want:
        extra = list(got[table])
        missing = []
        for row in want[table]:
            if row in extra:
                extra.remove(row)
            else:
                missing.append(row)
        if extra or missing:
            out.append(f"{table}: {len(extra)} rows more ({extra[:3]}), {len(missing)} fewer ({missing[:3]})")
    return out


# ------------------------------------------------------------------ a run traced, a run killed
@dataclass(frozen=True)
class Event:
    kind: str  # write | commit
    n: int  # the nth of its kind
    phase: str
    what: str  # a write's verb and table; "" for a commit
    commits_before: int  # commits returned before it (for a commit: those before it and itself)


@dataclass
class Trace:
    """An uninterrupted run: its statements and commits, and the store after each commit
    (``states[j]``: after j commits; ``states[-1]``: at the end)."""

    events: list[Event] = field(default_factory=list)
    states: list[dict[str, list[tuple]]] = field(default_factory=list)
    output: str = ""


def _what(statement: str) -> str:
    words = statement.split()
    verb = words[0].upper()
    table = (
        words[2] if verb in ("INSERT", "DELETE", "CREATE") and len(words) > 2 else words[1] if len(words) > 1 else ""
    )
    return f"{verb} {table.strip(chr(34))}"


def trace(command: list[str], where: str, root: Path) -> Trace:
    """Run ``skate`` ``command`` here, uninterrupted, on the store at ``where`` (its folders under
    ``root``), recording it (:class:`Trace`)."""
    from skate.cli import main

    got = Trace(states=[dump(where, root)])
    watch = Watch()

    def on_write(n: int, statement: str) -> None:
        got.events.append(Event("write", n, phase(), _what(statement), watch.commits))

    def on_commit(n: int) -> None:
        got.events.append(Event("commit", n, phase(), "", n))
        watch.quiet = True
        try:
            got.states.append(dump(where, root))
        finally:
            watch.quiet = False

    watch.on_write, watch.on_commit = on_write, on_commit
    out = Path(root) / "trace.out"
    with watch, _output_to(out):
        code = main(command)
    got.output = out.read_text()
    assert code == 0, got.output
    return got


@contextlib.contextmanager
def _output_to(path: Path) -> Iterator[None]:
    """What the command prints, to ``path``."""
    with open(path, "a") as fh, contextlib.redirect_stdout(fh), contextlib.redirect_stderr(fh):
        yield


def fork(child: Callable[[], int], log: Path) -> int:
    """Run ``child()`` in a fork of this process, its output to ``log``; the child's pid. The
    child exits with what ``child`` returns (4 if it raises), never running this process's own
    code after it."""
    sys.stdout.flush()
    sys.stderr.flush()
    with warnings.catch_warnings():
        warnings.simplefilter(
            "ignore", DeprecationWarning
        )  # "multi-threaded, fork() may deadlock": ours does not share
        pid = os.fork()
    if pid:
        return pid
    code = 4
    try:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        sys.stdout = open(1, "w", closefd=False)
        sys.stderr = open(2, "w", closefd=False)
        code = int(child())
    except BaseException:  # noqa: BLE001 - the child reports and ends here, whatever it was
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


@contextlib.contextmanager
def forked(child: Callable[[], int], log: Path) -> Iterator[int]:
    """:func:`fork` for the block: the child's pid, the child killed at the end if it still runs
    (a test that fails while a child is held at a point leaves none behind)."""
    pid = fork(child, log)
    try:
        yield pid
    finally:
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG) == (0, 0):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)


def await_file(path: Path, pid: int, log: Path, timeout: float = 300.0) -> None:
    """Wait until ``path`` exists (the child ``pid`` makes it); fails if the child ends first."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        done, _ = os.waitpid(pid, os.WNOHANG)
        assert not done, f"the child ended before making {path.name}:\n{log.read_text()[-3000:]}"
        assert time.monotonic() < deadline, f"no {path.name} after {timeout:g} s:\n{log.read_text()[-3000:]}"
        time.sleep(0.005)


def pause(name: str, folder: Path) -> None:
    """Make ``folder/name.paused``, then wait for ``folder/name.go`` (a child held at a point)."""
    (folder / f"{name}.paused").touch()
    while not (folder / f"{name}.go").exists():
        time.sleep(0.005)


def wait(pid: int, timeout: float = 300.0) -> int:
    """The child's wait status as ``subprocess`` gives it (minus the signal that ended it); it is
    killed if it has not ended within ``timeout`` seconds (a hang, reported by the caller)."""
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return -999
        time.sleep(0.005)


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def killed(command: list[str], point: tuple[str, int], log: Path) -> int:
    """Run ``skate`` ``command`` in a fork of this process that kills itself (SIGKILL) at
    ``point``; its status (``-9`` when the point was reached)."""
    from skate.cli import main

    kind, at = point

    def child() -> int:
        watch = Watch(
            on_write=lambda n, s: _die() if kind == "write" and n == at else None,
            on_commit=lambda n: _die() if kind == "commit" and n == at else None,
        )
        with watch:
            main(command)
        return 3  # the point was not reached

    return wait(fork(child, log))


# ------------------------------------------------------------------ the points
def choose(events: list[Event], n: int) -> list[Event]:
    """At least ``n`` kill points over ``events``, the same each time: in each step of skate, its
    first, middle and last write, the middle write of each of its kinds of row write (INSERT,
    UPDATE or DELETE of one table), and its first and last commit; then more, spread evenly over
    the run, until there are ``n``."""
    chosen: dict[tuple[str, int], Event] = {}
    groups: dict[tuple[str, str, str], list[Event]] = defaultdict(list)
    for e in events:
        groups[e.phase, e.kind, ""].append(e)
        if e.kind == "write" and not e.what.startswith("CREATE"):
            groups[e.phase, e.kind, e.what].append(e)
    for (_, kind, what), of in groups.items():
        picks = (
            [of[len(of) // 2]] if what else [of[0], of[len(of) // 2], of[-1]] if kind == "write" else [of[0], of[-1]]
        )
        chosen.update({(e.kind, e.n): e for e in picks})
    rest = [e for e in events if (e.kind, e.n) not in chosen]
    need = min(n - len(chosen), len(rest))
    for i in range(max(0, need)):
        e = rest[int((i + 0.5) * len(rest) / need)]
        chosen[(e.kind, e.n)] = e
    return sorted(chosen.values(), key=lambda e: events.index(e))


def pick(events: list[Event], phase_: str, kind: str, which: int | float = 0, what: str = "") -> Event:
    """The event of ``phase_`` and ``kind`` (a write: of statement ``what``, when given): the
    ``which``th (an int, negative from the end) or at that fraction of them (a float)."""
    of = [e for e in events if e.phase == phase_ and e.kind == kind and e.what.startswith(what)]
    assert of, f"no {kind} in {phase_}: {sorted({(e.phase, e.kind) for e in events})}"
    return of[int(which * (len(of) - 1))] if isinstance(which, float) else of[which]


@dataclass(frozen=True)
class Result:
    point: Event
    status: int  # the killed process's (-9: killed at the point)
    at_commit: bool  # the killed store was the traced one after its last commit before the point
    again: int  # the command run again: its exit status
    same: bool  # ... and its store was the uninterrupted run's
    why: list[str]  # what differed


def kill_and_rerun(command: list[str], where: str, root: Path, point: Event, reference: Trace) -> Result:
    """Kill ``command`` (on the store at ``where``, its folders under ``root``) at ``point``, check
    the store against the trace, run the command again here and check the store it leaves."""
    from skate.cli import main

    status = killed(command, (point.kind, point.n), root / "killed.out")
    now = dump(where, root)
    why = [f"after the kill: {d}" for d in differences(now, reference.states[point.commits_before])]
    at_commit = not why
    with _output_to(root / "again.out"):
        again = main(command)
    end = differences(dump(where, root), reference.states[-1])
    why += [f"run again: {d}" for d in end]
    return Result(point, status, at_commit, again, again == 0 and not end, why)


def describe(event: Event) -> str:
    """A point in words: ``after write 12 of transaction 4 (INSERT responses; a banked task's answer),
    before its commit``."""
    if event.kind == "write":
        return (
            f"after write {event.n} of transaction {event.commits_before + 1} ({event.what}; {event.phase}), "
            "before its commit"
        )
    return f"right after commit {event.n} ({event.phase})"

"""Banking a finished run: its rated tasks, its players as models, their graded samples.

A run's tasks are banked as its ``task`` events recorded them (prompt, answer and the game's own
data: enough to ask and grade them again with the game built from the run's settings); its
responses are the graded samples behind each p(correct) that the ratings used (the run's
:meth:`~skate.runlog.events.RunLog.rating_stream`, so a round cut off by a stop adds nothing). The run
is keyed by a digest of its first line: importing it again, from any path, changes nothing.

A run is banked in one transaction (its row, its tasks, its players and their responses), so a
process killed while it writes leaves none of it, and the run is banked whole when imported again.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Connection

from skate.errors import ConfigError
from skate.leaderboard.fit import EFFECTIVE_SAMPLES
from skate.leaderboard.store import DiskFull, Imported, Store, StoreError, digest
from skate.report.viewer import ViewerError, build_viewer
from skate.runlog.events import EVENTS_FILE, RatedTask, RunLogError, TaskSet, read_run
from skate.settings.config import SkateConfig, record_of
from skate.settings.recorded import run_settings

log = logging.getLogger(__name__)


def run_key(run_dir: Path) -> str:
    """The digest of a run's first event line (its ``run_start``: settings and start time)."""
    with open(Path(run_dir) / EVENTS_FILE, "rb") as fh:
        return digest(fh.readline().strip())


def player_specs(settings: SkateConfig, described: list[dict[str, Any]]) -> dict[str, tuple[str, dict[str, Any]]]:
    """Each player's (kind, spec): its entry of ``players.simulated`` or ``players.llm`` in the
    run's settings (what plays it again), as the run records it, else what the run's start said of it."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for kind in ("simulated", "llm"):
        for entry in getattr(settings.players, kind):
            out[entry.name] = (kind, record_of(entry))
    for d in described:
        if d["name"] not in out:
            out[d["name"]] = ("simulated" if d.get("kind") == "simulated" else "llm", dict(d))
    return out


def import_run(store: Store, run_dir: Path, refit_due: bool = False, conn: Connection | None = None) -> Imported:
    """Bank one finished run (:class:`StoreError` saying why not: no log, not finished), in one
    transaction: ``conn``'s when given (the caller's, which commits it), else its own. With
    ``refit_due`` the same transaction marks the board as due a refit (``skate leaderboard
    import``: a refit cut short is made by the next import or refit)."""
    run_dir = Path(run_dir)
    try:
        run = read_run(run_dir, what="a finished run")
    except RunLogError as exc:
        raise StoreError(str(exc)) from None
    if not run.finished:
        raise StoreError(
            f"{run_dir} holds a run that has not finished (no run_end): finish it with "
            f"skate resume={run_dir}, then import it"
        )
    start = run.start
    key = run_key(run_dir)
    stream = [t for t in run.rating_stream() if isinstance(t, RatedTask)]
    events = {e.task_id: e for e in run.of(TaskSet)}
    try:
        specs = player_specs(run_settings(start, check=False), start.players)
    except ConfigError as exc:
        raise StoreError(f"{run_dir}: {exc}") from None
    with store.writing(conn) as conn:
        known_run = store.run_key(conn, key)
        if known_run is not None:
            return Imported(str(run_dir), start.game, 0, 0, [], already=True, run_id=known_run)
        if refit_due:
            store.set_refit_due(conn, True)
        run_id = store.add_run(
            conn, key, str(run_dir.resolve()), start.game, start.config, start.get("config_version"), start.ts
        )
        ids: dict[str, int] = {}
        added: list[str] = []
        n_tasks = n_resp = 0
        for rated in stream:
            task = events.get(rated.task_id)
            if task is None or not rated.counts:
                continue
            body = task.fields()
            row = store.add_task(
                conn,
                run_id,
                start.game,
                task.task_id,
                task.setter,
                float(task.ts if task.ts is not None else start.ts or 0.0),
                body,
            )
            n_tasks += 1
            for player, (k, n) in rated.counts.items():
                if float(k).is_integer():
                    k, n = int(k), int(n)
                else:  # a read (estimator=logprobs): its share right, at the board's
                    k, n = round(k / n * EFFECTIVE_SAMPLES), EFFECTIVE_SAMPLES  # largest weight, in whole samples
                if player not in ids:
                    known = store.model_id(conn, player)
                    kind, spec = specs.get(player, ("llm", {"name": player}))
                    ids[player] = store.ensure_model(conn, player, kind, spec, "import")
                    if known is None:
                        added.append(player)
                n_resp += store.record(conn, ids[player], row, k, n, "run")
    _write_viewer(run_dir)
    return Imported(str(run_dir), start.game, n_tasks, n_resp, added, run_id=run_id)


def import_runs(store: Store, run_dirs: Iterable[Path]) -> Iterator[Imported | StoreError]:
    """Bank each finished run in turn (``skate leaderboard import``): for each, what was banked
    or the :class:`StoreError` that refused it (one line; the runs after it are still banked).
    Each run banked marks a refit due, for the caller to make (or, if cut short, the next import
    or refit). A full disk (:class:`DiskFull`) stops them all."""
    for run_dir in run_dirs:
        try:
            got: Imported | StoreError = import_run(store, run_dir, refit_due=True)
        except StoreError as exc:
            if isinstance(exc, DiskFull):
                raise
            got = exc
        yield got


def describe_import(got: Imported) -> str:
    """What one import banked, one line: the run's game, tasks, responses and new models."""
    if got.already:
        return f"{got.run}: on the board already, nothing changed"
    new = f"; new models: {', '.join(got.models)}" if got.models else ""
    return f"{got.run}: {got.game}, {got.tasks} tasks, {got.responses} responses{new}"


def _write_viewer(run_dir: Path) -> None:
    """The run's game viewer, which the board's page links each of its tasks to, where the run's
    report has not written it already (said, never an error of the import, where it cannot be)."""
    if (run_dir / "viewer" / "index.html").is_file():
        return
    try:
        build_viewer(run_dir)
    except (ViewerError, OSError) as exc:
        log.warning("no game viewer for %s (the board's page will not link its tasks): %s", run_dir, exc)

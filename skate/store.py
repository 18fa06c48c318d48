"""The run's durable record: an append-only JSON-lines event log and the final ratings."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

EVENTS_FILE = "events.jsonl"
RATINGS_FILE = "ratings.json"


class EventLog:
    """Append-only ``events.jsonl``: one JSON object per line, flushed as it is written.

    Opening an existing log appends to it; nothing already recorded is rewritten.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "a", encoding="utf-8")
        self._lock = threading.Lock()
        self._t0 = time.time()

    def write(self, event: str, **fields: Any) -> None:
        record = {"event": event, "ts": round(time.time(), 3), **fields}
        line = json.dumps(record, ensure_ascii=False, default=_jsonable)
        with self._lock:
            self._fh.write(line + "\n")
            self._fh.flush()

    def close(self) -> None:
        with self._lock:
            if not self._fh.closed:
                self._fh.close()

    def __enter__(self) -> EventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _jsonable(obj: Any) -> Any:
    if hasattr(obj, "item"):  # numpy scalars
        return obj.item()
    if isinstance(obj, (set, tuple)):
        return list(obj)
    return str(obj)


def read_events(path: Path) -> list[dict[str, Any]]:
    """Every event of a log (a run folder or the file itself); a torn last line is skipped."""
    path = Path(path)
    if path.is_dir():
        path = path / EVENTS_FILE
    events = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a line cut short by a crash: everything before it is intact
    return events


def write_ratings(out_dir: Path, rows: list[dict[str, Any]]) -> Path:
    path = Path(out_dir) / RATINGS_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


class RunLogError(ValueError):
    """A folder has no event log a reader can use; the message says what to give instead."""


def read_run(run_dir: Path, what: str = "a finished or stopped run") -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A run folder's events and its ``run_start`` event, or RunLogError saying what is wrong."""
    run_dir = Path(run_dir)
    if not (run_dir / EVENTS_FILE).exists():
        raise RunLogError(f"{run_dir} has no {EVENTS_FILE}: give the folder of {what}")
    events = read_events(run_dir)
    start = next((e for e in events if e.get("event") == "run_start"), None)
    if start is None:
        raise RunLogError(f"{run_dir / EVENTS_FILE} has no run_start event")
    return events, start

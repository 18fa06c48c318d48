"""The run's durable record: an append-only JSON-lines event log and the final ratings."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from skate.events import EVENTS_FILE, Event, iter_records

RATINGS_FILE = "ratings.json"

__all__ = ["EVENTS_FILE", "RATINGS_FILE", "EventLog", "read_events", "write_ratings"]


class EventLog:
    """Append-only ``events.jsonl``: one typed event (:mod:`skate.events`) per line, flushed as
    it is written.

    Opening an existing log appends to it; nothing already recorded is rewritten.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "a", encoding="utf-8")
        self._lock = threading.Lock()

    def write(self, event: Event) -> None:
        line = json.dumps(event.record(round(time.time(), 3)), ensure_ascii=False, default=_jsonable)
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
    """Every line of a log as its raw JSON object (a run folder or the file itself); a torn last
    line is skipped. :func:`skate.events.read_run` gives the typed events."""
    return list(iter_records(path))


def write_ratings(out_dir: Path, rows: list[dict[str, Any]]) -> Path:
    path = Path(out_dir) / RATINGS_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path

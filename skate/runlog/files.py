"""The run's durable record: an append-only JSON-lines event log and the final ratings."""

from __future__ import annotations

import contextlib
import enum
import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skate.runlog.events import EVENTS_FILE, Event, RatingUpdated, TaskRated, iter_records

RATINGS_FILE = "ratings.json"

THINKING_FILE = "thinking.jsonl"

__all__ = [
    "EVENTS_FILE",
    "RATINGS_FILE",
    "THINKING_FILE",
    "EventLog",
    "HeldRun",
    "ThinkingLog",
    "held_run",
    "read_events",
    "write_ratings",
]


# Where a run ends (or ended before it was resumed): a resumed run's log is cut before the first.
TERMINAL = frozenset({"run_stopped", "run_error", "run_end"})
# Fields that differ between two plays of the same game (timing, and model usage, which a
# replay from the response cache does not repeat).
VOLATILE = frozenset({"ts", "elapsed_s", "usage"})
# Events that tell how the model calls went (a void call, a model's outage, a parameter a model
# refused) rather than the game: when and whether they happen depends on timing (and on what the
# response cache already held), so a replay neither compares nor repeats them.
TIMING = frozenset({"llm_void", "llm_outage", "llm_adjusted"})


class RatingLog(enum.StrEnum):
    """What events.jsonl keeps of the ratings (``events.rating_updates``)."""

    task = "task"  # one `rated` event per task: the updates it made and each moved player's numbers after them
    pair = "pair"  # one `rating` event per pairwise update (the log of runs before issue 26)


class LogWriteError(OSError):
    """The event log cannot be written (a full disk, a folder that became unwritable)."""


def comparable(record: dict[str, Any]) -> dict[str, Any]:
    """A record without the fields two plays of the same game may differ in."""
    out = {k: v for k, v in record.items() if k not in VOLATILE}
    if isinstance(out.get("summary"), dict):
        out["summary"] = {k: v for k, v in out["summary"].items() if k not in VOLATILE}
    return out


@dataclass(frozen=True)
class HeldRun:
    """The run a folder's event log holds (:func:`held_run`)."""

    finished: bool  # it ended (run_end) without a stop or an error
    rounds: int  # the last round it finished (round_end)
    config: dict[str, Any] | None  # the config it was started with (run_start)

    def describe(self) -> str:
        return "finished" if self.finished else f"stopped after round {self.rounds}"


def held_run(folder: Path) -> HeldRun | None:
    """The run in ``folder``'s ``events.jsonl``, or None when there is no log or no record in it.
    Only its first line and the round and end lines are read as JSON."""
    path = Path(folder) / EVENTS_FILE
    if not path.is_file():  # none, or not a file to read (a device: /dev/full in a test of a full disk)
        return None
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        return None
    first: dict[str, Any] | None = None
    kinds: set[str] = set()
    rounds = 0
    with fh:
        for line in fh:
            head = line[:32]
            if first is not None and not any(k in head for k in _ENDS):
                continue
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line torn by a kill
            if not isinstance(record, dict):
                continue
            if first is None:
                first = record
            kind = str(record.get("event"))
            kinds.add(kind)
            if kind == "round_end":
                rounds = max(rounds, int(record.get("round") or 0))
    if first is None:
        return None
    config = first.get("config") if first.get("event") == "run_start" else None
    return HeldRun(
        finished="run_end" in kinds and not kinds & {"run_stopped", "run_error"},
        rounds=rounds,
        config=config if isinstance(config, dict) else None,
    )


_ENDS = tuple(f'"{kind}"'.encode() for kind in ("round_end", *TERMINAL))


class ThinkingLog:
    """``thinking.jsonl``: what reasoning models thought before each reply (``llm.keep_thinking``),
    one JSON object per reply (``{player, model, index, seed, thinking, answer, finish_reason}``)
    appended as each comes back from the model (a reply served from the response cache was kept
    by the run that asked for it). Nothing is written until there is thinking to keep; a file
    that cannot be written is said once and given up, never a stop of the game (the thinking is
    for a person to read, not part of the record)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._fh: Any = None
        self._failed = False
        self.written = 0

    def __call__(self, info: Mapping[str, Any]) -> None:
        line = json.dumps(dict(info), ensure_ascii=False) + "\n"
        with self._lock:
            if self._failed:
                return
            try:
                if self._fh is None:
                    self._fh = open(self.path, "a", encoding="utf-8")
                self._fh.write(line)
                self._fh.flush()
                self.written += 1
            except OSError as exc:
                self._failed = True
                logging.getLogger(__name__).warning(
                    "cannot keep the models' thinking in %s (%s): not kept from now on", self.path, exc.strerror or exc
                )

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                with contextlib.suppress(OSError):
                    self._fh.close()
                self._fh = None


class EventLog:
    """Append-only ``events.jsonl``: one typed event (:mod:`skate.runlog.events`) per line, flushed as
    it is written, and synced to disk by :meth:`sync` (the engine calls it at every round end).

    Nothing is touched until the first event is written (a run refused while its parts are built
    leaves its folder as it was); then an existing log is appended to; nothing already recorded
    is rewritten.

    **Replay** (``replay=True``, resuming a run): the game is played again from its start with
    the same seed, and each event is compared with the next line already in the log: an equal
    one (timing aside) is not written again, so the log continues exactly where it stopped. The
    log is first cut before its first ``run_stopped``/``run_error``/``run_end`` and any torn last
    line (the original is kept as ``events.interrupted-<n>.jsonl``). Model-call void and outage
    events (:data:`TIMING`) are not compared (they depend on timing): those recorded stay, those
    written while the replay still matches recorded lines are dropped. If a replayed event differs
    from the recorded one, the rest of the old log is cut there and the new events are written
    (:attr:`diverged`).
    """

    def __init__(self, path: Path, replay: bool = False) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        # Replay: the recorded lines are read one at a time (a long game's log does not fit in
        # memory as objects). _head is the next recorded line not yet matched, with the byte
        # offset after it; _reader reads the kept part of the log, up to _end.
        self._head: tuple[dict[str, Any], int] | None = None
        self._reader: Any = None
        self._end = 0
        self.replayed = 0
        self._replayed_offset = 0
        self.diverged: int | None = None  # line number where a replay first differed
        self.backup: Path | None = None
        self._replay = replay
        self._fh: Any = None  # opened by the first write: a run refused before it starts leaves no log
        self._closed = False
        # replay: the event kinds of the lines kept (read now; the log is cut at the first write)
        self.kept_kinds: set[str] = self._scan()[1] if replay and self.path.exists() else set()

    def keeps_pairs(self, asked: RatingLog | str) -> bool:
        """Whether the ratings are logged one record per pairwise update (``rating`` events) rather
        than one per task (``rated``): as the kept log began (a resumed run goes on as it began),
        else as ``asked`` (``events.rating_updates``)."""
        if self.kept_kinds & {RatingUpdated.event, TaskRated.event}:
            return RatingUpdated.event in self.kept_kinds
        return RatingLog(asked) == RatingLog.pair

    def _open(self) -> None:
        """Open the log for writing (under the lock), once: a replay first cuts it where it stopped."""
        if self._fh is not None:
            return
        if self._closed:  # a late write (a model call abandoned at the stop) opens nothing again
            raise LogWriteError(f"the event log {self.path} is closed")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self._replay:
            self._prepare_replay()
        with self._failing("open"):
            self._fh = open(self.path, "a", encoding="utf-8")

    def _scan(self) -> tuple[int, set[str]]:
        """The byte offset where the recorded lines to keep end (before the first terminal event
        or torn line), and their event kinds."""
        end, kinds = 0, set()
        with open(self.path, "rb") as fh:
            for line in fh:
                if not line.endswith(b"\n"):
                    break  # torn by a kill: everything before it is intact
                try:
                    record = json.loads(line)
                except ValueError:
                    break
                if not isinstance(record, dict) or record.get("event") in TERMINAL:
                    break
                kinds.add(str(record.get("event")))
                end += len(line)
        return end, kinds

    def _prepare_replay(self) -> None:
        if not self.path.exists():
            return
        end, self.kept_kinds = self._scan()
        n = 1
        while (self.path.parent / f"events.interrupted-{n}.jsonl").exists():
            n += 1
        self.backup = self.path.parent / f"events.interrupted-{n}.jsonl"
        shutil.copyfile(self.path, self.backup)
        with open(self.path, "r+b") as fh:
            fh.truncate(end)
            fh.flush()
            os.fsync(fh.fileno())
        self._end = end
        self._reader = open(self.path, "rb")
        self._advance()

    def _advance(self) -> None:
        """Move :attr:`_head` to the next recorded line (model-call void and outage lines are
        skipped: they depend on timing)."""
        self._head = None
        while self._reader is not None:
            if self._reader.tell() >= self._end:
                self._reader.close()
                self._reader = None
                return
            record = json.loads(self._reader.readline())
            if record.get("event") not in TIMING:
                self._head = (record, self._reader.tell())
                return

    @property
    def resumed(self) -> bool:
        """Whether this log replays a recorded run (a resume) rather than begins one."""
        return self._replay

    @property
    def replaying(self) -> bool:
        return self._head is not None

    def write(self, event: Event) -> None:
        record = event.record(round(time.time(), 3))
        with self._lock:
            self._open()
            if self._head is not None:
                if record.get("event") in TIMING:
                    return  # the recorded ones stay; new ones during the replay are timing
                old, offset = self._head
                if comparable(old) == comparable(record):
                    self._advance()
                    self.replayed += 1
                    self._replayed_offset = offset
                    return
                if record.get("event") == "run_start" and old.get("event") == "run_start":
                    self._replace_first(old, record)  # resumed with overrides (more rounds, budget)
                    return
                self._diverge()
            self._append(record)

    @contextlib.contextmanager
    def _failing(self, doing: str) -> Iterator[None]:
        """An ``OSError`` in the block (a full disk, a folder gone) as the one-line
        :class:`LogWriteError`: ``cannot <doing> the event log PATH: <reason>``."""
        try:
            yield
        except OSError as exc:
            raise LogWriteError(f"cannot {doing} the event log {self.path}: {exc.strerror or exc}") from None

    def _append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, default=_jsonable)
        with self._failing("write"):
            self._fh.write(line + "\n")
            self._fh.flush()

    def _replace_first(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        """Put the resumed run's ``run_start`` (its config with the overrides) in place of the
        recorded one, keeping the recorded time."""
        self._fh.close()
        at = self._reader.tell() if self._reader is not None else self._end
        line = json.dumps({**new, "ts": old.get("ts")}, ensure_ascii=False, default=_jsonable).encode() + b"\n"
        tmp = self.path.with_suffix(".tmp")
        with open(self.path, "rb") as src, open(tmp, "wb") as dst:
            first = src.readline()
            dst.write(line)
            shutil.copyfileobj(src, dst, 1 << 20)
            dst.flush()
            os.fsync(dst.fileno())
        os.replace(tmp, self.path)
        delta = len(line) - len(first)
        self._end += delta
        if self._reader is not None:
            self._reader.close()
            self._reader = open(self.path, "rb")
            self._reader.seek(at + delta)
        self._advance()
        self._replayed_offset = len(line)
        self.replayed += 1
        self._fh = open(self.path, "a", encoding="utf-8")

    def _diverge(self) -> None:
        """The replay differs from the recorded log: cut the rest of the old log here."""
        self.diverged = self.replayed
        self._fh.flush()
        with open(self.path, "r+b") as fh:
            fh.truncate(self._replayed_offset)
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        self._head = None

    def sync(self) -> None:
        """Flush and fsync: what is written survives a power loss."""
        with self._lock:
            if self._fh is None:
                return
            with self._failing("write"):
                self._fh.flush()
                os.fsync(self._fh.fileno())

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._fh is not None and not self._fh.closed:
                # The file is closed even when what is left to flush cannot be written (a full
                # disk): the same one-line error as the write's, not a traceback.
                with self._failing("write"):
                    self._fh.close()
            if self._reader is not None:
                self._reader.close()
                self._reader = None

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
    line is skipped. :func:`skate.runlog.events.read_run` gives the typed events."""
    return list(iter_records(path))


def played_events(path: Path) -> list[dict[str, Any]]:
    """A log's events as the game played them, to compare two plays of one game: each
    :func:`comparable`, the model calls' own events (:data:`TIMING`: void calls, outages) and the
    run's config (its cache folder, its waits) left out."""
    out = []
    for record in iter_records(path):
        if record.get("event") in TIMING:
            continue
        record = comparable(record)
        if record["event"] == "run_start":
            record.pop("config", None)
        out.append(record)
    return out


def write_ratings(out_dir: Path, rows: list[dict[str, Any]]) -> Path:
    path = Path(out_dir) / RATINGS_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def format_table(rows: list[dict[str, Any]], tasks_by_setter: Mapping[str, int] | None = None) -> str:
    """The ratings table as plain text, best first: score, interval, and the backend's extras (and,
    given ``tasks_by_setter``, how many valid tasks each player set)."""

    def num(x: Any, width: int, nd: int = 2) -> str:
        return f"{x:>{width}.{nd}f}" if isinstance(x, (int, float)) else f"{'-':>{width}}"

    has_truth = any("true_skill" in r for r in rows)
    has_sigma = any("sigma" in r for r in rows)
    header = f"{'rank':>4}  {'player':<20} {'score':>8} {'interval':>17}"
    header += f" {'sigma':>6}" if has_sigma else ""
    header += f" {'true_skill':>10}" if has_truth else ""
    header += f" {'tasks set':>9}" if tasks_by_setter is not None else ""
    lines = [header, "-" * len(header)]
    for r in rows:
        rank = r.get("rank")
        iv = f"[{r['lo']:.2f}, {r['hi']:.2f}]" if r.get("lo") is not None and r.get("hi") is not None else "-"
        line = f"{rank if rank is not None else '-':>4}  {r['player']:<20} {num(r.get('score'), 8)} {iv:>17}"
        if r.get("no_data"):  # no rated game: its prior score means nothing
            line = f"{'-':>4}  {r['player']:<20} {'no data':>8} {'-':>17}"
        if has_sigma:
            line += f" {num(r.get('sigma'), 6)}"
        if has_truth:
            line += f" {num(r.get('true_skill'), 10)}"
        if tasks_by_setter is not None:
            line += f" {tasks_by_setter.get(r['player'], 0):>9}"
        lines.append(line + (" *" if r.get("unbounded") else ""))
    # Players whose maximum-likelihood rating does not exist (no wins or no losses), and
    # bootstrap resamples where that happened: the numbers there are the prior's.
    for r in rows:
        if r.get("unbounded"):
            lines.append(f"* {r['player']}: {r['unbounded']}")
    boots = [r for r in rows if r.get("unbounded_resamples")]
    if boots:
        lines.append(
            "no wins or no losses in some bootstrap resamples (where the interval ends rest on the prior): "
            + ", ".join(f"{r['player']} in {r['unbounded_resamples']} of {r.get('resamples', '?')}" for r in boots)
        )
    return "\n".join(lines)

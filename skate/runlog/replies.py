"""What the players replied, tied to the task or attempt it served: ``replies.jsonl``.

The event log holds what the game made of the replies (p(correct), a rejection's reason); this
file holds the replies themselves, for a person to read (the game viewer, ``skate view``). One
JSON object per line, of three kinds:

- ``reply``: one model call's reply (``events.replies``): the player, its model, the purpose of
  the call (``set``, ``answer``, ``read``), the sample's ``index`` and ``seed``, the ``text`` and,
  for a model that thinks, the ``thinking`` taken out of it apart; ``finish`` when it was not
  ``stop``, ``cached`` when the response cache served it, ``void`` (the reason) when the call
  failed. A reply served from the cache is written as a new one is, so a run replayed or
  resumed from the cache writes the same.
- ``answers``: one player's graded samples of one task, every player's (the choices a simulated
  player drew, or what the game read from a model's replies), one line per estimate: the task,
  the player, and per sample the game's view of it (:meth:`skate.games.base.Game.sample_views`:
  the answer, its verdict, and ``call``/``index``, which join it to its ``reply`` lines), packed
  (:func:`pack_samples`). Each answer is a number in its task's table of answers.
- ``value``: an entry of a task's table of answers (``task``, its number ``i``, its ``text``),
  written before the first line that uses it. Every player's answers to a task share one table,
  so an option's text is written once per task, not once per player; the numbers depend on
  which player answered first (timing), the texts they stand for do not.
- ``shown``: what a setter was given to set a round's task: the history its augmentation showed
  (task ids, with the scores it revealed) and the game's private inputs (an assignment).

Where a line belongs is told by :func:`scope`: the engine opens one around each setting attempt
(``round``, ``setter``, ``attempt``) and each answer (``task``, ``answerer``, ``call``); every line
written inside it carries its fields. Scopes are ``contextvars``: a thread pool's work keeps the
scope it was submitted in when submitted through :func:`submit_in_scope`.

Nothing is written until there is something to keep; a file that cannot be written is said once
and given up, never a stop of the game. A replayed run (a resume) starts the file again (the old
one kept as ``replies.interrupted-<n>.jsonl``): the replay writes every line again.
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import json
import logging
import shutil
import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Executor, Future
from pathlib import Path
from types import MappingProxyType
from typing import Any

REPLIES_FILE = "replies.jsonl"

_SCOPE: contextvars.ContextVar[Mapping[str, Any]] = contextvars.ContextVar(
    "skate_reply_scope", default=MappingProxyType({})
)

log = logging.getLogger(__name__)


@contextlib.contextmanager
def scope(**fields: Any) -> Iterator[None]:
    """Every reply line written inside the block carries ``fields`` (over the enclosing scope's)."""
    token = _SCOPE.set({**_SCOPE.get(), **fields})
    try:
        yield
    finally:
        _SCOPE.reset(token)


def current() -> dict[str, Any]:
    """The fields of the scope the caller is in."""
    return dict(_SCOPE.get())


def submit_in_scope(pool: Executor, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
    """``pool.submit(fn, ...)``, run in a copy of the caller's context (its reply scope with it)."""
    return pool.submit(contextvars.copy_context().run, fn, *args, **kwargs)


def jsonable(value: Any) -> Any:
    """A value as JSON can hold it: numbers, text, lists and maps as they are; anything else as text."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return str(value)


class ReplyLog:
    """``replies.jsonl``, appended to from any thread. ``replay``: the run is a resume, played again
    from its start: the file is started again (the old one kept) before the first line."""

    def __init__(self, path: Path, replay: bool = False) -> None:
        self.path = Path(path)
        self._replay = replay
        self._lock = threading.Lock()
        self._fh: Any = None
        self._failed = False
        self._closed = False
        self.written = 0
        self.backup: Path | None = None
        self._values: dict[str, dict[str, int]] = {}  # task -> answer text -> its number

    # -- the three kinds
    def reply(self, info: Mapping[str, Any]) -> None:
        """One model call's reply (the client's ``on_reply``), in the caller's scope."""
        self._write(
            {
                "kind": "reply",
                **current(),
                **{k: v for k, v in info.items() if k == "text" or (v is not None and v is not False and v != "")},
            }
        )

    def answers(self, task: str, player: str, samples: list[dict[str, Any]]) -> None:
        """One estimate's samples; the answers new to the task's table are written first."""
        with self._lock:
            table = self._values.setdefault(task, {})
            new = [
                text
                for text in dict.fromkeys(str(v["answer"]) for v in samples if v.get("answer") is not None)
                if text not in table
            ]
            for text in new:
                table[text] = len(table)
            lines = [{"kind": "value", "task": task, "i": table[text], "text": text} for text in new]
            lines.append({"kind": "answers", "task": task, "player": player, **pack_samples(samples, table)})
            for line in lines:
                self._write_locked(line)

    def shown(self, round: int, player: str, history: list[dict[str, Any]], assignment: Mapping[str, Any]) -> None:
        self._write(
            {
                "kind": "shown",
                "round": round,
                "player": player,
                "history": history,
                **({"assignment": jsonable(assignment)} if assignment else {}),
            }
        )

    # -- writing
    def _write(self, record: dict[str, Any]) -> None:
        with self._lock:
            self._write_locked(record)

    def _write_locked(self, record: dict[str, Any]) -> None:
        """Write one line (the caller holds the lock)."""
        if self._failed or self._closed:
            return
        line = json.dumps(record, ensure_ascii=False, default=str, separators=(",", ":")) + "\n"
        try:
            if self._fh is None:
                self._open()
            self._fh.write(line)
            self.written += 1
        except OSError as exc:
            self._failed = True
            log.warning(
                "cannot keep the players' replies in %s (%s): not kept from now on", self.path, exc.strerror or exc
            )

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self._replay and self.path.exists() and self.path.stat().st_size:
            n = 1
            while (self.path.parent / f"replies.interrupted-{n}.jsonl").exists():
                n += 1
            self.backup = self.path.parent / f"replies.interrupted-{n}.jsonl"
            shutil.copyfile(self.path, self.backup)
            self._fh = open(self.path, "w", encoding="utf-8")
        else:
            self._fh = open(self.path, "a", encoding="utf-8")

    def flush(self) -> None:
        with self._lock:
            if self._fh is not None and not self._failed:
                with contextlib.suppress(OSError):
                    self._fh.flush()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._fh is not None:
                with contextlib.suppress(OSError):
                    self._fh.close()
                self._fh = None


_VERDICTS = {True: "1", False: "0", None: "u", "void": "v"}
DIGITS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"  # an answer's number, as one character
_READ = {v: k for k, v in _VERDICTS.items()}


def pack_samples(samples: list[dict[str, Any]], table: Mapping[str, int]) -> dict[str, Any]:
    """One estimate's sample views (``{"ok", "answer", "call", "index", ...}`` each) as an
    ``answers`` line holds them: the verdicts as one string (``ok``: 1 right, 0 wrong, u unreadable,
    v void), each answer as its number in ``table`` (its task's answers), one character of
    :data:`DIGITS` a sample (``-`` for none) while the numbers fit, else a list (null for none);
    ``call`` once when every sample's is the same, else as runs ``[[call, samples], ...]``;
    ``index`` left out when it counts up from 0 within each call; any other field as a list."""
    out: dict[str, Any] = {"ok": "".join(_VERDICTS.get(v.get("ok"), "u") for v in samples)}
    if any(v.get("answer") is not None for v in samples):
        numbers = [None if v.get("answer") is None else table[str(v["answer"])] for v in samples]
        # one character a sample while the task has few answers (a multiple-choice task's options)
        short = all(n is None or n < len(DIGITS) for n in numbers)
        out["answer"] = "".join("-" if n is None else DIGITS[n] for n in numbers) if short else numbers
    calls = [v.get("call") for v in samples]
    if any(c is not None for c in calls):
        runs: list[list[Any]] = []  # [call, samples in a row from it]
        for c in calls:
            if runs and runs[-1][0] == c:
                runs[-1][1] += 1
            else:
                runs.append([c, 1])
        out["call"] = calls[0] if len(runs) == 1 else runs
        if [v.get("index") for v in samples] != _counted(calls):
            out["index"] = [v.get("index") for v in samples]
    for key in sorted({k for v in samples for k in v} - {"ok", "answer", "call", "index"}):
        out[key] = [v.get(key) for v in samples]
    return out


def _counted(calls: list[Any]) -> list[int]:
    """The places of samples that are their calls' queries in order: 0, 1, ... within each call."""
    out: list[int] = []
    seen: collections.Counter[str] = collections.Counter()
    for c in calls:
        out.append(seen[str(c)])
        seen[str(c)] += 1
    return out


def unpack_samples(record: Mapping[str, Any], values: list[str]) -> list[dict[str, Any]]:
    """An ``answers`` line's samples, each ``{"ok", "answer", "call", "index", ...}`` again;
    ``values``: its task's answers, by number (:func:`answer_tables`)."""
    ok = str(record.get("ok", ""))
    n = len(ok)
    answers = record.get("answer") or [None] * n
    if isinstance(answers, str):
        answers = [None if ch == "-" else DIGITS.index(ch) for ch in answers]
    raw = record.get("call")
    calls = [c for c, k in raw for _ in range(k)] if isinstance(raw, list) else [raw] * n
    index = record.get("index") or (_counted(calls) if raw is not None else [None] * n)
    extra = {
        k: v
        for k, v in record.items()
        if isinstance(v, list) and len(v) == n and k not in ("answer", "call", "index", "ok")
    }
    out = []
    for k in range(n):
        view = {
            "ok": _READ.get(ok[k]),
            "answer": None if answers[k] is None else values[answers[k]],
            "call": calls[k],
            "index": index[k],
        }
        view.update({key: col[k] for key, col in extra.items()})
        out.append(view)
    return out


def answer_tables(lines: Iterator[dict[str, Any]] | list[dict[str, Any]]) -> dict[str, list[str]]:
    """Each task's table of answers, from the ``value`` lines among ``lines``."""
    out: dict[str, dict[int, str]] = collections.defaultdict(dict)
    for r in lines:
        if r.get("kind") == "value":
            out[str(r.get("task"))][int(r.get("i", 0))] = str(r.get("text", ""))
    return {task: [t.get(i, "") for i in range(max(t) + 1)] for task, t in out.items() if t}


def iter_replies(run_dir: Path) -> Iterator[dict[str, Any]]:
    """The lines of a run folder's ``replies.jsonl`` (none when it has none); a torn line is skipped."""
    path = Path(run_dir) / REPLIES_FILE
    if not path.is_file():
        return
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict):
                yield record

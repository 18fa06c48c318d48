"""The game viewer: every task, answer, rejected attempt and reply of a run, in the browser.

:func:`build_viewer` writes ``RUN_DIR/viewer/``: a static page (``index.html``, its script and
style, and the table library it uses, `Tabulator <https://tabulator.info>`_, vendored under
``assets/``) and the run's data cut into pieces (``data/*.js``), each a script that hands its
piece to the page. Scripts rather than JSON files, so that the page opens from ``file://`` with no
server (a browser will not ``fetch`` a local file); pieces, so that a large run opens at once:
the run's summary and the first rows of each table first, the rest of the rows after them, and a
task's or attempt's whole record (its estimates, each sample's answer, the replies behind them)
only when it is opened.

What it reads: ``events.jsonl`` (the tasks, attempts and estimates) and ``replies.jsonl`` (what the
players replied, :mod:`skate.runlog.replies`), and ``usage.json`` where the run has one. Nothing
in the run folder but ``viewer/`` is written; a run that has not ended, one recorded before
replies were kept, and one whose replies were not kept open with a line that says so.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import tempfile
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skate.loop import SEPARATES
from skate.runlog import events as ev
from skate.runlog.replies import REPLIES_FILE, iter_replies, unpack_samples

VIEWER_DIR = "viewer"
ASSETS = Path(__file__).with_name("assets")
# The data's layout (meta.format): the page reads only the layout it was written with.
FORMAT = 1
ROWS_PER_PIECE = 5000  # table rows per data piece (the first piece is shown before the rest load)
DETAIL_BYTES = 400_000  # a detail piece is cut once it holds about this much
TEXT_CUT = 160  # characters of a task's or an attempt's text in its table row
INFRA = ("void", "infrastructure")  # rejections that use up no attempt (FailReason values)


class ViewerError(ValueError):
    """The folder holds no run the viewer can show; the message says what to give instead."""


@dataclass
class _Players:
    """What the builder gathers per player as it reads the log."""

    set_tasks: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    attempts: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    rejected: dict[str, dict[str, int]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(int)))
    # answerer -> setter -> [p, ...] (the page gets each answerer's means as a list in roster order)
    by_setter: dict[str, dict[str, list[float]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    void_estimates: dict[str, int] = field(default_factory=lambda: defaultdict(int))


def build_viewer(run_dir: str | Path, report: bool | None = None) -> tuple[Path, list[str]]:
    """Write ``run_dir/viewer/`` and return its page and the notes it opens with (one line each:
    what the run is missing). :class:`ViewerError` when ``run_dir`` holds no run. ``report``:
    whether the page links the run's report (None: where ``report/index.html`` exists)."""
    run_dir = Path(run_dir)
    try:
        start = ev.read_start(run_dir, "a run (the folder skate wrote its events.jsonl in)")
    except ev.RunLogError as exc:
        raise ViewerError(str(exc)) from None
    except OSError as exc:
        raise ViewerError(f"cannot read {run_dir}: {exc.strerror or exc}") from None
    run = ev.read_run(run_dir, keep_updates=0)
    target = run_dir / VIEWER_DIR
    tmp = Path(tempfile.mkdtemp(prefix=".viewer-", dir=run_dir))
    tmp.chmod(0o755)
    try:
        has_report = (run_dir / "report" / "index.html").is_file() if report is None else report
        notes = _write(run, start, tmp, has_report)
        old = run_dir / f".viewer-old-{os.getpid()}"
        if target.exists():
            target.rename(old)
        tmp.rename(target)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target / "index.html", notes


def notes_of(run: ev.RunLog, start: ev.RunStarted, has_replies: bool) -> list[str]:
    """One line for each thing the run lacks that a viewer of it would look for."""
    notes = []
    ended = {type(e) for e in run.events} & {ev.RunEnded, ev.RunStopped, ev.RunFailed}
    rounds = sum(isinstance(e, ev.RoundEnded) for e in run.events)
    if not ended:
        notes.append(
            f"This run has not ended (it is still being written, or it was killed): showing its "
            f"{rounds} finished round{'s' * (rounds != 1)} and what it had written since."
        )
    elif ev.RunEnded not in ended:
        notes.append(f"This run stopped early (after round {rounds}): showing what it played.")
    kept = (start.config.get("events") or {}).get("replies") if isinstance(start.config, dict) else None
    if not has_replies:
        if kept is None:
            notes.append(
                "This run was recorded by an earlier skate, before replies were kept: showing its tasks, "
                "attempts and p(correct), without the answers behind them."
            )
        elif kept is False:
            notes.append(
                "This run's replies were not kept (events.replies=false): showing its tasks, attempts and "
                "p(correct), without the answers behind them."
            )
        else:
            notes.append(
                f"This run has no {REPLIES_FILE} (removed, or nothing was answered yet): showing its "
                "tasks, attempts and p(correct), without the answers behind them."
            )
    return notes


# ------------------------------------------------------------------------------ reading the run
def _attempt_ids(attempts: Iterable[ev.AttemptMade]) -> Iterator[tuple[ev.AttemptMade, str, int, int]]:
    """Each attempt event with its id and the ``(attempt, tries)`` of the reply scope it was made
    in (the engine's: ``tries`` counts the void and sandbox-failed tries before it, which use up
    no attempt)."""
    tries: dict[tuple[int, str], int] = defaultdict(int)
    for a in attempts:
        key = (a.round, a.player)
        t = tries[key]
        yield a, f"r{a.round:03d}-{a.player}-a{a.attempt}" + (f"-t{t}" if t else ""), a.attempt, t
        if a.reason in INFRA:
            tries[key] += 1


def _short(p: float | None) -> float | None:
    """A p(correct) as a table shows it (three places)."""
    return None if p is None else round(float(p), 3)


def _cut(text: str, n: int = TEXT_CUT) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _replies_of(run_dir: Path) -> tuple[dict[Any, Any], ...]:
    """replies.jsonl, gathered: model replies by answer sample, by attempt (setting calls and the
    checks' calls) and by task read; the samples of each (task, player); what each setter saw;
    each task's table of answers."""
    # Keyed by what a record names (None where it names nothing):
    answer: dict[tuple[Any, ...], dict[str, Any]] = {}  # (task, answerer, call, index)
    setting: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)  # (round, setter, attempt, tries)
    reads: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)  # (task, answerer)
    samples: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)  # (task, player): packed, as written
    shown: dict[tuple[Any, ...], dict[str, Any]] = {}  # (round, player)
    values: dict[str, dict[int, str]] = defaultdict(dict)  # task -> its answers by number
    for r in iter_replies(run_dir):
        kind = r.get("kind")
        if kind == "reply":
            view: dict[str, Any] = {
                k: r[k]
                for k in ("text", "thinking", "finish", "cached", "void", "purpose", "player", "model", "thinking_cut")
                if k in r
            }
            if "setter" in r and "attempt" in r:
                setting[(r.get("round"), r["setter"], r["attempt"], r.get("tries", 0))].append(
                    {**view, "check": bool(r.get("check"))}
                )
            elif "task" in r and r.get("call") == "read":
                reads[(r["task"], r.get("answerer", r.get("player")))].append(view)
            elif "task" in r:
                answer[(r["task"], r.get("answerer", r.get("player")), r.get("call"), r.get("index"))] = view
        elif kind == "answers":
            samples[(r.get("task"), r.get("player"))].append(
                {k: v for k, v in r.items() if k not in ("kind", "task", "player")}
            )
        elif kind == "value":
            values[str(r.get("task"))][int(r.get("i") or 0)] = str(r.get("text", ""))
        elif kind == "shown":
            shown[(r.get("round"), r.get("player"))] = r
    tables = {task: [t.get(i, "") for i in range(max(t) + 1)] for task, t in values.items() if t}
    return answer, setting, reads, samples, shown, tables


# ------------------------------------------------------------------------------ writing the pieces
def _json(body: Any) -> str:
    """A piece's JSON. ``</`` is written ``<\\/`` (the same string to JSON): a model's ``</script>``
    could not end a script even were the piece inlined (it is loaded by src)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), default=str).replace("</", "<\\/")


class _Pieces:
    """Data pieces of one kind (``tasks``, ``detail``, ...), each a script calling ``skateData``."""

    def __init__(self, folder: Path, kind: str) -> None:
        self.folder, self.kind, self.count, self.bytes = folder, kind, 0, 0

    def write(self, body: Any) -> int:
        return self.write_json(_json(body))

    def write_json(self, text: str) -> int:
        """A piece whose body is already JSON text (:func:`_json`)."""
        name = f"{self.kind}-{self.count:04d}.js"
        (self.folder / name).write_text(f'skateData("{self.kind}",{self.count},{text});\n', encoding="utf-8")
        self.bytes += len(text)
        self.count += 1
        return self.count - 1


def _rows(pieces: _Pieces, rows: list[dict[str, Any]]) -> int:
    for k in range(0, len(rows), ROWS_PER_PIECE):
        pieces.write(rows[k : k + ROWS_PER_PIECE])
    return pieces.count


class _Details:
    """Whole records (a task's, an attempt's) by id, in pieces of about :data:`DETAIL_BYTES`; each
    record is written to JSON once, as it is added (its size is what cuts the pieces)."""

    def __init__(self, folder: Path, kind: str) -> None:
        self.pieces = _Pieces(folder, kind)
        self.held: list[str] = []  # "id":{record} members of the piece being filled
        self.size = 0

    def add(self, key: str, record: dict[str, Any]) -> int:
        """Keep ``record``; the number of the piece it will be in."""
        member = f"{_json(key)}:{_json(record)}"
        self.held.append(member)
        self.size += len(member)
        piece = self.pieces.count
        if self.size >= DETAIL_BYTES:
            self.flush()
        return piece

    def flush(self) -> None:
        if self.held:
            self.pieces.write_json("{" + ",".join(self.held) + "}")
            self.held, self.size = [], 0


def _write(run: ev.RunLog, start: ev.RunStarted, out: Path, has_report: bool) -> list[str]:
    data = out / "data"
    data.mkdir()
    has_replies = (run.run_dir / REPLIES_FILE).is_file()
    notes = notes_of(run, start, has_replies)
    answer, setting, reads, samples, shown, tables = _replies_of(run.run_dir)
    who = _Players()

    estimates: dict[str, list[ev.Estimated]] = defaultdict(list)
    for e in run.of(ev.Estimated):
        estimates[e.task_id].append(e)
    tasks = run.of(ev.TaskSet)
    valid_attempt: dict[tuple[int, str], str] = {}

    # attempts first: a task's record names the attempts of its round's setter
    attempt_rows: list[dict[str, Any]] = []
    attempt_detail = _Details(data, "attempt")
    by_round_setter: dict[tuple[int, str], list[str]] = defaultdict(list)
    task_by_round_setter = {(t.round, t.setter): t.task_id for t in tasks}
    for a, aid, number, tries in _attempt_ids(run.of(ev.AttemptMade)):
        who.attempts[a.player] += 1
        if not a.valid:
            who.rejected[a.player][a.reason or "?"] += 1
        calls = setting.get((a.round, a.player, number, tries), [])
        task_id = task_by_round_setter.get((a.round, a.player)) if a.valid else None
        if task_id:
            valid_attempt[(a.round, a.player)] = aid
        by_round_setter[(a.round, a.player)].append(aid)
        seen = shown.get((a.round, a.player))
        record = {
            "id": aid,
            "round": a.round,
            "player": a.player,
            "attempt": a.attempt,
            "valid": a.valid,
            "reason": a.reason,
            "detail": a.detail,
            "text": a.text,
            "task": task_id,
            "novelty": None if a.novelty_distance is ev.UNSET else a.novelty_distance,
            "replies": [c for c in calls if not c.get("check")],
            "checks": [c for c in calls if c.get("check")],
            "shown": None
            if seen is None
            else {"history": seen.get("history", []), "assignment": seen.get("assignment")},
        }
        piece = attempt_detail.add(aid, record)
        attempt_rows.append(
            {
                "id": aid,
                "round": a.round,
                "player": a.player,
                "attempt": a.attempt,
                "valid": a.valid,
                "reason": a.reason or "",
                "detail": _cut(a.detail),
                "text": _cut(a.text),
                "task": task_id,
                "d": piece,
            }
        )
    attempt_detail.flush()

    names = run.players
    replied = {(task, player) for task, player, _, _ in answer}  # estimates with model replies to join
    task_rows: list[dict[str, Any]] = []
    task_detail = _Details(data, "task")
    for t in tasks:
        ests = estimates.get(t.task_id, [])
        ps = {e.player: e.p for e in ests if e.p is not None}
        for e in ests:
            if e.p is not None:
                who.by_setter[e.player][t.setter].append(float(e.p))
            elif e.skipped is not True:
                who.void_estimates[e.player] += 1
        who.set_tasks[t.setter].append(t.task_id)
        values = list(ps.values())
        mean = statistics.fmean(values) if values else None
        var = statistics.pvariance(values) if len(values) >= 2 else None
        separating = len(values) >= 2 and max(values) - min(values) > SEPARATES
        answers = []
        for e in ests:
            drawn = samples.get((t.task_id, e.player), [])
            # the model's reply behind each sample (each try of a session), by "call:index"
            behind: dict[str, Any] = {}
            for packed in drawn if (t.task_id, e.player) in replied else ():
                for view in unpack_samples(packed, tables.get(t.task_id, [])):
                    pairs = view.get("calls") or (
                        [[view["call"], view["index"]]] if view.get("call") is not None else []
                    )
                    for c, i in pairs:
                        reply = answer.get((t.task_id, e.player, c, i))
                        if reply is not None:
                            behind[f"{c}:{i}"] = reply
            answers.append(
                {
                    "player": e.player,
                    "p": e.p,
                    "n": e.n,
                    "correct": e.correct,
                    "unparsable": e.unparsable,
                    "void": e.void,
                    "std": e.std,
                    "capped": e.capped,
                    **({"read": e.read} if e.read is not ev.UNSET else {}),
                    **({"skipped": True} if e.skipped is True else {}),
                    **({"joined": e.joined} if e.joined is not ev.UNSET else {}),
                    "drawn": drawn,
                    "replies": behind,
                    "reads": reads.get((t.task_id, e.player), []),
                }
            )
        record = {
            "id": t.task_id,
            "round": t.round,
            "setter": t.setter,
            "prompt": t.prompt,
            "answer": t.answer,
            "data": t.extra,
            "attempts": by_round_setter.get((t.round, t.setter), []),
            "attempt": valid_attempt.get((t.round, t.setter)),
            "mean": mean,
            "var": var,
            "separating": separating,
            "values": tables.get(t.task_id, []),
            "estimates": answers,
        }
        piece = task_detail.add(t.task_id, record)
        task_rows.append(
            {
                "id": t.task_id,
                "round": t.round,
                "setter": t.setter,
                "text": _cut(t.prompt),
                "answer": _cut(t.answer, 60),
                "mean": mean,
                "var": var,
                "difficulty": None if mean is None else 1 - mean,
                "separating": separating,
                "answered": len(values),
                "p": [_short(ps.get(n)) for n in names],
                "d": piece,
            }
        )
    task_detail.flush()

    meta = _meta(run, start, notes, who, has_replies)
    meta["report"] = has_report
    meta["pieces"] = {
        "tasks": _rows(_Pieces(data, "tasks"), task_rows),
        "attempts": _rows(_Pieces(data, "attempts"), attempt_rows),
    }
    meta["counts"] = {
        "tasks": len(task_rows),
        "attempts": len(attempt_rows),
        "rejected": sum(not r["valid"] for r in attempt_rows),
        "estimates": sum(len(v) for v in estimates.values()),
        "separating": sum(r["separating"] for r in task_rows),
    }
    _Pieces(data, "meta").write(meta)
    _assets(out)
    return notes


def _meta(run: ev.RunLog, start: ev.RunStarted, notes: list[str], who: _Players, has_replies: bool) -> dict[str, Any]:
    usage: dict[str, Any] = {}
    path = run.run_dir / "usage.json"
    if path.is_file():
        try:
            usage = json.loads(path.read_text(encoding="utf-8")).get("players", {})
        except (OSError, ValueError):
            usage = {}
    ratings = {r.get("player"): r for r in run.final_ratings()}
    players = []
    for p in start.players:
        name = p["name"]
        row = ratings.get(name, {})
        mine = who.by_setter[name]
        accuracy = [_short(statistics.fmean(mine[s])) if mine.get(s) else None for s in run.players]
        players.append(
            {
                "name": name,
                "kind": p.get("kind"),
                "model": p.get("model"),
                "true_skill": p.get("true_skill"),
                "rank": row.get("rank"),
                "score": row.get("score"),
                "lo": row.get("lo"),
                "hi": row.get("hi"),
                "tasks": len(who.set_tasks.get(name, [])),
                "attempts": who.attempts.get(name, 0),
                "rejected": dict(who.rejected.get(name, {})),
                "by_setter": accuracy,
                "void_estimates": who.void_estimates.get(name, 0),
                "usage": usage.get(name),
            }
        )
    reasons = sorted({r for v in who.rejected.values() for r in v})
    # how each model setter was asked again after a rejection: "show" (told of it) or "resample"
    cohort = (start.config.get("players") or {}) if isinstance(start.config, dict) else {}
    repair = {
        str(e.get("name")): e.get("setter_repair") or cohort.get("setter_repair") or "show"
        for e in cohort.get("llm") or []
        if isinstance(e, dict)
    }
    end = run.end
    return {
        "format": FORMAT,
        "name": run.run_dir.name,
        "game": start.game,
        "rounds": start.rounds,
        "played": sum(isinstance(e, ev.RoundEnded) for e in run.events),
        "seed": start.seed,
        "rating": start.rating,
        "aug": start.aug,
        "estimator": (start.config.get("estimator") or {}).get("_target_", "").rsplit(".", 1)[-1]
        if isinstance(start.config, dict)
        else "",
        "finished": end is not None,
        "ended": None if end is None or end.ended is ev.UNSET else end.ended,
        "notes": notes,
        "replies": has_replies,
        "players": players,
        "reasons": reasons,
        "repair": repair,
        "separates": SEPARATES,
    }


def _assets(out: Path) -> None:
    """The page and what it loads, copied from the package."""
    (out / "assets").mkdir()
    for f in ASSETS.iterdir():
        if f.is_file():
            shutil.copyfile(f, (out if f.name == "index.html" else out / "assets") / f.name)

"""The run's events: one typed schema, one writer (:class:`skate.runlog.files.EventLog`), one reader.

Every line of ``events.jsonl`` is one event: ``{"event": <kind>, "ts": <unix time>, ...fields}``.
Each kind is a dataclass here. A field that only some events carry defaults to :data:`UNSET` and
is left out of the line until it is set; a few kinds carry open-ended fields (``extra``: a game's
own data about a task, a rating backend's own numbers) written flat beside the others.
Reading is forgiving: a field the schema does not know lands in ``extra``, an event kind it does
not know becomes an :class:`UnknownEvent`, and a torn last line (a killed run) is skipped.

:func:`read_run` gives a :class:`RunLog`: the typed events of one run folder plus the views
that ``skate.rate``, the report and the W&B logger need (tasks, estimates, which tasks count
for the ratings, the final table).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar, cast

from skate.runlog.records import BENCHMARK, Sentinel, Task

EVENTS_FILE = "events.jsonl"

E = TypeVar("E", bound="Event")


UNSET: Any = Sentinel("UNSET", __name__)  # a field an event does not carry


@dataclass
class Event:
    event: ClassVar[str] = ""
    ts: float | None = field(default=None, kw_only=True, compare=False, repr=False)
    extra: dict[str, Any] = field(default_factory=dict, kw_only=True)

    def fields(self) -> dict[str, Any]:
        """The event's fields in schema order (``extra`` flattened in; ``ts`` and unset fields
        left out)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name in ("ts", "extra"):
                continue
            value = getattr(self, f.name)
            if value is not UNSET:
                out[f.name] = value
        out.update(self.extra)
        return out

    def record(self, ts: float | None = None) -> dict[str, Any]:
        """The JSON object written for this event."""
        return {"event": self.event, "ts": self.ts if ts is None else ts, **self.fields()}

    def get(self, name: str, default: Any = None) -> Any:
        """A field by name, whether in the schema or in ``extra``; ``default`` when unset."""
        if name in self.extra:
            return self.extra[name]
        value = getattr(self, name, UNSET)
        return default if value is UNSET else value


@dataclass
class RunStarted(Event):
    event = "run_start"
    game: str = ""
    rounds: int = 0
    players: list[dict[str, Any]] = field(default_factory=list)  # describe() of each, roster order
    rating: str = ""
    aug: str = ""
    sandbox: str = ""
    sandbox_isolated: bool = False
    sandbox_detail: str = ""
    sandbox_bounds: dict[str, str] = field(default_factory=dict)  # what bounds a program: memory, /tmp, calls
    seed: int = 0
    config: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    # How the settings were recorded and made (runs before them carry none): the version of
    # ``config``'s layout (skate.settings.recorded reads every version), each config group's option and
    # the command line's overrides.
    config_version: int = UNSET
    choices: dict[str, str] = UNSET
    overrides: list[str] = UNSET


@dataclass
class RoundStarted(Event):
    """A round begins; ``setters``/``answerers`` name who sets and who answers in it, when the
    run records them (a pairing schedule); older logs leave them out."""

    event = "round_start"
    round: int = 0
    setters: list[str] = UNSET
    answerers: list[str] = UNSET


@dataclass
class AttemptMade(Event):
    """One try at setting a task: its text, whether it became a task, and why not."""

    event = "attempt"
    round: int = 0
    player: str = ""
    attempt: int = 0
    text: str = ""
    # Set for proposals that passed the game's checks and met the uniqueness test: the distance
    # to the nearest of the setter's earlier tasks (None when it had none).
    novelty_distance: float | None = UNSET
    valid: bool = False
    reason: str | None = None  # a FailReason value when not valid
    detail: str = ""


@dataclass
class TaskSet(Event):
    """A valid task; ``extra`` holds the game's own data about it (e.g. ``distractors``)."""

    event = "task"
    task_id: str = ""
    round: int = 0
    setter: str = ""
    prompt: str = ""
    answer: str = ""
    attempts: int = 0

    def task(self) -> Task:
        """The task this event recorded, as its game asks and grades it again."""
        return Task(self.task_id, self.round, self.setter, self.prompt, self.answer, dict(self.extra))


@dataclass
class Estimated(Event):
    """One player's p(correct) on one task (``p`` null when every sample was void)."""

    event = "estimate"
    task_id: str = ""
    round: int = 0
    player: str = ""
    p: float | None = None
    n: int = 0
    correct: float = 0  # samples right (a read: p times the samples it counts as)
    std: float | None = None
    unparsable: int = 0
    capped: bool = False
    void: int = 0
    joined: str = UNSET  # staged games: the stage a newcomer answers earlier tasks in
    skipped: bool = UNSET  # true: the estimator asked this player nothing on this task
    # estimator=logprobs: true when p was read from the model's probabilities (n and correct are
    # then the samples the read counts as, and p times n), false when it fell back to sampling
    read: bool = UNSET


@dataclass
class RatingUpdated(Event):
    """One pairwise outcome applied; ``extra`` holds the backend's numbers after it."""

    event = "rating"
    update: int = 0
    task_id: str = ""
    a: str = ""
    b: str = ""
    p_a: float = 0.0
    p_b: float = 0.0
    result: float = 0.5


@dataclass
class TaskRated(Event):
    """What one task (or forfeit) did to the ratings: ``updates`` pairwise updates, the last of
    them number ``update`` of the run, and, for a backend whose ratings move with each update,
    the numbers of every player they moved, after them (``state``: name -> player -> value,
    e.g. ``{"mu": {...}, "sigma": {...}}`` for TrueSkill, ``{"elo": {...}}`` for Elo). The log's
    default (``events.rating_updates=task``); the single updates are ``rating`` events in a log
    written with ``events.rating_updates=pair`` and in runs from before it."""

    event = "rated"
    task_id: str = ""
    updates: int = 0
    update: int = 0
    state: dict[str, dict[str, float]] = UNSET


@dataclass
class RoundEnded(Event):
    event = "round_end"
    round: int = 0
    tasks: int = 0
    ratings: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] = UNSET  # language-model cohorts: calls, tokens, cost so far
    # Backends that can say how sure the ranking is: each adjacent pair of the ranking, best
    # first, as {"above", "below", "confidence"} (the probability that "above" is the better).
    order: list[dict[str, Any]] = UNSET


@dataclass
class ModelCallVoid(Event):
    """A model call that failed after its retries (its samples are void)."""

    event = "llm_void"
    player: str = ""
    model: str = ""
    kind: str = ""  # transport, timeout, rate_limit, server, client, malformed, ...
    status: int | None = None
    detail: str = ""
    attempts: int = 0
    samples: int = 0


@dataclass
class ModelAdjusted(Event):
    """A request parameter a model is sent differently from now on (:mod:`skate.llm.shaping`):
    ``dropped`` (not sent; a temperature it cannot take is recorded as the one it ``used``) or
    ``renamed`` (sent as ``to``), learnt from LiteLLM's rules or from the provider's refusal
    (``source``)."""

    event = "llm_adjusted"
    player: str = ""
    model: str = ""
    param: str = ""
    action: str = ""  # dropped | renamed
    to: str | None = None
    source: str = ""
    used: Any = None


@dataclass
class ModelOutage(Event):
    """A model's endpoint stopped answering (``down``: a call's failures outlasted its retries
    while it answered no other call), answered again (``up``: the calls held for it go on), or
    did not answer within ``llm.outage_wait_s`` (``gave_up``: the run stops, resumable)."""

    event = "llm_outage"
    state: str = ""  # down | up | gave_up
    model: str = ""
    endpoint: str = ""  # its api_base ("" : the provider's own)
    player: str = ""  # whose call found it down
    kind: str = ""  # the last failure: transport, timeout, server
    status: int | None = None
    detail: str = ""
    down_s: float = 0.0  # seconds since it went down
    probes: int = 0  # calls sent again to see whether it answers
    held: int = 0  # calls waiting for it
    wait_s: float = 0.0  # llm.outage_wait_s


@dataclass
class Optimized(Event):
    """One player's module for one role, optimised before the game (or reused from the store)."""

    event = "optimize"
    player: str = ""
    model: str = ""
    role: str = ""  # setter | answerer
    optimizer: str = ""
    key: str = ""  # the stored program's key (model, role, game, optimiser, settings, data, metric)
    reused: bool = False  # loaded from the store: no optimisation call was made
    train: int = 0
    val: int = 0
    metric_before: float | None = None  # mean metric on the held-out items, default prompts
    metric_after: float | None = None  # the same items, optimised prompts
    # Setters, on the held-out items: the share that gave a valid, unique task, and of those the
    # share that told the players apart (some right, some wrong), before and after.
    valid_before: float | None = None
    valid_after: float | None = None
    separating_before: float | None = None
    separating_after: float | None = None
    labelled: int = 0  # training items that carried a labelled demonstration (setters: optimizer.demos)
    # Setters: a few of the held-out items' valid tasks (else their rejections), before and after.
    tasks_before: list[str] = field(default_factory=list)
    tasks_after: list[str] = field(default_factory=list)
    rejected_before: dict[str, int] = field(default_factory=dict)  # setters: rejections by reason
    rejected_after: dict[str, int] = field(default_factory=dict)
    demos: int = 0
    demos_dropped: int = 0  # demonstrations left out to fit the model's context
    calls: int = 0  # model calls this step made (every player's: a setter's metric asks others)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    elapsed_s: float = 0.0
    stopped: str = ""  # why optimising stopped early (the budget), if it did


@dataclass
class PlayerVoid(Event):
    """A player none of whose model calls got through in a whole round (every estimate void, and
    every setting attempt void when it set): a dead model, a refused key, an unreachable server."""

    event = "player_void"
    round: int = 0
    player: str = ""
    estimates: int = 0  # its void estimates this round
    attempts: int = 0  # its void setting attempts this round


@dataclass
class RunStopped(Event):
    event = "run_stopped"
    round: int = 0
    reason: str = ""


@dataclass
class PlayersJoined(Event):
    event = "join"
    stage: str = ""
    players: list[str] = field(default_factory=list)
    tasks: int = 0  # tasks set so far, which the newcomers now answer


@dataclass
class StageEnded(Event):
    event = "stage_end"
    stage: str = ""
    round: int = 0
    ratings: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class RunEnded(Event):
    event = "run_end"
    ratings: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    # The same games rated other ways (the config's ``rerate``): {name: rows like ``ratings``}
    rerated: dict[str, list[dict[str, Any]]] = UNSET
    # Why the game ended: "rounds" (it played every round), "settled" (stop.settled: every
    # adjacent pair of the ranking was ordered at the stated confidence) or "stopped" (a
    # signal, a spent budget: see run_stopped). Older logs leave it out.
    ended: str = UNSET
    ended_detail: str = UNSET


@dataclass
class RunFailed(Event):
    event = "run_error"
    error: str = ""
    summary: dict[str, Any] = field(default_factory=dict)


@dataclass
class UnknownEvent(Event):
    """A line of a kind this schema does not know (all its fields in ``extra``)."""

    name: str = ""

    def record(self, ts: float | None = None) -> dict[str, Any]:
        return {"event": self.name, "ts": self.ts if ts is None else ts, **self.extra}


KINDS: dict[str, type[Event]] = {
    cls.event: cls
    for cls in (
        RunStarted,
        RoundStarted,
        AttemptMade,
        TaskSet,
        Estimated,
        RatingUpdated,
        TaskRated,
        RoundEnded,
        ModelCallVoid,
        ModelAdjusted,
        ModelOutage,
        Optimized,
        PlayerVoid,
        RunStopped,
        PlayersJoined,
        StageEnded,
        RunEnded,
        RunFailed,
    )
}
_FIELDS = {kind: {f.name for f in dataclasses.fields(cls)} - {"ts", "extra"} for kind, cls in KINDS.items()}


def parse(record: dict[str, Any]) -> Event:
    """One JSON object of the log as a typed event."""
    kind = str(record.get("event", ""))
    cls = KINDS.get(kind)
    body = {k: v for k, v in record.items() if k not in ("event", "ts")}
    if cls is None:
        return UnknownEvent(name=kind, ts=record.get("ts"), extra=body)
    known = _FIELDS[kind]
    return cls(
        **{k: v for k, v in body.items() if k in known},
        ts=record.get("ts"),
        extra={k: v for k, v in body.items() if k not in known},
    )


def parse_as(record: dict[str, Any], cls: type[E]) -> E:
    """A record whose ``event`` names ``cls``, as that event."""
    event = parse(record)
    if not isinstance(event, cls):
        raise RunLogError(f"a {record.get('event')!r} record is not a {cls.__name__}")
    return event


def iter_records(path: Path) -> Iterator[dict[str, Any]]:
    """The raw JSON objects of a log (a run folder or the file itself); a torn line is skipped."""
    path = Path(path)
    if path.is_dir():
        path = path / EVENTS_FILE
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by a crash: everything before it is intact
            if isinstance(record, dict):
                yield record


def read_start(run_dir: Path, what: str = "a run") -> RunStarted:
    """A run folder's first event (its ``run_start``), or :class:`RunLogError` saying what is wrong."""
    run_dir = Path(run_dir)
    if not (run_dir / EVENTS_FILE).exists():
        raise RunLogError(f"{run_dir} has no {EVENTS_FILE}: give the folder of {what}")
    first = next(iter_records(run_dir), None)
    if first is None or first.get("event") != RunStarted.event or not isinstance(start := parse(first), RunStarted):
        raise RunLogError(f"{run_dir}/{EVENTS_FILE} does not start with run_start: give the folder of {what}")
    return start


def read_events(path: Path) -> list[Event]:
    """Every event of a log, typed."""
    return [parse(r) for r in iter_records(path)]


class RunLogError(ValueError):
    """A folder has no event log a reader can use; the message says what to give instead."""


@dataclass
class RunLog:
    """One run's events, typed, with the views the tools built on the log need.

    A log written per task (``events.rating_updates=task``, the default) has one ``rated`` event
    per task (:class:`TaskRated`, among :attr:`events`). A log written per pair (and every run
    from before that option) has one ``rating`` event per pair of players per task, millions in a
    long game with many players: those are held apart from the other events, in
    :attr:`updates`: all of them, or an evenly spaced sample when read with ``keep_updates``
    (see :func:`read_run`). :attr:`update_count` and :attr:`rated_ids` always cover every
    update of either kind; :meth:`rating_trace` gives the ratings over the game from either."""

    run_dir: Path
    events: list[Event]  # every event but the rating updates, in order
    start: RunStarted
    updates: list[RatingUpdated] = field(default_factory=list)  # in order; every update_stride-th
    update_count: int = 0  # rating updates in the log
    rated_ids: set[str] = field(default_factory=set)  # the task ids the ratings were updated from
    update_stride: int = 1  # 1: updates holds every rating update
    rated_stride: int = 1  # a log per task read with keep_updates: every rated_stride-th task's numbers are held

    def of(self, cls: type[E]) -> list[E]:
        if cls is RatingUpdated:
            return cast(list[E], list(self.updates))  # E is RatingUpdated
        return by_kind(self.events, cls)

    @property
    def players(self) -> list[str]:
        return [p["name"] for p in self.start.players]

    @property
    def true_skill(self) -> dict[str, float | None]:
        return {p["name"]: p.get("true_skill") for p in self.start.players}

    @property
    def end(self) -> RunEnded | None:
        return next((e for e in reversed(self.events) if isinstance(e, RunEnded)), None)

    @property
    def finished(self) -> bool:
        return self.end is not None

    def final_ratings(self) -> list[dict[str, Any]]:
        """The run's table: from ``run_end``, else the last finished round's."""
        if self.end is not None:
            return self.end.ratings
        last = next((e for e in reversed(self.events) if isinstance(e, RoundEnded)), None)
        return last.ratings if last else []

    def rating_trace(self) -> list[dict[str, Any]]:
        """Each player's numbers after each task (or single update) that moved them, in order:
        rows ``{"update", "task_id", "player", <value>: ...}`` (TrueSkill: mu, sigma; Elo: elo),
        from the ``rated`` events that hold them, or from the pair updates read (two rows each,
        one per side) in a log written per pair; :func:`read_run`'s ``keep_updates`` thins both."""
        rows: list[dict[str, Any]] = []
        rated = [e for e in self.events if isinstance(e, TaskRated) and e.state is not UNSET and e.state]
        for e in rated:
            names = list(e.state)
            for player in e.state[names[0]]:
                rows.append(
                    {
                        "update": e.update,
                        "task_id": e.task_id,
                        "player": player,
                        **{k: e.state[k].get(player) for k in names},
                    }
                )
        for u in self.updates:
            values = u.extra
            for side in ("a", "b"):
                rows.append(
                    {
                        "update": u.update,
                        "task_id": u.task_id,
                        "player": getattr(u, side),
                        **{k[:-2]: v for k, v in values.items() if k.endswith("_" + side)},
                    }
                )
        return rows

    def rating_stream(self) -> list[RatedTask | Forfeit]:
        """What the ratings were updated from, in live order: each round's setters in the order
        they were rated, each giving its task (:class:`RatedTask`) or its forfeit
        (:class:`Forfeit`: no valid task though it made a real attempt, see :func:`forfeited`).

        Forfeits are derived from the ``attempt`` events, so runs played before forfeits were
        rated give them too (they change no rating under the relative and absolute rules). A
        forfeit's answerers are the round's ``answerers`` when the log names them, else the
        players active in that round (the roster less players who had yet to join), less the
        setter. An unfinished round (the run stopped or crashed mid-round) changed no rating
        live, so it is left out; estimates of players who joined later are included.
        """
        rated = self.rated_ids
        stopped = {e.round for e in self.of(RunStopped)}
        finished = {e.round for e in self.of(RoundEnded)}
        joiners = {n for e in self.of(PlayersJoined) for n in e.players}
        active = [n for n in self.players if n not in joiners]
        answerers: dict[int, list[str]] = {}
        setters: dict[int, list[str]] = {}  # each round's setters, in the order they were logged
        attempts: dict[tuple[int, str], list[AttemptMade]] = {}
        tasks: dict[tuple[int, str], TaskSet] = {}
        scores: dict[str, dict[str, float]] = {}
        counts: dict[str, dict[str, tuple[float, int]]] = {}
        for e in self.events:
            if isinstance(e, PlayersJoined):
                active = [n for n in self.players if n in set(active) | set(e.players)]
            elif isinstance(e, RoundStarted):
                answerers[e.round] = list(e.answerers) if e.answerers is not UNSET else list(active)
            elif isinstance(e, (AttemptMade, TaskSet)):
                who = e.player if isinstance(e, AttemptMade) else e.setter
                if (
                    isinstance(e, TaskSet) and who == BENCHMARK
                ):  # a built benchmark: many tasks a round, each its own slot
                    who = e.task_id
                order = setters.setdefault(e.round, [])
                if who not in order:
                    order.append(who)
                if isinstance(e, AttemptMade):
                    attempts.setdefault((e.round, who), []).append(e)
                else:
                    tasks[(e.round, who)] = e
                    scores[e.task_id], counts[e.task_id] = {}, {}
            elif isinstance(e, Estimated) and e.p is not None and e.task_id in scores:
                scores[e.task_id][e.player] = float(e.p)
                if e.n > 0:
                    k = (
                        e.correct
                        if isinstance(e.correct, float) and not float(e.correct).is_integer()
                        else int(e.correct)
                    )
                    counts[e.task_id][e.player] = (k, int(e.n))
        out: list[RatedTask | Forfeit] = []
        for rnd, order in setters.items():
            if rnd in stopped:
                continue
            for setter in order:
                task = tasks.get((rnd, setter))
                if task is not None:
                    if task.task_id in rated or rnd in finished:
                        out.append(RatedTask(task.task_id, task.setter, scores[task.task_id], counts[task.task_id]))
                elif forfeited(tried := attempts.get((rnd, setter), [])):
                    task_id = forfeit_id(rnd, setter)
                    if task_id in rated or rnd in finished:
                        out.append(
                            Forfeit(
                                task_id,
                                setter,
                                [n for n in answerers.get(rnd, active) if n != setter],
                                unsolved_own(tried),
                            )
                        )
        return out

    def rated_scores(self) -> list[tuple[str, dict[str, float]]]:
        """Each task that changed the ratings, in order, with every non-void p(correct) (the
        tasks of :meth:`rating_stream`, without forfeits)."""
        return [(t.task_id, t.p_correct) for t in self.rating_stream() if isinstance(t, RatedTask)]


# ------------------------------------------------------------------ what the ratings are updated from
NOT_THE_SETTERS_FAULT = ("void", "infrastructure")  # FailReason values: a model call or the sandbox failed


def forfeited(attempts: Iterable[AttemptMade]) -> bool:
    """Whether a setter with these attempts in a round forfeits it: no attempt was valid and at
    least one was rejected for the setter's own fault (not only failed model calls or sandbox
    failures)."""
    attempts = list(attempts)
    return not any(a.valid for a in attempts) and any(a.reason not in NOT_THE_SETTERS_FAULT for a in attempts)


def unsolved_own(attempts: Iterable[AttemptMade]) -> bool:
    """Whether a forfeiting setter's last attempt was a well-formed task it could not solve
    itself (rejected as ``unsolved``): a tie rather than a loss under ``rating.own_unsolved=tie``."""
    attempts = list(attempts)
    return bool(attempts) and attempts[-1].reason == "unsolved"


def forfeit_id(round: int, setter: str) -> str:
    """The task id a forfeit is rated under (the id the setter's task would have had)."""
    return f"r{round:03d}-{setter}"


@dataclass(frozen=True)
class RatedTask:
    """A task the ratings were updated from: its setter, every non-void p(correct) and the
    graded samples behind each (``counts``: player -> (correct, samples))."""

    task_id: str
    setter: str
    p_correct: dict[str, float]
    counts: dict[str, tuple[float, int]] = field(default_factory=dict)

    def apply(self, backend: Any) -> list[dict[str, Any]]:
        return backend.update(self.task_id, self.p_correct, setter=self.setter, counts=self.counts)


@dataclass(frozen=True)
class Forfeit:
    """A setter that set no valid task in a round, and who answered in that round."""

    task_id: str
    setter: str
    answerers: list[str]
    unsolved: bool = False  # its last task was well-formed but unsolved by the setter (see unsolved_own)

    def apply(self, backend: Any) -> list[dict[str, Any]]:
        return backend.forfeit(self.task_id, self.setter, self.answerers, self.unsolved)


def read_run(run_dir: Path, what: str = "a finished or stopped run", keep_updates: int | None = None) -> RunLog:
    """A run folder's typed log, or :class:`RunLogError` saying what is wrong.

    ``keep_updates`` bounds the rating updates held in memory: ``None`` keeps every one; ``N``
    keeps an evenly spaced sample of at most ``N`` (every ``update_stride``-th, the stride
    doubling as the log grows) plus each player's last update, enough to plot the ratings over
    a game of any length; ``0`` keeps none. In a log per task it bounds the players' numbers held
    likewise: those of every ``rated_stride``-th task's ``rated`` event (about ``N`` numbers in
    all) and of the last one; the others' ``state`` is unset. Counts and rated task ids are
    exact either way."""
    run_dir = Path(run_dir)
    if not (run_dir / EVENTS_FILE).exists():
        raise RunLogError(f"{run_dir} has no {EVENTS_FILE}: give the folder of {what}")
    if keep_updates is not None and keep_updates < 0:
        raise ValueError(f"keep_updates={keep_updates}: give None (all), 0 (none) or a positive bound")
    events: list[Event] = []
    updates: list[RatingUpdated] = []
    rated: set[str] = set()
    count, stride = 0, 1
    last: dict[str, tuple[int, dict[str, Any]]] = {}  # each player's last update (thinned reads)
    # A log per task: with keep_updates, the players' numbers (state) are held for an evenly
    # spaced sample of the tasks, about keep_updates numbers in all, and for the last task.
    with_state: list[TaskRated] = []
    rated_stride, n_rated, held = 1, 0, 0
    last_rated: tuple[TaskRated, Any] | None = None
    for record in iter_records(run_dir):
        kind = record.get("event")
        if kind != RatingUpdated.event:
            event = parse(record)
            events.append(event)
            if kind == TaskRated.event:
                count += int(record.get("updates") or 0)
                rated.add(str(record.get("task_id", "")))
                if keep_updates is not None and isinstance(event, TaskRated) and event.state is not UNSET:
                    last_rated = (event, event.state)
                    if keep_updates and n_rated % rated_stride == 0:
                        with_state.append(event)
                        held += _state_size(event.state)
                        while held > keep_updates and len(with_state) > 1:  # halve the sample
                            for dropped in with_state[1::2]:
                                dropped.state = UNSET
                            with_state, rated_stride = with_state[::2], rated_stride * 2
                            held = sum(_state_size(e.state) for e in with_state)
                    else:
                        event.state = UNSET
                    n_rated += 1
            continue
        count += 1
        rated.add(str(record.get("task_id", "")))
        if keep_updates is None:
            updates.append(parse_as(record, RatingUpdated))
            continue
        if not keep_updates:
            continue
        for side in ("a", "b"):
            last[str(record.get(side, ""))] = (count, record)
        if (count - 1) % stride == 0:
            updates.append(parse_as(record, RatingUpdated))
            if len(updates) > keep_updates:  # halve the sample: keep every second one
                updates, stride = updates[::2], stride * 2
    if keep_updates and stride > 1:
        extra = {i: r for i, r in last.values() if (i - 1) % stride}  # not in the sample
        if extra:
            merged = [(i * stride + 1, u) for i, u in enumerate(updates)]
            merged += [(i, parse_as(r, RatingUpdated)) for i, r in extra.items()]
            updates = [u for _, u in sorted(merged, key=lambda t: t[0])]
    if keep_updates and last_rated is not None:
        last_rated[0].state = last_rated[1]  # the ratings after the last task, always
    start = next((e for e in events if isinstance(e, RunStarted)), None)
    if start is None:
        raise RunLogError(f"{run_dir / EVENTS_FILE} has no run_start event")
    return RunLog(run_dir, events, start, updates, count, rated, stride, rated_stride)


def _state_size(state: Any) -> int:
    """How many numbers a ``rated`` event's state holds."""
    return sum(len(v) for v in state.values() if isinstance(v, dict)) if isinstance(state, dict) else 0


def by_kind(events: Iterable[Event], cls: type[E]) -> list[E]:
    """The events of one kind, in order."""
    return [e for e in events if isinstance(e, cls)]

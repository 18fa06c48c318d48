"""The generic tournament loop.

Each round every player sets one task (up to ``attempts`` tries, each told why the earlier ones
failed), every valid and unique task is answered by every player (the setter included), each
p(correct) is estimated, and the rating backend is updated from each task in setter order (once
per unique pair of players per task, or setter against each answerer under the setter_vs_solver
rule, under which a setter that set no valid task forfeits to every answerer). A game that builds
its own tasks (:meth:`~skate.games.base.Game.provided_tasks`, e.g. SCP's built benchmark) has no
setters: each round every player answers the game's tasks. Everything is written to the event
log as it happens.

The engine knows no game. It asks the game (:class:`~skate.games.base.Game`) for a setter's
private inputs (``assignment``), to check a proposal (``validate``, with a
:class:`~skate.games.base.Checks`), for the text the uniqueness test embeds, and, through the
estimator's :class:`~skate.estimators.base.Sampler`, for each answer sample's query and its grade.

Randomness: one run seed. Every random decision draws from a generator derived from that seed
and the decision's coordinates (stage, round, player, attempt) with numpy's ``SeedSequence``
spawn keys, so the same seed gives the same run even when players set tasks concurrently.

What the loop is played with and returns (:class:`~skate.loop.Parts`, its :class:`~skate.loop.Loop`
settings, the :class:`~skate.loop.Summary`) is :mod:`skate.loop`'s.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

import numpy as np

from skate.augment import ScoredTask
from skate.embedders import NoveltyIndex
from skate.estimators.base import Sampler, TaskContext
from skate.games.base import Checks, Game, drop_try
from skate.loop import GameResult, Loop, Parts, Summary, at_guess, separating
from skate.ratings.base import Applied
from skate.runlog import events as ev
from skate.runlog import replies as kept
from skate.runlog.files import EventLog
from skate.runlog.records import (
    BENCHMARK,
    Estimate,
    FailedAttempt,
    FailReason,
    Interrupted,
    Rejection,
    ScheduleMode,
    SetterContext,
    Stage,
    StopRun,
    Task,
    VoidProposal,
)
from skate.sandbox import SandboxError

log = logging.getLogger(__name__)


# Stages in the spawn key of derived generators.
_SET, _AUG, _ANSWER, _JOIN, _ASSIGN, _CHECK, _PAIR = 1, 2, 3, 4, 5, 6, 7
MAX_INFRA_RETRIES = 3
MAX_VOID_RETRIES = 2  # a setter whose model calls keep failing sets no task this round
ANSWER_WORKERS = 64  # (task, player) estimates in flight at once when players wait on the network


@contextlib.contextmanager
def pool_of(workers: int, prefix: str) -> Iterator[ThreadPoolExecutor]:
    """A thread pool that, when the run is stopped (a signal, a spent budget), cancels what has
    not started and does not wait for what is running: the run stops in seconds, not when the
    slowest model call times out."""
    pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix=prefix)
    try:
        yield pool
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


@dataclass
class _SetResult:
    task: Task | None
    attempts: list[ev.AttemptMade] = field(default_factory=list)


class _Counts(TypedDict):
    """What the engine counts, as :class:`~skate.loop.Summary` names it (the last two only once
    there is one)."""

    attempts: int
    tasks: int
    samples: int
    estimates: int
    updates: int
    void_attempts: int
    void_samples: int
    void_estimates: int
    skipped_estimates: NotRequired[int]
    read_estimates: NotRequired[int]


# A task's graded samples, player -> (correct, samples): correct is p times samples for an
# estimate read from the model's probabilities, so not always whole.
Graded = dict[str, tuple[float, int]]


class Engine:
    def __init__(
        self,
        parts: Parts,
        log: EventLog,
        loop: Loop | None = None,
        round_info: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        """``parts``: a game's, every one built (:func:`skate.settings.build.assemble`);
        ``round_info``: what else each ``round_end`` records (the runner's model usage)."""
        loop = loop or Loop()
        game, players, rating = parts.game, parts.players, parts.rating
        seed, stages, schedule, settled, min_rounds = (
            loop.seed,
            loop.stages,
            loop.schedule,
            loop.settled,
            loop.min_rounds,
        )
        names = [p.name for p in players]
        if len(set(names)) != len(names):
            raise ValueError(f"player names must be unique, got {names}")
        if BENCHMARK in names:
            raise ValueError(f"{BENCHMARK!r} names the benchmark's own tasks; rename that player")
        self.game, self.players, self.rating = game, list(players), rating
        self.aug, self.estimator, self.sandbox = parts.aug, parts.estimator, parts.sandbox
        self.novelty, self.log = NoveltyIndex(parts.embedder), log
        self.logger, self.client = parts.logger, parts.client
        self.replies = parts.replies
        self._round_info = round_info
        self.seed = seed
        self.names = tuple(names)
        self.archive: list[ScoredTask] = []
        self.counts: _Counts = {
            "attempts": 0,
            "tasks": 0,
            "samples": 0,
            "estimates": 0,
            "updates": 0,
            "void_attempts": 0,
            "void_samples": 0,
            "void_estimates": 0,
        }
        self.stopped: str | None = None  # why the run ended early, if it did
        self.stopped_round = 0
        # Stop once the ranking is settled: every adjacent pair ordered with at least this
        # probability (the rating backend's), after at least min_rounds rounds. The settings'
        # checks (skate.settings.config.validate: stop.settled in (0.5, 1), not with stages) are trusted.
        self.settled, self.min_rounds = settled, max(1, int(min_rounds))
        self.ended, self.ended_detail = "rounds", ""
        self.rounds_played = 0  # rounds finished (their round_end written)
        self.rejections: dict[str, dict[str, int]] = {}  # setter -> reason -> rejected attempts
        self.order: tuple[Any, ...] | None = None  # the ranking's adjacent pairs at the round's start
        self.rating.add_players(self.names)
        self.stages = list(stages or [])
        joiners = {n for st in self.stages for n in st.join}
        unknown = sorted(joiners - set(names) | {n for st in self.stages for n in (st.setters or ())} - set(names))
        if unknown:
            raise ValueError(f"stages name players not in the game: {unknown}")
        self.active = [i for i, n in enumerate(names) if n not in joiners]  # who plays now
        self.schedule = ScheduleMode(schedule)  # a ValueError names the valid modes
        self.pair_counts: dict[tuple[int, int], int] = {}  # matches played per ordered pair
        self.round_setters: list[int] = []  # who sets this round
        self.answering: list[int] = []  # who answers this round's tasks
        self.stage_setters: tuple[str, ...] | None = None  # who sets now (None = every active player)
        self.total_rounds = sum(st.rounds for st in self.stages) if self.stages else game.rounds

    def rng(self, *key: int) -> np.random.Generator:
        return np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=key))

    # ------------------------------------------------------------------ setting
    def _set_one(self, round: int, idx: int) -> _SetResult:
        player = self.players[idx]
        game = self.game
        history = self.aug.history(player.name, self.archive, self.rng(_AUG, round, idx))
        assignment = game.assignment(player.name, round, self.rng(_ASSIGN, round, idx))
        if self.replies is not None:
            self.replies.shown(
                round,
                player.name,
                [
                    {"task": self.archive[h.number - 1].task.task_id, **({"p": h.p_correct} if h.p_correct else {})}
                    for h in history
                ],
                assignment,
            )
        failed: list[FailedAttempt] = []
        out = _SetResult(task=None)
        attempt, infra, void = 1, 0, 0
        while attempt <= game.attempts:
            tries = infra + void
            ctx = SetterContext(
                player=player.name,
                players=self.names,
                round=round,
                rounds=self.total_rounds,
                attempt=attempt,
                attempts_left=game.attempts - attempt + 1,
                failed=tuple(failed),
                history=history,
                strategy=self.aug.strategy.value,
                assignment=assignment,
            )
            with kept.scope(round=round, setter=player.name, attempt=attempt, tries=tries):
                proposal = player.set_task(ctx, self.rng(_SET, round, idx, attempt, tries))
            seen: tuple[bool, float, Any] | None = None  # the uniqueness check, once made
            if isinstance(proposal, VoidProposal):
                result: Task | Rejection = Rejection(FailReason.VOID, proposal.reason)
                text = ""
            else:
                text = game.proposal_text(proposal)
                if game.novelty_first and text.strip():
                    # Checking costs more than embedding (a whole attack session): a copy of an
                    # earlier task is turned away before it is checked.
                    seen = self.novelty.check(player.name, text)
                if seen is not None and not seen[0]:
                    result = self._not_unique(seen[1])
                else:
                    checks = Checks(
                        round=round,
                        setter=player.name,
                        assignment=assignment,
                        sandbox=self.sandbox,
                        rng=self.rng(_CHECK, round, idx, attempt, tries),
                        solve=player.answer,
                    )
                    with kept.scope(round=round, setter=player.name, attempt=attempt, tries=tries, check=True):
                        result = game.validate(proposal, checks)
            record = ev.AttemptMade(round=round, player=player.name, attempt=attempt, text=text)
            if seen is not None:
                record.novelty_distance = None if seen[1] == float("inf") else round_(seen[1])
            if isinstance(result, Rejection) and result.reason is FailReason.VOID:
                # A model call failed after its retries: not the setter's fault, no attempt used.
                record.reason, record.detail = FailReason.VOID.value, result.detail
                out.attempts.append(record)
                void += 1
                if void > MAX_VOID_RETRIES:
                    return out
                continue
            if isinstance(result, Task):
                if seen is None or game.novelty_text(result) != text:
                    seen = self.novelty.check(player.name, game.novelty_text(result))
                unique, dist, vec = seen
                record.novelty_distance = None if dist == float("inf") else round_(dist)
                if unique:
                    self.novelty.add(player.name, vec)
                    out.task = result
                    record.valid = True
                    out.attempts.append(record)
                    return out
                result = self._not_unique(dist)
            record.reason, record.detail = result.reason.value, result.detail
            out.attempts.append(record)
            if result.reason is FailReason.INFRASTRUCTURE:
                infra += 1
                if infra > MAX_INFRA_RETRIES:
                    raise SandboxError(f"the sandbox failed {infra} times in a row: {result.detail}")
                continue  # not the setter's fault: the attempt is not used up
            failed.append(FailedAttempt(attempt, text, result.reason, result.detail))
            attempt += 1
        return out

    def _not_unique(self, dist: float) -> Rejection:
        return Rejection(
            FailReason.NOT_UNIQUE,
            f"too similar to one of your earlier tasks (distance {dist:.3f}, "
            f"must exceed {self.novelty.embedder.threshold:.3f})",
        )

    # ------------------------------------------------------------------ answering
    def _sampler(self, task: Task, j: int) -> Sampler:
        """Player ``j``'s graded samples on ``task``: queries from the game, replies from the player."""
        player = self.players[j]
        replies = self.replies
        keep = None if replies is None else (lambda views: replies.answers(task.task_id, player.name, views))
        return Sampler(
            self.game,
            task,
            player.answer,
            self.sandbox,
            fixed_queries=getattr(self.estimator, "fixed_queries", False),
            read_choices=player.read_choices if getattr(self.estimator, "reads", False) else None,
            player=player.name,
            keep=keep,
        )

    def _estimate(self, task: Task, round: int, setter_idx: int, j: int) -> Estimate:
        sampler = self._sampler(task, j)
        est = self.estimator.estimate(sampler, self.rng(_ANSWER, round, setter_idx, j))
        sampler.close()
        return est

    def _record_estimates(
        self, tasks: list[tuple[int, Task]], round: int, estimates: dict[tuple[int, int], Estimate]
    ) -> list[tuple[dict[str, float], Graded]]:
        """Log every estimate in a fixed order (task, then player); return p(correct) and the
        graded samples (correct, samples) per task.

        Void estimates (no sample got through) and skipped ones (not asked) are logged and left
        out of p(correct), so they never count as a loss.
        """
        out: list[tuple[dict[str, float], Graded]] = [({}, {}) for _ in tasks]
        for k, (idx, task) in enumerate(tasks):
            for j in self.answering:
                self._log_estimate(task, round, self.names[j], estimates[(idx, j)], *out[k])
        return out

    def _log_estimate(
        self,
        task: Task,
        round: int,
        player: str,
        est: Estimate,
        p_correct: dict[str, float],
        counts: Graded,
        joined: str = ev.UNSET,
    ) -> None:
        """Count and log one estimate; a non-void one goes into ``p_correct`` and its graded
        samples into ``counts``. A skipped one (not asked) is logged as such and counts as no
        estimate."""
        if est.read and not est.is_void:  # read from the model's probabilities: no sample drawn
            self.counts["read_estimates"] = self.counts.get("read_estimates", 0) + 1
        else:
            self.counts["samples"] += est.n
        self.counts["void_samples"] += est.void
        if est.skipped:
            self.counts["skipped_estimates"] = self.counts.get("skipped_estimates", 0) + 1
        else:
            self.counts["estimates"] += 1
        if est.failed:
            self.counts["void_estimates"] += 1
        elif not est.is_void:
            p_correct[player] = est.p
            counts[player] = (est.correct, est.n)
        self.log.write(
            ev.Estimated(
                task_id=task.task_id,
                round=round,
                player=player,
                p=None if est.is_void else est.p,
                n=est.n,
                correct=est.correct,
                std=None if est.is_void else round_(est.std),
                unparsable=est.unparsable,
                capped=est.capped,
                void=est.void,
                joined=joined,
                skipped=True if est.skipped else ev.UNSET,
                read=ev.UNSET if est.read is None else est.read,
            )
        )

    def _rate(
        self,
        task: Task,
        p_correct: dict[str, float],
        counts: Mapping[str, tuple[float, int]],
        involving: set[str] | None = None,
    ) -> None:
        """Update the ratings from one task and log every update."""
        self._log_updates(
            self.rating.update(task.task_id, p_correct, involving=involving, setter=task.setter, counts=counts)
        )

    def _forfeit(self, rnd: int, setter: str, attempts: list[ev.AttemptMade]) -> None:
        """A setter that set no valid task this round loses to every other active player (under
        the setter_vs_solver rule; no update under the others; a draw with each when its last
        task was one it could not solve and rating.own_unsolved=tie); log every update."""
        answerers = [self.names[j] for j in self.answering if self.names[j] != setter]
        self._log_updates(self.rating.forfeit(ev.forfeit_id(rnd, setter), setter, answerers, ev.unsolved_own(attempts)))

    def _log_updates(self, applied: Applied) -> None:
        """Log what one task or forfeit did to the ratings: each pairwise update (the backend
        records them, ``events.rating_updates=pair``), else one ``rated`` event."""
        if not applied.updates:
            return
        self.counts["updates"] += applied.updates
        if self.rating.record_pairs:
            for upd in applied.pairs:
                self.log.write(ev.parse({"event": ev.RatingUpdated.event, **upd}))
            return
        state = self.rating.state(applied.players)
        self.log.write(
            ev.TaskRated(task_id=applied.task_id, updates=applied.updates, update=applied.last, state=state or ev.UNSET)
        )

    def _set_and_answer(
        self, pool: ThreadPoolExecutor, rnd: int
    ) -> tuple[list[tuple[int, _SetResult]], dict[tuple[int, int], Estimate]]:
        """Every player sets a task; every player answers every valid task.

        With players that wait on the network, answering a task starts as soon as it is valid,
        while other setters are still at work, and all estimates run concurrently. Each estimate
        draws from its own derived generator and everything is logged afterwards in a fixed
        order, so the event log does not depend on timing.
        """
        setters = self.round_setters
        if not any(self.players[i].io_bound for i in self.active):
            results = list(zip(setters, pool.map(lambda i: self._set_one(rnd, i), setters), strict=True))
            estimates: dict[tuple[int, int], Estimate] = {}
            for i, res in results:
                if res.task is not None:
                    estimates.update(self._task_estimates(res.task, rnd, i))
            return results, estimates
        setting = {pool.submit(self._set_one, rnd, i): i for i in setters}

        def valid_tasks() -> Iterator[tuple[int, Task]]:  # each valid task as soon as its setter is done
            for fut in as_completed(setting):
                res = fut.result()
                if res.task is not None:
                    yield setting[fut], res.task

        try:
            estimates = self._answer_concurrently(rnd, valid_tasks())
        except BaseException:  # a spent budget, a signal: cancel the setting that has not started
            for f in setting:
                f.cancel()
            raise
        return [(i, f.result()) for f, i in setting.items()], estimates

    def _answer_provided(
        self, rnd: int, tasks: Sequence[Task]
    ) -> tuple[list[tuple[int, _SetResult]], dict[tuple[int, int], Estimate]]:
        """Every active player answers every task the game built for this round (no one sets);
        task ``k``'s estimates are keyed ``(k, player)``."""
        results = [(k, _SetResult(task=t)) for k, t in enumerate(tasks)]
        estimates: dict[tuple[int, int], Estimate] = {}
        if not any(self.players[i].io_bound for i in self.active):
            for k, task in enumerate(tasks):
                estimates.update(self._task_estimates(task, rnd, k))
            return results, estimates
        return results, self._answer_concurrently(rnd, enumerate(tasks))

    def _answer_concurrently(self, rnd: int, tasks: Iterable[tuple[int, Task]]) -> dict[tuple[int, int], Estimate]:
        """Every answering player's estimate of each ``(key, task)`` as ``tasks`` yields it, all
        in flight at once (players that wait on the network); estimates are keyed ``(key, player)``.
        A joint estimator gets one job per task, its players' batches going to the answer pool.
        On a stop (a spent budget, a signal) what has not started is cancelled."""
        joint = getattr(self.estimator, "joint", False)
        estimates: dict[tuple[int, int], Estimate] = {}
        futures: list[Any] = []
        with pool_of(ANSWER_WORKERS, "answer") as answers, pool_of(len(self.players), "task") as per_task:
            try:
                for k, task in tasks:
                    if joint:
                        futures.append(per_task.submit(self._task_estimates, task, rnd, k, answers.map))
                    else:
                        futures += [answers.submit(self._keyed_estimate, task, rnd, k, j) for j in self.answering]
                for f in futures:
                    estimates.update(f.result())
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
        return estimates

    def _keyed_estimate(self, task: Task, rnd: int, k: int, j: int) -> dict[tuple[int, int], Estimate]:
        return {(k, j): self._estimate(task, rnd, k, j)}

    def _task_estimates(
        self, task: Task, round: int, setter_idx: int, pmap: Any = map
    ) -> dict[tuple[int, int], Estimate]:
        """Every active player's estimate on one task, each from its own derived generator."""
        rngs = [self.rng(_ANSWER, round, setter_idx, j) for j in self.answering]
        samplers = [self._sampler(task, j) for j in self.answering]
        ests = self.estimator.estimate_task(samplers, rngs, pmap=pmap, context=self._context(task, self.answering))
        for sampler in samplers:
            sampler.close()
        return {(setter_idx, j): e for j, e in zip(self.answering, ests, strict=True)}

    def _context(self, task: Task, answering: Sequence[int]) -> TaskContext:
        return TaskContext(players=tuple(self.names[j] for j in answering), setter=task.setter, order=self.order)

    def join(self, stage: str, names: Sequence[str]) -> None:
        """Players join: each answers every task set so far; only pairs with a newcomer are rated."""
        new = [self.names.index(n) for n in names]
        self.active = sorted(set(self.active) | set(new))
        joined = set(names)
        self.log.write(ev.PlayersJoined(stage=stage, players=list(names), tasks=len(self.archive)))
        for k, scored in enumerate(self.archive):
            rngs = [self.rng(_JOIN, k, j) for j in new]
            # Newcomers have no place in the ranking: an estimator that reads it asks them all.
            context = TaskContext(players=tuple(self.names[j] for j in new), setter=scored.task.setter, order=None)
            samplers = [self._sampler(scored.task, j) for j in new]
            ests = self.estimator.estimate_task(samplers, rngs, context=context)
            for sampler in samplers:
                sampler.close()
            for j, est in zip(new, ests, strict=True):
                self._log_estimate(
                    scored.task, scored.task.round, self.names[j], est, scored.p_correct, scored.counts, joined=stage
                )
            self._rate(scored.task, scored.p_correct, scored.counts, involving=joined)

    def snapshot(self) -> list[dict[str, Any]]:
        """The ratings table of the active players, ranked among themselves."""
        active = {self.names[i] for i in self.active}
        rows = [r.as_dict() for r in self.rating.table() if r.player in active]
        for rank, r in enumerate(rows, 1):
            r["stage_rank"] = rank
        return rows

    # ------------------------------------------------------------------ the game
    def run(self) -> GameResult:
        start = time.perf_counter()
        stages = self.stages or [Stage("game", (), None, self.game.rounds)]
        rnd = 0
        self._seed_novelty()
        with pool_of(len(self.players), "setter") as pool:
            try:
                for stage in stages:
                    if stage.join:
                        self.join(stage.name, stage.join)
                    self.stage_setters = stage.setters
                    for _ in range(stage.rounds):
                        rnd += 1
                        self._play_round(pool, rnd, start)
                        if self._settled(rnd):
                            break
                    if self.stages:
                        self.log.write(ev.StageEnded(stage=stage.name, round=rnd, ratings=self.snapshot()))
            except (StopRun, Interrupted) as exc:
                # Stop cleanly: what finished is kept; the unfinished round changes no rating.
                self.stop(exc, rnd)
        return self.result(time.perf_counter() - start)

    def _seed_novelty(self) -> None:
        """Each setter's demonstrations (a prompt optimiser's, :meth:`skate.llm.modules.SetterModule.demonstrated`)
        count as its earlier tasks for the uniqueness test: its prompt shows each as one of its own
        replies, and a copy of one is not a task of its own."""
        for player in self.players:
            setter = getattr(player, "setter", None)
            if setter is None or not getattr(getattr(setter, "predict", None), "demos", None):
                continue
            self.novelty.seed(player.name, [self.game.proposal_text(p) for p in setter.demonstrated()])

    def stop(self, why: BaseException, rnd: int = 0) -> None:
        """Record that the game stopped after round ``rnd`` (0: before its first), and why; calls
        waiting for a model that is down end now (the round they belong to is not finished)."""
        if self.client is not None:
            self.client.stop_waiting()
        self.stopped = f"{type(why).__name__}: {why}"
        self.stopped_round = rnd
        self.ended, self.ended_detail = "stopped", self.stopped
        self.log.write(ev.RunStopped(round=rnd, reason=self.stopped))

    def _settled(self, rnd: int) -> bool:
        """Whether the game ends after round ``rnd`` because its ranking is settled (stop.settled:
        every adjacent pair ordered with at least that probability, after min_rounds)."""
        if self.settled is None or rnd < self.min_rounds or rnd >= self.total_rounds:
            return False
        order = self.rating.order_confidence()
        if not order or min(p.confidence for p in order) < self.settled:
            return False
        weakest = min(order, key=lambda p: p.confidence)
        self.ended = "settled"
        self.ended_detail = (
            f"settled after round {rnd} of {self.total_rounds}: every adjacent pair of the ranking "
            f"is ordered with probability >= {self.settled} (the least sure: {weakest.above} above "
            f"{weakest.below}, {weakest.confidence:.4f})"
        )
        return True

    def result(self, elapsed: float) -> GameResult:
        """The ratings table, the archive and the summary as they stand."""
        return GameResult(
            table=[r.as_dict() for r in self.rating.table()], archive=self.archive, summary=self.summary(elapsed)
        )

    def _pick_match(self, rnd: int) -> tuple[int, int]:
        """The least-played ordered pair (setter, solver) among the active players; ties drawn
        from the run seed."""
        pairs = [(a, b) for a in self.active for b in self.active if a != b]
        fewest = min(self.pair_counts.get(p, 0) for p in pairs)
        tied = [p for p in pairs if self.pair_counts.get(p, 0) == fewest]
        pick = tied[int(self.rng(_PAIR, rnd).integers(len(tied)))]
        self.pair_counts[pick] = fewest + 1
        return pick

    def _play_round(self, pool: ThreadPoolExecutor, rnd: int, start: float) -> None:
        # The ranking so far, for an estimator that samples where it is unsure (read once a round:
        # the round's tasks are answered concurrently and rated after all of them).
        self.order = tuple(self.rating.order_confidence() or ()) if self.estimator.uses_order else None
        provided = self.game.provided_tasks(rnd)
        if provided is not None:  # a built benchmark: every active player answers, no one sets
            self.round_setters, self.answering = [], list(self.active)
            self.log.write(ev.RoundStarted(round=rnd, setters=[], answerers=[self.names[j] for j in self.active]))
            results, estimates = self._answer_provided(rnd, provided)
        elif self.schedule is ScheduleMode.matches:
            setter, solver = self._pick_match(rnd)
            self.round_setters, self.answering = [setter], [solver]
            self.log.write(ev.RoundStarted(round=rnd, setters=[self.names[setter]], answerers=[self.names[solver]]))
            results, estimates = self._set_and_answer(pool, rnd)
        else:
            self.round_setters = [
                i for i in self.active if self.stage_setters is None or self.players[i].name in self.stage_setters
            ]
            self.answering = list(self.active)
            self.log.write(ev.RoundStarted(round=rnd))
            results, estimates = self._set_and_answer(pool, rnd)
        tasks: list[tuple[int, Task]] = []
        for idx, res in results:
            for rec in res.attempts:
                self.log.write(rec)
                if not rec.valid and rec.reason:
                    mine = self.rejections.setdefault(self.names[idx], {})
                    mine[rec.reason] = mine.get(rec.reason, 0) + 1
            self.counts["attempts"] += len(res.attempts)
            self.counts["void_attempts"] += sum(1 for r in res.attempts if r.reason == FailReason.VOID.value)
            if res.task is not None:
                t = res.task
                tasks.append((idx, t))
                self.log.write(
                    ev.TaskSet(
                        task_id=t.task_id,
                        round=t.round,
                        setter=t.setter,
                        prompt=t.prompt,
                        answer=t.answer,
                        attempts=len(res.attempts),
                        extra=dict(t.data),
                    )
                )
        self._report_void_players(rnd, results, estimates)
        scores = iter(self._record_estimates(tasks, rnd, estimates))
        for idx, res in results:  # in setter order: online backends depend on it
            if res.task is not None:
                p_correct, counts = next(scores)
                self._rate(res.task, p_correct, counts)
                self.archive.append(ScoredTask(res.task, p_correct, counts))
            elif ev.forfeited(res.attempts):
                self._forfeit(rnd, self.names[idx], res.attempts)
        self.counts["tasks"] += len(tasks)
        table = [r.as_dict() for r in self.rating.table()]
        order = self.rating.order_confidence()
        self.log.write(
            ev.RoundEnded(
                round=rnd,
                tasks=len(tasks),
                ratings=table,
                order=[p.as_dict() for p in order] if order is not None else ev.UNSET,
                **self.extra_round_info(),
            )
        )
        self.rounds_played += 1
        if hasattr(self.log, "sync"):
            self.log.sync()  # a finished round survives a power loss
        if self.replies is not None:
            self.replies.flush()  # a round's replies are readable once it ends
        self.logger.round_end(
            rnd, self.total_rounds, self.summary(time.perf_counter() - start, final=False).as_dict(), table
        )

    def _report_void_players(
        self, rnd: int, results: list[tuple[int, _SetResult]], estimates: dict[tuple[int, int], Estimate]
    ) -> None:
        """Log (and record as ``player_void``) each player whose every model call this round failed."""
        attempts = {idx: res.attempts for idx, res in results}
        for j in sorted(set(self.answering) | set(attempts)):
            mine = [e for (_, k), e in estimates.items() if k == j and not e.skipped]
            tries = attempts.get(j, [])
            if not mine and not tries:
                continue
            if all(e.is_void for e in mine) and all(a.reason == FailReason.VOID.value for a in tries):
                name = self.names[j]
                log.warning(
                    "round %d: every model call of %s failed (%d void estimates, %d void attempts); "
                    "check its model and endpoint",
                    rnd,
                    name,
                    len(mine),
                    len(tries),
                )
                self.log.write(ev.PlayerVoid(round=rnd, player=name, estimates=len(mine), attempts=len(tries)))

    def extra_round_info(self) -> dict[str, Any]:
        """What else a round's end records (``round_info``: the runner adds model usage)."""
        return self._round_info() if self._round_info is not None else {}

    def summary(self, elapsed: float, final: bool = True) -> Summary:
        """The run's counts; ``final``: with what the tasks told (``separating``, ``at_guess``:
        a pass over every task, made once, at the end, not at every round's progress)."""
        per_player = {n: sum(1 for s in self.archive if s.task.setter == n) for n in self.names}
        reasons = sorted({r for mine in self.rejections.values() for r in mine})
        hints = {r: h for r in reasons if (h := self._hint(r))}
        return Summary(
            **self.counts,
            tasks_by_setter=per_player,
            elapsed_s=round(elapsed, 2),
            sandbox_executions=getattr(self.sandbox, "executions", 0),
            stopped=self.stopped or None,
            stopped_round=self.stopped_round if self.stopped else None,
            settled=self.ended_detail if self.ended == "settled" else None,
            rejections={n: dict(sorted(m.items())) for n, m in self.rejections.items()} or None,
            hints=hints or None,
            separating=separating(self.archive) if final else None,
            at_guess=at_guess(self.game, self.archive) if final else None,
        )

    def _hint(self, reason: str) -> str | None:
        """The game's hint for ``reason``, less what is already in effect: a fresh sample after
        a rejection where every model player has one (``setter_repair``), no history shown where
        the run's aug shows none."""
        hint = self.game.rejection_hint(reason)
        repairs = [p.setter_repair for p in self.players if hasattr(p, "setter_repair")]
        in_effect = ([Game.RESAMPLE] if repairs and all(r == "resample" for r in repairs) else []) + (
            [Game.NO_HISTORY] if self.aug.strategy.value == "no_info" else []
        )
        return hint and drop_try(hint, *in_effect)


def round_(x: float, nd: int = 4) -> float:
    return float(round(x, nd))

"""The generic tournament loop.

Each round every player sets one task (up to ``attempts`` tries, each told why the earlier ones
failed), every valid and unique task is answered by every player (the setter included), each
p(correct) is estimated, and the rating backend is updated once per unique pair of players per
task. Everything is written to the event log as it happens.

Randomness: one run seed. Every random decision draws from a generator derived from that seed
and the decision's coordinates (stage, round, player, attempt) with numpy's ``SeedSequence``
spawn keys, so the same seed gives the same run even when players set tasks concurrently.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from skate.augment import Augmentation, ScoredTask
from skate.games.base import Game
from skate.novelty import NoveltyIndex
from skate.players.base import Player
from skate.ratings.base import RatingBackend
from skate.records import FailedAttempt, FailReason, Rejection, SetterContext, Task
from skate.sandbox import Sandbox, SandboxError
from skate.scoring import Estimator
from skate.store import EventLog
from skate.tracking import RunLogger

# Stages in the spawn key of derived generators.
_SET, _AUG, _ANSWER = 1, 2, 3
MAX_INFRA_RETRIES = 3


@dataclass
class _SetResult:
    task: Task | None
    attempts: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class GameResult:
    table: list[dict[str, Any]]
    archive: list[ScoredTask]
    summary: dict[str, Any]


class Engine:
    def __init__(self, game: Game, players: Sequence[Player], rating: RatingBackend,
                 aug: Augmentation, estimator: Estimator, sandbox: Sandbox, novelty: NoveltyIndex,
                 log: EventLog, logger: RunLogger | None = None, seed: int = 0) -> None:
        names = [p.name for p in players]
        if len(set(names)) != len(names):
            raise ValueError(f"player names must be unique, got {names}")
        self.game, self.players, self.rating = game, list(players), rating
        self.aug, self.estimator, self.sandbox = aug, estimator, sandbox
        self.novelty, self.log = novelty, log
        self.logger = logger or RunLogger()
        self.seed = seed
        self.names = tuple(names)
        self.archive: list[ScoredTask] = []
        self.counts = {"attempts": 0, "tasks": 0, "samples": 0, "estimates": 0, "updates": 0}
        self.rating.add_players(self.names)

    def rng(self, *key: int) -> np.random.Generator:
        return np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=key))

    # ------------------------------------------------------------------ setting
    def _set_one(self, round: int, idx: int) -> _SetResult:
        player = self.players[idx]
        spec = self.game.spec
        history = self.aug.history(player.name, self.archive, self.rng(_AUG, round, idx))
        failed: list[FailedAttempt] = []
        out = _SetResult(task=None)
        attempt, infra = 1, 0
        while attempt <= spec.attempts:
            ctx = SetterContext(player=player.name, players=self.names, round=round, rounds=spec.rounds,
                                attempt=attempt, attempts_left=spec.attempts - attempt + 1,
                                failed=tuple(failed), history=history, strategy=self.aug.strategy.value)
            proposal = player.set_task(ctx, self.rng(_SET, round, idx, attempt, infra))
            text = self.game.proposal_text(proposal)
            result = self.game.validate(proposal, round=round, setter=player.name, sandbox=self.sandbox)
            record: dict[str, Any] = {"round": round, "player": player.name, "attempt": attempt,
                                      "text": text}
            if isinstance(result, Task):
                unique, dist, vec = self.novelty.check(player.name, self.game.novelty_text(result))
                record["novelty_distance"] = None if dist == float("inf") else round_(dist)
                if unique:
                    self.novelty.add(player.name, vec)
                    out.task = result
                    out.attempts.append({**record, "valid": True, "reason": None, "detail": ""})
                    return out
                result = Rejection(FailReason.NOT_UNIQUE,
                                   f"too similar to one of your earlier tasks (distance {dist:.3f}, "
                                   f"must exceed {self.novelty.embedder.threshold:.3f})")
            out.attempts.append({**record, "valid": False, "reason": result.reason.value,
                                 "detail": result.detail})
            if result.reason is FailReason.INFRASTRUCTURE:
                infra += 1
                if infra > MAX_INFRA_RETRIES:
                    raise SandboxError(f"the sandbox failed {infra} times in a row: {result.detail}")
                continue  # not the setter's fault: the attempt is not used up
            failed.append(FailedAttempt(attempt, text, result.reason, result.detail))
            attempt += 1
        return out

    # ------------------------------------------------------------------ answering
    def _score(self, task: Task, round: int, setter_idx: int) -> dict[str, float]:
        p_correct: dict[str, float] = {}
        for j, player in enumerate(self.players):
            est = self.estimator.estimate(player.answer_batch, task, self.game.spec.n_options,
                                          self.rng(_ANSWER, round, setter_idx, j))
            p_correct[player.name] = est.p
            self.counts["samples"] += est.n
            self.counts["estimates"] += 1
            self.log.write("estimate", task_id=task.task_id, round=round, player=player.name, p=est.p,
                           n=est.n, correct=est.correct, std=round_(est.std), unparsable=est.unparsable,
                           capped=est.capped)
        return p_correct

    # ------------------------------------------------------------------ the game
    def run(self) -> GameResult:
        spec = self.game.spec
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=len(self.players), thread_name_prefix="setter") as pool:
            for rnd in range(1, spec.rounds + 1):
                self.log.write("round_start", round=rnd)
                results = list(pool.map(lambda i, r=rnd: self._set_one(r, i), range(len(self.players))))
                tasks: list[tuple[int, Task]] = []
                for idx, res in enumerate(results):
                    for rec in res.attempts:
                        self.log.write("attempt", **rec)
                    self.counts["attempts"] += len(res.attempts)
                    if res.task is not None:
                        t = res.task
                        tasks.append((idx, t))
                        self.log.write("task", task_id=t.task_id, round=t.round, setter=t.setter,
                                       prompt=t.prompt, answer=t.answer, distractors=list(t.distractors),
                                       attempts=len(res.attempts))
                for idx, task in tasks:
                    p_correct = self._score(task, rnd, idx)
                    for upd in self.rating.update(task.task_id, p_correct):
                        self.log.write("rating", **upd)
                        self.counts["updates"] += 1
                    self.archive.append(ScoredTask(task, p_correct))
                self.counts["tasks"] += len(tasks)
                table = [r.as_dict() for r in self.rating.table()]
                self.log.write("round_end", round=rnd, tasks=len(tasks), ratings=table)
                self.logger.round_end(rnd, spec.rounds, self.summary(time.perf_counter() - start), table)
        summary = self.summary(time.perf_counter() - start)
        return GameResult(table=[r.as_dict() for r in self.rating.table()], archive=self.archive,
                          summary=summary)

    def summary(self, elapsed: float) -> dict[str, Any]:
        per_player = {n: sum(1 for s in self.archive if s.task.setter == n) for n in self.names}
        return {**self.counts, "tasks_by_setter": per_player, "elapsed_s": round(elapsed, 2)}


def round_(x: float, nd: int = 4) -> float:
    return float(round(x, nd))

"""p(correct) estimators.

An estimator sees a player's answers on one task only as graded Bernoulli samples: it asks a
:class:`Sampler` for ``n`` more and gets back how many were correct, unreadable (counted as
wrong) and void (the model call failed: not counted at all). The sampler makes each sample's
query through the game (for multiple choice, a fresh draw of options), collects the player's
replies and has the game grade them. So every estimator works for every game and answer format:
Algorithm 1's stopping rule applies to any Bernoulli outcome.
"""

from __future__ import annotations

import hashlib
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from skate.errors import Problem, Settings
from skate.games.base import AnswerFormat
from skate.ratings.base import OrderPair
from skate.registry import Component, Registry
from skate.runlog import replies
from skate.runlog.records import VOID, Decoding, Estimate, Task

if TYPE_CHECKING:  # pragma: no cover
    from skate.games.base import Game

# sample(n, rng) -> (correct, unreadable, void) among n new samples
SampleFn = Callable[[int, np.random.Generator], tuple[int, int, int]]


class Sampler:
    """Draws graded samples of one player on one task through the game's :meth:`~skate.games.
    base.Game.play`: queries from the game, replies from the player (``answer(queries, rng)``),
    verdicts from the game. ``sandbox`` is for games whose samples execute code.

    ``keep``, when given, is told every sample drawn, as the game views them
    (:meth:`~skate.games.base.Game.sample_views`), once the estimate is done (:meth:`close`, which
    its caller calls). Every call to the player is made in the reply scope
    (:mod:`skate.runlog.replies`) of the task, the player (``player``) and the call's number, so
    its model's replies join the samples they were read from."""

    def __init__(
        self,
        game: Game,
        task: Task,
        answer: Callable[[Sequence[Any], np.random.Generator], Sequence[Any]],
        sandbox: Any = None,
        fixed_queries: bool = False,
        read_choices: Callable[..., list[Any] | None] | None = None,
        player: str = "",
        keep: Callable[[list[dict[str, Any]]], None] | None = None,
    ) -> None:
        self.game, self.task, self._answer, self.sandbox = game, task, answer, sandbox
        self.fixed_queries = fixed_queries
        self._read_choices = read_choices  # the player's Player.read_choices, where it may be asked
        self.read_choices = self._read_in_scope if read_choices is not None else None
        self.player, self.keep = player, keep
        self.views: list[dict[str, Any]] = []  # with keep: every sample drawn so far, as the game views it
        self._calls = 0  # calls made to the player so far
        self._turns: list[list[tuple[int, Any, Any]]] | None = None  # this draw's calls: (call, query, reply)

    def close(self) -> None:
        """The estimate is done: its samples go to ``keep`` (once; nothing when none were drawn)."""
        if self.keep is not None and self.views:
            self.keep(self.views)
        self.views = []

    def answer(self, queries: Sequence[Any], rng: np.random.Generator) -> Sequence[Any]:
        """The player's replies, asked in the reply scope of this task, player and call."""
        call = self._calls
        self._calls += 1
        with replies.scope(task=self.task.task_id, answerer=self.player, call=call):
            got = self._answer(queries, rng)
        if self._turns is not None:
            self._turns.append([(call, q, r) for q, r in zip(queries, got, strict=False)])
        return got

    def _read_in_scope(self, queries: list[Any], rng: np.random.Generator, **kw: Any) -> list[Any] | None:
        assert self._read_choices is not None
        with replies.scope(task=self.task.task_id, answerer=self.player, call="read"):
            return self._read_choices(queries, rng, **kw)

    def read(self, rng: np.random.Generator, min_mass: float = 0.5, orders: int = 1) -> Read:
        """p(correct) read from the player's own probabilities for the task's query (the options
        in one order, drawn from the task alone, the same for every player): the sum of the
        probabilities of the options that are right. With ``orders`` > 1, the mean of that many
        reads, each of a query drawn from the task alone (the first the one above), so a model's
        preference for a label weighs on the right option in several places. ``Read.p`` is None
        where it cannot be read (``why`` says why: the player states no probabilities, the
        game's answers name no option, ...) and ``void`` where the player's call failed."""
        if self.read_choices is None:
            return Read(why="the player states no probabilities")
        if self.game.spec.answer_format != AnswerFormat.multiple_choice:
            return Read(why=f"{self.game.name}'s answers are {self.game.spec.answer_format}, not an option's label")
        queries = [self.game.make_query(self.task, task_rng(self.task, k)) for k in range(orders)]
        got = self.read_choices(queries, rng, min_mass=min_mass)
        if got is None:
            return Read(why="the player states no probabilities")
        if any(choice.void for choice in got):
            return Read(why=next(c.why for c in got if c.void), void=True)
        if not all(choice.ok for choice in got):
            return Read(why=next(c.why for c in got if not c.ok))
        ps = [
            sum(prob for i, prob in enumerate(choice.probs) if self.game.grade(self.task, query, i))
            for query, choice in zip(queries, got, strict=True)
        ]
        return Read(p=min(1.0, max(0.0, float(np.mean(ps)))))

    def __call__(self, n: int, rng: np.random.Generator) -> tuple[int, int, int]:
        self._turns = [] if self.keep is not None else None
        if self.fixed_queries:  # every player sees the same query (options in one order), drawn from the task alone
            verdicts = self.game.play(self.task, self.answer, n, rng, self.sandbox, query_rng=task_rng(self.task))
        else:
            verdicts = self.game.play(self.task, self.answer, n, rng, self.sandbox)
        if len(verdicts) != n:
            raise RuntimeError(f"the game graded {len(verdicts)} samples for {n} asked")
        if self.keep is not None and self._turns is not None:
            self.views += self.game.sample_views(self.task, self._turns, verdicts)
        self._turns = None
        correct = unreadable = void = 0
        for verdict in verdicts:
            if verdict is VOID:
                void += 1
            elif verdict is None:
                unreadable += 1
            elif verdict:
                correct += 1
        return correct, unreadable, void


@dataclass(frozen=True)
class Read:
    """p(correct) read from a player's probabilities (:meth:`Sampler.read`), or why not."""

    p: float | None = None
    why: str = ""
    void: bool = False  # the player's call failed (left out, never wrong)


def task_rng(task: Task, order: int = 0) -> np.random.Generator:
    """A generator seeded by the task alone: the same query (the same options in the same order)
    for every player and every run of the task; ``order`` k > 0 gives the task's k-th other one."""
    digest = hashlib.sha256(task.task_id.encode() + (f"/order-{order}".encode() if order else b"")).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


@dataclass(frozen=True)
class TaskContext:
    """What a joint estimator may know about the task it samples: who answers (in the order of
    its samplers), who set it, and how sure the ranking is so far (each adjacent pair of the
    current ranking with the probability that its order is right; None when the rating cannot
    say, or has nothing yet)."""

    players: tuple[str, ...]
    setter: str | None = None
    order: tuple[OrderPair, ...] | None = None


# --------------------------------------------------------------------------- estimator
@dataclass
class EstimatorConfig(metaclass=Settings):
    """What every estimator's settings are (the ``estimator`` section's type); each estimator's
    schema extends it (see :data:`estimator`, the group's registry), and checks its own fields in
    ``check`` (adding to ``super().check()``)."""

    def check(self) -> list[Problem]:
        """What types cannot say is wrong with these settings (keys within ``estimator``)."""
        return []


class Estimator(Component[EstimatorConfig], ABC):
    """An estimator, built from its settings (:class:`~skate.registry.Component`: an instance of
    its schema, or the schema's keys as keywords: ``FixedN(n=4)``), each kind's class narrowing
    ``settings`` to its own schema. Its capabilities are these class attributes (the config checks
    read them from the :data:`estimator` registry, never from a ``_target_`` string)."""

    joint = False  # True: estimates all players of a task together (estimate_task)
    uses_order = False  # True: reads the ranking so far (TaskContext.order): the rating must say how sure it is
    picks_answerers = False  # True: chooses who answers each task (not for schedule.mode=matches)
    greedy_decoding = False  # True: one greedy answer per query (sets every model player's temperature)
    decoding: Decoding | None = None  # greedy: how every model player decodes (given to the players when built)
    decides_outcomes = False  # True: settles the rating rule's pairwise outcomes (needs a rating with a rule)
    reads = False  # True: reads p(correct) from the players' probabilities (multiple-choice games only)

    def estimate_task(
        self,
        samples: Sequence[SampleFn],
        rngs: Sequence[np.random.Generator],
        pmap: Callable = map,
        context: TaskContext | None = None,
    ) -> list[Estimate]:
        """Every player's estimate on one task (independently, unless the estimator is joint)."""
        return list(pmap(lambda i: self.estimate(samples[i], rngs[i]), range(len(samples))))

    @abstractmethod
    def estimate(self, sample: SampleFn, rng: np.random.Generator) -> Estimate:
        """Estimate one player's p(correct) from its samples."""


def binomial_std(p: float, n: int) -> float:
    return math.sqrt(p * (1.0 - p) / n) if n else float("inf")


def wilson(correct: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion."""
    if n == 0:
        return 0.0, 1.0
    p = correct / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


# The estimator group's registry (conf/estimator/<name>.yaml extends /schema/estimator/<name>);
# each estimator registers in its own module of this package.
estimator: Registry[type[Estimator]] = Registry("estimator", "skate.estimators")

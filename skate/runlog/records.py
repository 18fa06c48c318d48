"""Plain records that flow between the engine, games, players and ratings."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# The pass mark: the p(correct) at or above which an answerer counts as solving a task (the
# rating's ``p_thresh``; the games' ``pass_mark``: a setter solving its own task). Its one default.
PASS_MARK = 0.55


class FailReason(enum.StrEnum):
    """Why an attempt at setting a task was rejected; shown to the setter on its next attempt."""

    MALFORMED = "malformed"  # the proposal could not be read (missing code, wrong shape)
    NOT_VERIFIABLE = "not_verifiable"  # no checkable answer: crashed, timed out, silent, nondeterministic
    BREAKS_RULES = "breaks_rules"  # breaks a rule of the game (e.g. states its own answer)
    UNSOLVED = "unsolved"  # the setter could not solve its own task when asked to prove it solvable
    TOO_FEW_DISTRACTORS = "too_few_distractors"  # not enough distinct wrong options
    NOT_UNIQUE = "not_unique"  # too close to a task the same player set before
    INFRASTRUCTURE = "infrastructure"  # the sandbox broke: not the setter's fault
    VOID = "void"  # the model call failed after retries: not the setter's fault either


@dataclass(frozen=True)
class Task:
    """A valid task that every player will answer.

    ``prompt`` is the text a solver is shown and the history shows later setters; ``answer`` is
    the checked answer (known because a machine checked it). ``data`` holds what else the game
    keeps about the task (wrong options, a setter's own answer, ...): it is written into the
    task's event, field by field.
    """

    task_id: str
    round: int
    setter: str
    prompt: str
    answer: str
    data: dict[str, Any] = field(default_factory=dict)


# The setter of a task the game built itself (a built benchmark: no player set it).
BENCHMARK = "(benchmark)"


@dataclass(frozen=True)
class Rejection:
    reason: FailReason
    detail: str


@dataclass(frozen=True)
class FailedAttempt:
    """An earlier attempt in the same round and why it failed."""

    attempt: int
    text: str
    reason: FailReason
    detail: str


@dataclass(frozen=True)
class HistoryItem:
    """One earlier task as an augmentation strategy lets a setter see it.

    ``number`` is the task's position in the order tasks were set, so the order survives the
    shuffle. ``p_correct`` is ``None`` when the strategy hides scores, otherwise it maps the
    players whose scores the strategy reveals to their p(correct).
    """

    number: int
    round: int
    setter: str
    prompt: str
    p_correct: dict[str, float] | None


@dataclass(frozen=True)
class SetterContext:
    """Everything a setter is told when asked for a task."""

    player: str
    players: tuple[str, ...]
    round: int
    rounds: int
    attempt: int
    attempts_left: int  # including this one
    failed: tuple[FailedAttempt, ...]
    history: tuple[HistoryItem, ...]
    strategy: str
    assignment: Mapping[str, Any] = field(default_factory=dict)  # the game's private inputs (e.g. a target)


class StopRun(Exception):
    """Raised by a component that needs the run to end cleanly now (e.g. a spent budget)."""


class Interrupted(BaseException):  # like KeyboardInterrupt, never caught by `except Exception`
    """The run was asked to stop by a signal (SIGINT, SIGTERM); ``signal`` is its name."""

    def __init__(self, signal: str) -> None:
        super().__init__(f"stopped by {signal}")
        self.signal = signal


class Sentinel:
    """A marker value of its own, compared with ``is`` (false in a boolean test). Bind it to the
    name it is given in ``module``; it then pickles to itself."""

    __slots__ = ("module", "name")

    def __init__(self, name: str, module: str = __name__) -> None:
        self.name, self.module = name, module

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self) -> tuple[Any, ...]:
        return _sentinel, (self.module, self.name)


def _sentinel(module: str, name: str) -> Sentinel:
    import importlib

    return getattr(importlib.import_module(module), name)


# What a player returns for an answer sample whose model call failed after every retry. Void
# samples are left out of p(correct) entirely: never a wrong answer. Compare with ``is``.
VOID: Any = Sentinel("VOID")


@dataclass(frozen=True)
class VoidProposal:
    """A setter's model call failed after every retry: no task, and no attempt used up."""

    reason: str


@dataclass(frozen=True)
class Estimate:
    """A player's estimated probability of answering a task correctly."""

    p: float
    n: int  # answer samples drawn (a read: the samples it counts as)
    correct: float  # of them right (an int when sampled; a read: p times n)
    std: float
    unparsable: int = 0  # samples whose reply could not be read (counted as wrong)
    capped: bool = False  # stopped by the sample cap rather than the stopping rule
    void: int = 0  # samples whose model call failed: not counted at all
    # Not asked at all: the estimator spent no sample on this player for this task (its answer
    # could not change an uncertain comparison). Like a void estimate it has no p(correct), but
    # no call failed.
    skipped: bool = False
    # True: p was read from the model's probabilities (estimator=logprobs), no sample drawn; False:
    # that estimator fell back to sampling; None: an estimator that only samples.
    read: bool | None = None

    @property
    def is_void(self) -> bool:
        """No sample got through: the player has no p(correct) for this task (skipped or void)."""
        return self.n == 0

    @property
    def failed(self) -> bool:
        """Samples were asked for and every one's model call failed."""
        return self.n == 0 and not self.skipped


def skipped_estimate() -> Estimate:
    """The estimate of a player the estimator did not ask (no sample, no p(correct))."""
    return Estimate(float("nan"), 0, 0, float("inf"), skipped=True)


@dataclass(frozen=True)
class Decoding:
    """How language-model players decode when the estimator asks for one greedy answer a task
    (:attr:`skate.estimators.base.Estimator.decoding`): each model's temperature and, when given, its
    reply limit, set on the players as they are built."""

    temperature: float = 0.0
    max_tokens: int | None = None

    def spec_fields(self) -> dict[str, Any]:
        """The model settings this decoding sets (``ModelSpec`` fields)."""
        return {
            "temperature": float(self.temperature),
            **({"max_tokens": int(self.max_tokens)} if self.max_tokens is not None else {}),
        }


@dataclass(frozen=True)
class Stage:
    """A stage of a staged game: who joins at its start, who sets tasks, how many rounds.

    Joining players first answer every task set so far (only pairs that involve a newcomer are
    rated for those tasks), then answer everything from then on, and set tasks in the rounds of
    any stage whose ``setters`` includes them (``None`` = every active player).
    """

    name: str
    join: tuple[str, ...] = ()
    setters: tuple[str, ...] | None = None
    rounds: int = 0


class ScheduleMode(enum.StrEnum):
    rounds = "rounds"  # every round every active player sets a task and every one answers each
    matches = "matches"  # ZeroSumEval: each round is one match, an ordered pair (setter, solver)

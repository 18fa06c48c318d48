"""What the tournament loop (:mod:`skate.engine`) is played with and what it returns: the parts
of a game (:class:`Parts`), the loop's own settings (:class:`Loop`), and what a run did
(:class:`Summary`, with the ratings table and the archive in :class:`GameResult`; what its tasks
told at the end: :func:`separating`, :func:`at_guess`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skate.augment import Augmentation, ScoredTask
from skate.embedders import Embedder
from skate.estimators.base import Estimator, task_rng
from skate.games.base import AnswerFormat, Game, GameEnv
from skate.loggers.base import RunLogger
from skate.players.base import Player
from skate.ratings.base import RatingBackend
from skate.runlog.records import ScheduleMode, Stage
from skate.runlog.replies import ReplyLog
from skate.sandbox import Sandbox

if TYPE_CHECKING:
    from skate.llm import LLMClient

SEPARATES = 0.05  # a task separates players whose p(correct) on it lie more than this apart (the draw margin's default)


@dataclass(frozen=True)
class Parts:
    """What a game is played with, every part built and finished (:func:`skate.settings.build.assemble`
    builds them from the settings): the game and its environment, the sandbox, the embedder, the
    players and the model client they share, the rating backend, the setters' augmentation, the
    estimator and the logger."""

    game: Game
    sandbox: Sandbox
    env: GameEnv
    embedder: Embedder
    players: list[Player]
    client: LLMClient | None  # None: no player (nor the embedder) calls a model
    rating: RatingBackend
    aug: Augmentation
    estimator: Estimator
    logger: RunLogger
    replies: ReplyLog | None = None  # where the players' replies are kept (events.replies), else None


@dataclass(frozen=True)
class Loop:
    """The loop's own settings: the run seed, the stages, the schedule and when to stop early.
    The engine takes them as checked (the runner makes them of settings
    :func:`skate.settings.config.validate` checked, :func:`skate.runner.loop_of`: ``settled`` in
    (0.5, 1) or None, and not with stages)."""

    seed: int = 0
    stages: tuple[Stage, ...] = ()  # empty: one stage, game.rounds long
    schedule: ScheduleMode = ScheduleMode.rounds
    settled: float | None = None  # stop once every adjacent pair is ordered with this probability
    min_rounds: int = 1  # ... but not before this many rounds


_COUNTS = ("attempts", "tasks", "samples", "estimates", "updates", "void_attempts", "void_samples", "void_estimates")


@dataclass(frozen=True)
class Summary:
    """What a run did: counts, the tasks each player set, the time, how it ended (the engine's);
    and what the runner adds once the game is over (model usage, prompt optimisation: a new
    summary, :func:`dataclasses.replace`). Read by attribute; recorded as ``run_end.summary``
    (:meth:`as_dict`: the fields that are set, in this order)."""

    attempts: int = 0
    tasks: int = 0
    samples: int = 0
    estimates: int = 0
    updates: int = 0
    void_attempts: int = 0
    void_samples: int = 0
    void_estimates: int = 0
    skipped_estimates: int | None = None  # estimates an estimator chose not to make (adaptive)
    read_estimates: int | None = None  # p(correct) read from a model's probabilities, no sample drawn (logprobs)
    tasks_by_setter: dict[str, int] = field(default_factory=dict)
    elapsed_s: float = 0.0
    sandbox_executions: int = 0
    stopped: str | None = None  # why the game stopped early (a signal, a spent budget)
    stopped_round: int | None = None
    settled: str | None = None  # why the game ended early because its ranking was settled
    optimization: list[dict[str, Any]] | None = None
    prompt_optimization: list[dict[str, Any]] | None = None
    usage: dict[str, Any] | None = None
    # Rejected setting attempts, setter -> reason -> count; what to try for each reason seen
    # (the game's hints); of the valid tasks, those whose players' p(correct) lay more than
    # SEPARATES apart (some pair told apart); players who answered every task at or below a blind
    # guess among its options (multiple choice: ordered by nothing but their failures to answer).
    rejections: dict[str, dict[str, int]] | None = None
    hints: dict[str, str] | None = None
    separating: int | None = None
    at_guess: list[str] | None = None

    def as_dict(self) -> dict[str, Any]:
        """The recorded form (``run_end.summary``, the loggers'): every field that is set."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if getattr(self, f.name) is not None}


@dataclass(frozen=True)
class GameResult:
    table: list[dict[str, Any]]
    archive: list[ScoredTask]
    summary: Summary


def separating(archive: Sequence[ScoredTask]) -> int | None:
    """Valid tasks on which some two players' p(correct) lay more than SEPARATES apart
    (:attr:`Summary.separating`)."""
    if not archive:
        return None
    out = 0
    for s in archive:
        ps = [p for p in s.p_correct.values() if p is not None]
        out += len(ps) >= 2 and max(ps) - min(ps) > SEPARATES
    return out


def at_guess(game: Game, archive: Sequence[ScoredTask]) -> list[str] | None:
    """Players whose p(correct) on every task they answered was at or below a blind guess among
    its options (1 / the options a sample shows: multiple-choice games only; :attr:`Summary.at_guess`)."""
    if game.spec.answer_format != AnswerFormat.multiple_choice:
        return None
    chance: dict[str, float] = {}
    for s in archive:
        query = game.make_query(s.task, task_rng(s.task))
        options = getattr(query, "options", None)
        if not options:
            return None
        chance[s.task.task_id] = 1.0 / len(options)
    seen: dict[str, bool] = {}
    for s in archive:
        for player, p in s.p_correct.items():
            if p is not None:
                seen[player] = seen.get(player, True) and p <= chance[s.task.task_id] + 1e-9
    return sorted(n for n, low in seen.items() if low) or None

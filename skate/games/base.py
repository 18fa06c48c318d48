"""What every task family tells the engine: the game protocol.

A game is one package under ``skate/games/<name>/`` that owns everything about it. Its static
facts (:class:`GameSpec`: name, answer format, kinds of task, score bounds) are kept apart from its
dynamics, the methods of :class:`Game`:

setting
    :meth:`Game.provided_tasks` (a game that builds its own tasks, e.g. SCP's built benchmark:
    then no player sets any),
    :meth:`Game.assignment` (private inputs for one setter's round, e.g. a target number),
    :meth:`Game.validate` (a setter's proposal becomes a :class:`~skate.runlog.records.Task`, or a
    :class:`~skate.runlog.records.Rejection` that says why, fed back to the setter's next attempt),
    :meth:`Game.novelty_text` (what the uniqueness test embeds).
answering
    :meth:`Game.play` draws ``n`` graded answer samples of one player on one task. By default a
    sample is one query (:meth:`Game.make_query`) and one reply, graded by :meth:`Game.grade`;
    a game whose sample is an exchange (PyJail: a session of tries, each seeing the outcomes of
    the earlier ones) overrides :meth:`Game.play` instead. Estimators sample through it, so
    p(correct) is a fraction of graded Bernoulli samples whatever the answer format.
players
    :meth:`Game.simulation` (how simulated players of known skill set and answer this game),
    :meth:`Game.modules` (the DSPy setter and answerer for language-model players) and
    :meth:`Game.fake_player` (what the project's fake OpenAI-compatible server says when it plays),
    with :meth:`Game.practice_tasks` (tasks with known answers, for prompt optimisation).

A game is built from its config (:attr:`Game.config_schema`, a dataclass that is the one place
its defaults live): ``COPGame(COPConfig(...))``, or the config's keys as keyword arguments
(``COPGame(n_options=6)``, as Hydra builds it from ``game.*``).

The game's rules (its :class:`Game` subclass) import none of its players: the game's package
registers them with the class (:class:`GameParts`, :func:`skate.games.register`), so within a
game the imports run one way (package -> players -> rules), and the DSPy modules, named by a
dotted path, are imported only when a language-model player needs them.

The engine, estimators, ratings, augmentation, LLM client and report import no game.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import importlib
import json
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, cast

import numpy as np

from skate.errors import Problem, Settings, require
from skate.runlog.records import PASS_MARK, VOID, Rejection, Task

if TYPE_CHECKING:  # pragma: no cover
    from skate.llm.modules import GameModules
    from skate.players.simulated import Simulation
    from skate.sandbox import Sandbox

# What a player returns for one answer sample: a game-defined value (an option index, a string,
# ...), ``None`` when the reply could not be read (a wrong answer), or
# :data:`skate.runlog.records.VOID` when the model call failed (left out of p(correct)).
Reply = Any
Query = Any
# A player's answers: ``answer(queries, rng)`` gives one reply per query.
Answer = Callable[[Sequence[Query], np.random.Generator], Sequence[Reply]]
# One graded sample: True (correct), False (wrong), None (unreadable: wrong) or VOID (left out).
Verdict = Any


class AnswerFormat(enum.StrEnum):
    """What one answer of a game is, and so how it is graded and what can read or export it."""

    multiple_choice = "multiple_choice"  # an option among those shown (COP, SCP): its label can be read
    exact_match = "exact_match"  # a value checked against the task's answer (MathQuiz)
    executed = "executed"  # a program run in the sandbox, graded by what it does (PyJail)


@dataclass(frozen=True)
class GameSpec:
    """A game's static facts, the same for every run of it."""

    name: str
    answer_format: AnswerFormat
    kinds: tuple[str, ...] = ()  # families of task its simulated players write (topic_skill keys)
    score_bounds: tuple[float, float] = (0.0, 1.0)  # range of one graded sample
    roles: tuple[str, ...] = ("setter", "answerer")
    description: str = ""
    # the groups its tasks carry (keys of a task's data["groups"]), which the report breaks
    # accuracy down by (e.g. SCP's question type and document domain)
    groups: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "answer_format", AnswerFormat(self.answer_format))
        except ValueError:
            raise ValueError(
                f"game {self.name!r}: answer_format={self.answer_format!r} is not one of {', '.join(AnswerFormat)}"
            ) from None


@dataclass
class GameConfig(metaclass=Settings):
    """What every game's config has; each game extends it with its own keys."""

    name: str = "game"
    rounds: int = 50  # every player sets one task per round
    attempts: int = 3  # tries a setter gets per round to produce a valid, unique task


@dataclass(frozen=True)
class GameParts:
    """How a game's players are made, registered with its class by its package
    (:func:`skate.games.register`) so that the rules import none of them.

    ``modules`` is a dotted path, ``"package.module:function"``, imported on first use (it loads
    DSPy, which is heavy); the others are the callables themselves.
    """

    simulation: Callable[[Any, GameEnv], Simulation]  # (game, env) -> how simulated players play
    modules: str  # -> a (game, env) -> GameModules function: the DSPy setter and answerer
    fake_player: Callable[[], FakePlayer]  # () -> how the fake OpenAI-compatible server plays
    practice: Callable[[Any, int, np.random.Generator], list[Task]] | None = None  # (game, n, rng)


@dataclass(frozen=True)
class GameExport:
    """How ``skate export`` reads this game's tasks, registered with its class by its package
    (:func:`skate.games.register`, ``export=``); the default exports a run's tasks as they are.

    ``replay``: game settings set when a finished run's tasks are rendered again (SCP's tasks carry
    their questions: no benchmark to build, no age to check). ``provenance(task)``: what an
    exported task's provenance adds, read from the task alone. ``benchmark(path)``: the game
    settings that play a benchmark file of this game as the provided tasks of one round (None:
    the game writes no such file), and ``benchmark_source`` what writes one (for the message
    when a file is not one).
    """

    replay: Mapping[str, Any] = field(default_factory=dict)
    provenance: Callable[[Task], dict[str, Any]] | None = None
    benchmark: Callable[[str], Mapping[str, Any]] | None = None
    benchmark_source: str = ""


@dataclass(frozen=True)
class GameEnv:
    """What a game's players, modules and checks may know about the run they play in."""

    sandbox: Sandbox
    seed: int = 0
    pass_mark: float = PASS_MARK  # p(correct) that counts as solving a task (the rating's p_thresh)


@dataclass
class Checks:
    """What :meth:`Game.validate` may use to check one proposal.

    ``solve`` asks the setter to answer queries in a fresh context (it sees the queries only:
    no assignment, no history), for games whose setter must prove its task solvable.
    """

    round: int
    setter: str
    assignment: Mapping[str, Any]
    sandbox: Sandbox
    rng: np.random.Generator
    solve: Callable[[Sequence[Query], np.random.Generator], Sequence[Reply]]

    @property
    def task_id(self) -> str:
        return f"r{self.round:03d}-{self.setter}"

    def task(self, prompt: str, answer: str, **data: Any) -> Task:
        """The valid task this proposal becomes (``data``: what else the game keeps about it)."""
        return Task(task_id=self.task_id, round=self.round, setter=self.setter, prompt=prompt, answer=answer, data=data)


# A game's config schema: Game[C] reads a C (``COPGame(Game[COPConfig])``).
C = TypeVar("C", bound=GameConfig)


class Game(ABC, Generic[C]):
    """One task family. Subclasses set :attr:`spec` and :attr:`config_schema` (the ``C`` of
    ``Game[C]``), and register with :func:`skate.games.register` (with their :class:`GameParts`,
    or defining :meth:`simulation`, :meth:`modules` and :meth:`fake_player` themselves)."""

    spec: ClassVar[GameSpec]
    config_schema: ClassVar[type[GameConfig]] = GameConfig  # C itself (a ClassVar cannot name a type variable)
    config: C
    # True: the uniqueness test runs on the proposal's text before validate (for games whose
    # checks are costly; the task's novelty text must then be the proposal's text).
    novelty_first: ClassVar[bool] = False
    # False: no task of this game runs a program, so a run builds no sandbox for it (sandbox=auto
    # would start and probe two jails that never run anything).
    runs_programs: ClassVar[bool] = True
    # How its players are made (set by skate.games.register from the game's package).
    parts: ClassVar[GameParts | None] = None
    # Its own tools: command name -> ("module:function", one line of help), run as skate <command>
    # and imported only then (set by skate.games.register; skate.cli lists them beside its own).
    commands: ClassVar[Mapping[str, tuple[str, str]]] = {}
    # How skate export reads its tasks (set by skate.games.register).
    export: ClassVar[GameExport] = GameExport()

    def __init__(self, *args: Any, **values: Any) -> None:
        """Build the game from its config: an instance of :attr:`config_schema` (``values``
        replace some of its keys), or the schema's keys as arguments, every key left out taking
        the schema's default."""
        if len(args) == 1 and isinstance(args[0], GameConfig):
            config = dataclasses.replace(args[0], **values) if values else args[0]
        else:
            config = self.config_schema(*args, **values)
        self.config = cast(C, config)  # config_schema is C
        self.rounds = config.rounds
        self.attempts = config.attempts

    @property
    def name(self) -> str:
        return self.spec.name

    @classmethod
    def check_config(cls, cfg: C) -> list[Problem]:
        """Range checks on this game's config, as every section's schema checks itself
        (:mod:`skate.errors`): a :class:`~skate.errors.Problem` (key within ``game``, value, what
        is needed) per problem; a game adds its own to ``super().check_config(cfg)``'s."""
        return [
            *require(cfg.rounds >= 1, "rounds", cfg.rounds, "need at least 1 round"),
            *require(cfg.attempts >= 1, "attempts", cfg.attempts, "need at least 1 attempt per round"),
        ]

    @classmethod
    def skill_keys(cls, cfg: C) -> tuple[str, ...]:
        """The ``topic_skill`` keys simulated players may have in this game under config ``cfg``
        (its kinds by default; SCP adds the domains of its documents)."""
        return cls.spec.kinds

    @classmethod
    def players_set(cls, cfg: C) -> bool:
        """Whether players set this game's tasks under config ``cfg`` (False: the game builds
        them itself, see :meth:`provided_tasks`)."""
        return True

    def provided_tasks(self, round: int) -> Sequence[Task] | None:
        """The tasks the game itself sets in ``round`` (a built benchmark, which every player
        answers and no player sets), or None (the default): the players set this round's tasks.
        A provided task's ``setter`` is :data:`skate.runlog.records.BENCHMARK`."""
        return None

    def check_sandbox(self, sandbox: Sandbox) -> str | None:
        """Why this game must not run in ``sandbox`` (None: it may). Checked before round 1."""
        return None

    # What a user can try when a game's attempts are rejected for a reason (a FailReason value):
    # shown with the rejections of a game that set few valid tasks. A game adds its own settings
    # (its ``rejection_hints``, over these).
    # Two of their tries name settings the run may already have (the engine leaves those out).
    RESAMPLE, NO_HISTORY = "setter_repair: resample", "aug=no_info"
    REJECTION_HINTS: ClassVar[dict[str, str]] = {
        "malformed": "its replies could not be read (the rejections' detail in events.jsonl says how): "
        f"{RESAMPLE} for a model that sends a rejected reply back (players.llm), a larger "
        "max_tokens where replies were cut",
        "not_unique": f"its tasks repeated its own earlier ones: {NO_HISTORY} (it sees none of its history), or a "
        "larger embedder.threshold",
        "void": "its model calls failed: see the llm_void events in events.jsonl (a server, a key, a limit)",
        "infrastructure": "the sandbox failed, not the setter: skate sandbox checks it (docs/sandbox.md)",
    }
    rejection_hints: ClassVar[dict[str, str]] = {}

    def rejection_hint(self, reason: str) -> str | None:
        """What to try for attempts rejected for ``reason`` (None: nothing to suggest)."""
        return self.rejection_hints.get(reason) or self.REJECTION_HINTS.get(reason)

    # ------------------------------------------------------------------ setting
    def assignment(self, setter: str, round: int, rng: np.random.Generator) -> dict[str, Any]:
        """Private inputs for one setter's round (kept across its attempts); none by default."""
        return {}

    @abstractmethod
    def validate(self, proposal: Any, checks: Checks) -> Task | Rejection:
        """Check a setter's proposal; return the task or the reason it is not valid."""

    def proposal_text(self, proposal: Any) -> str:
        """A readable rendering of a proposal, for the log and failed-attempt feedback."""
        return str(proposal)

    def novelty_text(self, task: Task) -> str:
        """The text embedded for the uniqueness test."""
        return task.prompt

    def proposal_of(self, task: Task) -> tuple[dict[str, Any], Any] | None:
        """The assignment and proposal a setter would have sent to make ``task`` (the inverse of
        :meth:`validate`): a valid task shown to a setter as a demonstration of what to write
        (:mod:`skate.optimize`). None (the default) where the task does not tell."""
        return None

    # ------------------------------------------------------------------ answering
    def play(
        self,
        task: Task,
        answer: Answer,
        n: int,
        rng: np.random.Generator,
        sandbox: Sandbox | None = None,
        query_rng: np.random.Generator | None = None,
    ) -> list[Verdict]:
        """``n`` graded samples of one player on ``task``: one verdict per sample.

        The default asks one query per sample (all ``n`` at once, so a model client can send
        them together) and grades each reply. ``query_rng``, when given, draws the queries (the
        same for every player: estimator=greedy); ``rng`` the rest.
        """
        queries = [self.make_query(task, query_rng or rng) for _ in range(n)]
        replies = ask(answer, queries, rng)
        return [
            reply if reply is VOID or reply is None else bool(self.grade(task, query, reply))
            for query, reply in zip(queries, replies, strict=True)
        ]

    def sample_views(
        self, task: Task, turns: Sequence[Sequence[tuple[int, Query, Reply]]], verdicts: Sequence[Verdict]
    ) -> list[dict[str, Any]]:
        """One draw of :meth:`play` as a person reads it (the game viewer), one view per sample:
        ``answer`` (the reply as text: the option picked, the answer written), ``ok`` (its
        verdict: true, false, null for unreadable, "void") and ``call``/``index`` (the call to the
        player and the query's place in it, which join the sample to the model's reply).
        ``turns`` are the draw's calls to the player, each its ``(call, query, reply)``s. The
        default suits :meth:`play`'s one query per sample; a game whose samples are sessions of
        several calls (PyJail) gives its own."""
        asked = [t for call in turns for t in call]
        out = []
        for k, verdict in enumerate(verdicts):
            view: dict[str, Any] = {"ok": verdict_view(verdict)}
            if k < len(asked) and len(asked) == len(verdicts):
                call, query, reply = asked[k]
                view.update(answer=reply_text(query, reply), call=call, index=k - _first_of(turns, call))
            out.append(view)
        return out

    def make_query(self, task: Task, rng: np.random.Generator) -> Query:
        """What one answer sample shows a player (games that keep the default :meth:`play`)."""
        raise NotImplementedError(f"{type(self).__name__} must define make_query or play")

    def grade(self, task: Task, query: Query, reply: Reply) -> bool:
        """Whether a (readable, non-void) reply to ``query`` is correct."""
        raise NotImplementedError(f"{type(self).__name__} must define grade or play")

    def practice_tasks(self, n: int, rng: np.random.Generator) -> list[Task]:
        """Up to ``n`` valid tasks with known answers, made without any player, for optimising an
        answerer's prompts: every one answerable through this game's make_query/grade (its
        registered ``practice`` part). Games with no such source return [] (the default)."""
        practice = self.parts.practice if self.parts is not None else None
        return practice(self, n, rng) if practice is not None else []

    # ------------------------------------------------------------------ players
    def simulation(self, env: GameEnv) -> Simulation:
        """How simulated players set and answer this game (one per run, shared by them)."""
        return self._parts().simulation(self, env)

    def modules(self, env: GameEnv) -> GameModules:
        """The DSPy setter and answerer modules a language-model player uses."""
        module, _, function = self._parts().modules.partition(":")
        return getattr(importlib.import_module(module), function)(self, env)

    @classmethod
    def fake_player(cls) -> FakePlayer:
        """How the fake OpenAI-compatible server plays this game (one per server)."""
        return cls._parts().fake_player()

    @classmethod
    def _parts(cls) -> GameParts:
        if cls.parts is None:
            raise NotImplementedError(
                f"{cls.__name__} has no players: register it with its GameParts "
                "(skate.games.register) or define simulation, modules and fake_player"
            )
        return cls.parts


@dataclass(frozen=True)
class FakeRequest:
    """One chat request to the fake server, as a game's fake player sees it."""

    model: str  # the fake model's name
    skill: float  # its skill in [0, 1]
    inputs: Mapping[str, str]  # the request's input fields (``[[ ## name ## ]]`` sections)
    outputs: tuple[str, ...]  # the output fields it asks for, in order
    seed: int
    index: int  # which of the request's ``n`` choices


class FakePlayer(ABC):
    """How the project's fake OpenAI-compatible server plays one game.

    The server reads the input fields of a request's last user message and hands the request to
    the game whose :meth:`claims` says it is its own.
    """

    @abstractmethod
    def claims(self, inputs: Mapping[str, str]) -> bool:
        """Whether a request with these input fields is one of this game's."""

    @abstractmethod
    def reply(self, request: FakeRequest) -> str:
        """The reply text: deterministic in the request (draw from :func:`seeded_random`)."""


def verdict_view(verdict: Verdict) -> Any:
    """A sample's verdict as JSON holds it: true, false, null (unreadable) or "void"."""
    return "void" if verdict is VOID else (None if verdict is None else bool(verdict))


def reply_text(query: Query, reply: Reply) -> str | None:
    """A reply as a person reads it: a multiple-choice reply as the option it picked, others as
    their text; None for an unreadable or void one."""
    if reply is None or reply is VOID:
        return None
    options = getattr(query, "options", None)
    if isinstance(reply, int) and not isinstance(reply, bool) and isinstance(options, (tuple, list)):
        return str(options[reply]) if 0 <= reply < len(options) else f"option {reply} (no such option)"
    return str(reply)


def _first_of(turns: Sequence[Sequence[tuple[int, Any, Any]]], call: int) -> int:
    """The place of ``call``'s first query among every query of ``turns``."""
    k = 0
    for t in turns:
        if t and t[0][0] == call:
            return k
        k += len(t)
    return k


def ask(answer: Answer, queries: Sequence[Query], rng: np.random.Generator) -> list[Reply]:
    """A player's replies to ``queries``: exactly one per query, or an error."""
    replies = list(answer(queries, rng))
    if len(replies) != len(queries):
        raise RuntimeError(f"player returned {len(replies)} replies for {len(queries)} queries")
    return replies


def seeded_random(*parts: Any) -> random.Random:
    """A generator seeded from any JSON-able parts (the same parts, the same stream)."""
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def drop_try(hint: str, *settings: str) -> str:
    """``hint`` (what a reason means, then ``": "`` and the settings to try, ``", "`` between them)
    without the tries that start with one of ``settings`` (those already in effect); a hint left
    with no try is its meaning alone."""
    meaning, sep, tries = hint.partition(": ")
    if not sep or not settings:
        return hint
    kept = [t for t in tries.split(", ") if not t.startswith(settings)]
    return meaning + (": " + ", ".join(kept) if kept else "")

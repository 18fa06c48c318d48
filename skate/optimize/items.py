"""The training items and metrics of prompt optimisation (:mod:`skate.optimize.programs`), one
set per role, verifiable, from the game itself:

answerer
    Tasks with known answers: the game's practice tasks (:meth:`skate.games.base.Game.practice_tasks`:
    COP from CRUXEval, MathQuiz and SCP from their generators) and the valid tasks of finished
    runs of the same game (``optimizer.runs``). One query each from the game's ``make_query``;
    the metric is the game's ``grade`` of the reply. Labelled demonstrations carry the right
    reply (the option or number the game grades as right).
setter
    Setting situations of round 1 (the game's own assignment for each), each sampled on its own
    seed. The first training items carry labelled demonstrations (``optimizer.demos``: valid
    tasks of finished runs, the game's practice tasks, its simulated setter's; each with its own
    assignment, the proposal written as the setter's reply by :meth:`SetterModule.label`). The
    metric parses the proposal and runs the game's real ``validate`` (sandbox, distractors,
    self-solvability where the game needs it), then uniqueness against a fixed history (the
    practice tasks and the demonstrations) and the module's own demonstrations. A valid, unique
    task scores 0.5, plus 0.5 × (the setter answers it right) × (1 − the share of the other
    language-model players that do), one sample each: tasks it solves and others do not score
    highest. The valid and separating shares are kept beside it (:class:`SetterMetric`).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dspy
import numpy as np

from skate.embedders import NoveltyIndex
from skate.games.base import Checks, Game, GameEnv
from skate.llm.modules import ITEM_SEED, AnswererModule, SetterModule, _Module
from skate.optimize.config import DEMO_SOURCES, OptimizeError
from skate.players.simulated import SimulatedPlayer
from skate.runlog import events as ev
from skate.runlog.records import Rejection, SetterContext, StopRun, Task

log = logging.getLogger(__name__)


def render_prediction(pred: Any) -> str:
    """A prediction as the reply text a module's ``parse`` reads (``[[ ## field ## ]]`` sections)."""
    parts = []
    for key, value in dict(pred.items()).items():
        text = json.dumps(value) if isinstance(value, (list, dict)) else str(value)
        parts.append(f"[[ ## {key} ## ]]\n{text}")
    return "\n\n".join([*parts, "[[ ## completed ## ]]"])


def reference_reply(game: Game, task: Task, query: Any) -> Any:
    """The reply the game grades as right for ``query``: an option's index, or the answer itself."""
    options = getattr(query, "options", None)
    if options is not None:
        for i in range(len(options)):
            if game.grade(task, query, i):
                return i
        return None
    return task.answer if game.grade(task, query, task.answer) else None


def tasks_from_runs(runs: Sequence[str], game: Game) -> list[Task]:
    """The valid tasks (with their checked answers) of finished runs of the same game."""
    out: list[Task] = []
    for run in runs:
        log_ = ev.read_run(Path(run).expanduser(), "a finished run of the same game", keep_updates=0)
        if log_.start.game != game.name:
            raise OptimizeError(f"optimizer.runs: {run} is a game of {log_.start.game}, not {game.name}")
        for t in log_.of(ev.TaskSet):
            out.append(t.task())
    return out


class Items:
    """Training and held-out examples for one role, with what the metric needs per example."""

    def __init__(self) -> None:
        self.train: list[dspy.Example] = []
        self.val: list[dspy.Example] = []
        self.by_id: dict[str, Any] = {}
        self.labelled = 0  # training items that carry a labelled reply (a demonstration)

    def add(
        self, fields: dict[str, Any], labels: dict[str, Any], payload: Any, held_out: bool, seed: int | None = None
    ) -> None:
        """One example: its input ``fields``, its ``labels`` (a reply the metric accepts, or none),
        what the metric needs (``payload``); ``seed`` gives its calls samples of their own
        (:data:`~skate.llm.modules.ITEM_SEED`), for items whose inputs are the same."""
        key = str(len(self.by_id))
        self.by_id[key] = payload
        fields = {**fields, ITEM_SEED: seed} if seed is not None else fields
        ex = dspy.Example(**fields, **labels, skate_id=key).with_inputs(*fields)
        (self.val if held_out else self.train).append(ex)
        self.labelled += bool(labels) and not held_out

    def content(self) -> list[dict[str, Any]]:
        """What the training items say (the store key depends on it)."""
        return [{k: v for k, v in ex.items() if k != "skate_id"} for ex in self.train]


def answerer_items(
    game: Game, module: AnswererModule, n_train: int, n_val: int, runs: Sequence[str], rng: np.random.Generator
) -> Items:
    if type(game).make_query is Game.make_query:  # an answer is a session of exchanges (PyJail's tries)
        raise OptimizeError(
            f"game={game.name}: an answer is a session of exchanges, not one query with a known "
            "reply, so its answerer has no training items; optimise its setter only "
            "(optimizer.roles=[setter])"
        )
    tasks = list(game.practice_tasks(n_train + n_val, rng))
    tasks += tasks_from_runs(runs, game)
    items = Items()
    order = rng.permutation(len(tasks))
    for pos in order:
        task = tasks[int(pos)]
        query = game.make_query(task, rng)
        right = reference_reply(game, task, query)
        if right is None:
            continue
        held_out = len(items.val) < n_val
        if not held_out and len(items.train) >= n_train:
            break
        items.add(module.inputs(query), module.label(right), (task, query), held_out)
    return items


def answerer_metric(game: Game, module: AnswererModule, items: Items) -> Callable:
    def metric(example: Any, pred: Any, trace: Any = None) -> bool:
        task, query = items.by_id[example.skate_id]
        reply = module.parse(render_prediction(pred))
        return bool(reply is not None and game.grade(task, query, reply))

    return metric


# A setter's labelled demonstrations (optimizer.demos, DEMO_SOURCES), in order of preference: valid
# tasks of finished runs (optimizer.runs: any model's, a teacher's included), the game's practice
# tasks (COP: CRUXEval's programs; MathQuiz: generated questions with their targets), and tasks the
# game's simulated setter writes (every game), each checked by the game's own validate.
TEACHER = "teacher"  # the simulated setter whose tasks become demonstrations


@dataclass
class Demo:
    """A valid task as a setter would have sent it: the round's assignment and the proposal."""

    assignment: dict[str, Any]
    proposal: Any
    source: str  # runs | practice | simulated


def simulated_demos(game: Game, env: GameEnv, n: int, rng: np.random.Generator) -> list[Demo]:
    """Up to ``n`` tasks the game's simulated setter writes (careless never, at a spread of
    skills, aiming a little under its own) that pass the game's ``validate``, itself solving
    where the game asks the setter to."""
    sim = game.simulation(env)
    out: list[Demo] = []
    for _ in range(3 * n):
        if len(out) >= n:
            break
        teacher = SimulatedPlayer(
            TEACHER, skill=float(rng.uniform(0.55, 0.9)), sim=sim, seed=env.seed, pitch=-0.15, sloppiness=0.0, noise=0.0
        )
        assignment = game.assignment(TEACHER, 1, rng)
        ctx = SetterContext(
            player=TEACHER,
            players=(TEACHER,),
            round=1,
            rounds=game.rounds,
            attempt=1,
            attempts_left=game.attempts,
            failed=(),
            history=(),
            strategy="no_info",
            assignment=assignment,
        )
        proposal = teacher.set_task(ctx, rng)
        checks = Checks(
            round=1, setter=TEACHER, assignment=assignment, sandbox=env.sandbox, rng=rng, solve=teacher.answer
        )
        if isinstance(game.validate(proposal, checks), Task):
            out.append(Demo(dict(assignment), proposal, "simulated"))
    return out


DRAWS_PER_DEMO = 4  # candidates drawn per demonstration wanted, when only some difficulties will do


def setter_demos(
    game: Game,
    env: GameEnv,
    n: int,
    rng: np.random.Generator,
    runs: Sequence[str] = (),
    sources: Sequence[str] = DEMO_SOURCES,
    difficulty: Sequence[float] = (0.0, 1.0),
) -> list[Demo]:
    """Up to ``n`` labelled demonstrations for a setter, from ``sources`` in that order, each of a
    ``difficulty`` in that range on the game's own scale (its simulation's measure of a task's
    text, in [0, 1]; the whole range by default)."""
    lo, hi = (float(x) for x in difficulty)
    picky = (lo, hi) != (0.0, 1.0)
    sim = game.simulation(env) if picky else None
    out: list[Demo] = []

    def fits(demo: Demo) -> bool:
        return sim is None or lo <= float(sim.difficulty(game.proposal_text(demo.proposal))) <= hi

    def take(tasks: Sequence[Task], source: str) -> None:
        for t in tasks:
            made = game.proposal_of(t) if len(out) < n else None
            if made is not None and fits(demo := Demo(dict(made[0]), made[1], source)):
                out.append(demo)

    draws = DRAWS_PER_DEMO if picky else 1
    for source in sources:
        if len(out) >= n:
            break
        if source == "runs" and runs:
            tasks = tasks_from_runs(runs, game)
            take([tasks[int(i)] for i in rng.permutation(len(tasks))], "runs")
        elif source == "practice":
            take(game.practice_tasks(draws * (n - len(out)), rng), "practice")
        elif source == "simulated":
            out += [d for d in simulated_demos(game, env, draws * (n - len(out)), rng) if fits(d)]
    return out[:n]


def setter_items(
    game: Game,
    module: SetterModule,
    player: str,
    names: tuple[str, ...],
    strategy: str,
    n_train: int,
    n_val: int,
    rng: np.random.Generator,
    demos: Sequence[Demo] = (),
) -> Items:
    """Round-1 situations: ``n_val`` held out, then ``n_train`` for training, the first of which
    carry ``demos`` (each with its demonstration's assignment and, as its label, the proposal in
    the setter's reply format). Every item samples on its own seed."""
    items = Items()
    for k in range(n_train + n_val):
        assignment = game.assignment(player, 1, np.random.default_rng([int(rng.integers(2**31)), k]))
        held_out = k < n_val
        demo = demos[k - n_val] if not held_out and k - n_val < len(demos) else None
        ctx = SetterContext(
            player=player,
            players=names,
            round=1,
            rounds=game.rounds,
            attempt=1,
            attempts_left=game.attempts,
            failed=(),
            history=(),
            strategy=strategy,
            assignment=demo.assignment if demo else assignment,
        )
        items.add(module.inputs(ctx), module.label(demo.proposal) if demo else {}, ctx, held_out, seed=k)
    return items


@dataclass
class SetterOutcome:
    """What one setter item came to: a valid, unique task, and whether it told the players apart
    (one sample each of the setter and the other model players: some right, some wrong)."""

    valid: bool = False
    separates: bool = False
    text: str = ""  # the task, as the game shows it (where valid) or the reason it was rejected
    reason: str = ""  # why it was rejected: the game's FailReason, not_unique, or unread


class SetterMetric:
    """A setter's metric: a valid, unique task scores 0.5, plus 0.5 × (the setter answers it
    right) × (1 − the share of the other language-model players that do). :attr:`outcomes`
    keeps each item's :class:`SetterOutcome` (the last scored), for the valid and separating
    shares reported beside the metric."""

    def __init__(
        self,
        game: Game,
        module: SetterModule,
        player: Any,
        others: Sequence[Any],
        items: Items,
        env: GameEnv,
        novelty: Any,
        seed: int,
    ) -> None:
        self.game, self.module, self.player, self.others = game, module, player, list(others)
        self.items, self.env, self.novelty, self.seed = items, env, novelty, seed
        self.lock = threading.Lock()
        self.outcomes: dict[str, SetterOutcome] = {}

    def _demos(self) -> NoveltyIndex:
        """The uniqueness index of the module's current demonstrations (rebuilt when they change)."""
        demos = self.module.predict.demos
        key = (id(demos), len(demos))
        if getattr(self, "_demo_key", None) != key:
            index = NoveltyIndex(self.novelty.embedder)
            index.seed(self.player.name, [self.game.proposal_text(p) for p in self.module.demonstrated()])
            self._demo_index, self._demo_key = index, key
        return self._demo_index

    def one(self, p: Any, task: Task, rng: np.random.Generator) -> float:
        (verdict,) = self.game.play(task, p.answer, 1, rng, self.env.sandbox)
        return 1.0 if verdict is True else 0.0

    def __call__(self, example: Any, pred: Any, trace: Any = None) -> float:
        game, player = self.game, self.player
        ctx: SetterContext = self.items.by_id[example.skate_id]
        rng = np.random.default_rng([self.seed, int(example.skate_id)])
        proposal = self.module.parse(render_prediction(pred))
        checks = Checks(
            round=ctx.round,
            setter=player.name,
            assignment=ctx.assignment,
            sandbox=self.env.sandbox,
            rng=rng,
            solve=player.answer,
        )
        result = game.validate(proposal, checks)
        outcome = self.outcomes[example.skate_id] = SetterOutcome()
        if isinstance(result, Rejection) or not isinstance(result, Task):
            if isinstance(result, Rejection):
                outcome.reason, outcome.text = result.reason.value, f"rejected ({result.reason.value}): {result.detail}"
            return 0.0
        with self.lock:
            unique, _, _ = self.novelty.check(player.name, game.novelty_text(result))
            if unique:  # nor a copy of one of the module's own demonstrations (the game rejects those too)
                unique, _, _ = self._demos().check(player.name, game.novelty_text(result))
        if not unique:
            outcome.reason = "not_unique"
            outcome.text = "rejected (not unique): too like a practice task or a demonstration"
            return 0.0
        outcome.text = game.novelty_text(result)
        own = self.one(player, result, rng)
        rivals = [self.one(o, result, rng) for o in self.others]
        outcome.valid = True
        outcome.separates = len({own, *rivals}) > 1
        return 0.5 + 0.5 * own * (1.0 - (sum(rivals) / len(rivals) if rivals else 0.0))

    def failed(self, example: Any, exc: BaseException) -> None:
        """An item whose reply never reached the metric (unreadable, or a failed call)."""
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        self.outcomes[example.skate_id] = SetterOutcome(text=f"no task read: {why[:300]}", reason="unread")

    def shares(self, examples: Sequence[dspy.Example]) -> tuple[float | None, float | None]:
        """Of ``examples`` (last scored): the share that gave a valid task, and of those the
        share that separated the players (None where there are none)."""
        got = [self.outcomes.get(ex.skate_id, SetterOutcome()) for ex in examples]
        if not got:
            return None, None
        valid = [o for o in got if o.valid]
        return (
            round(len(valid) / len(got), 4),
            round(sum(o.separates for o in valid) / len(valid), 4) if valid else None,
        )

    def reasons(self, examples: Sequence[dspy.Example]) -> dict[str, int]:
        """How many of ``examples`` (last scored) were rejected for each reason."""
        out: dict[str, int] = {}
        for ex in examples:
            o = self.outcomes.get(ex.skate_id)
            if o is not None and o.reason:
                out[o.reason] = out.get(o.reason, 0) + 1
        return dict(sorted(out.items()))

    def examples(self, examples: Sequence[dspy.Example], n: int = 3, chars: int = 600) -> list[str]:
        """Up to ``n`` of the valid tasks ``examples`` gave (else their rejections), cut to ``chars``."""
        got = [self.outcomes.get(ex.skate_id, SetterOutcome()) for ex in examples]
        pick = [o for o in got if o.valid] or [o for o in got if o.text]
        return [o.text[:chars] for o in pick[:n]]


def setter_metric(
    game: Game,
    module: SetterModule,
    player: Any,
    others: Sequence[Any],
    items: Items,
    env: GameEnv,
    novelty: Any,
    seed: int,
) -> SetterMetric:
    return SetterMetric(game, module, player, others, items, env, novelty, seed)


def evaluate(program: _Module, examples: Sequence[dspy.Example], metric: Callable, threads: int) -> float | None:
    """The mean metric of ``program`` over ``examples`` (a failed call scores 0)."""
    if not examples:
        return None
    from concurrent.futures import ThreadPoolExecutor

    def score(ex: dspy.Example) -> float:
        try:
            return float(metric(ex, program(**ex.inputs())))
        except StopRun:  # a spent budget, a model that did not answer: not a score of 0
            raise
        except Exception as exc:  # noqa: BLE001 - a void call or an unreadable reply scores 0
            log.debug("evaluation of %s failed: %s", ex.get("skate_id"), exc)
            failed = getattr(metric, "failed", None)
            if failed is not None:
                failed(ex, exc)
            return 0.0

    lm, adapter = dspy.settings.lm, dspy.settings.adapter  # the caller's context, for the workers

    def run(ex: dspy.Example) -> float:
        with dspy.context(lm=lm, adapter=adapter):
            return score(ex)

    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        return float(np.mean(list(pool.map(run, examples))))


__all__ = ["Demo", "SetterMetric", "render_prediction", "setter_demos"]

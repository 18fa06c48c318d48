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
from typing import TYPE_CHECKING, Any, Optional

import numpy as np
from omegaconf import DictConfig, OmegaConf

from skate.errors import ConfigError, Problem, require
from skate.games.base import AnswerFormat
from skate.ratings.base import OrderPair, rating_name
from skate.ratings.config import OutcomeRule, one_of
from skate.ratings.outcomes import PairRule
from skate.runlog.records import PASS_MARK, VOID, Decoding, Estimate, Task, skipped_estimate
from skate.registry import Registry, spoken

if TYPE_CHECKING:  # pragma: no cover
    from skate.games.base import Game

# sample(n, rng) -> (correct, unreadable, void) among n new samples
SampleFn = Callable[[int, np.random.Generator], tuple[int, int, int]]


class Sampler:
    """Draws graded samples of one player on one task through the game's :meth:`~skate.games.
    base.Game.play`: queries from the game, replies from the player (``answer(queries, rng)``),
    verdicts from the game. ``sandbox`` is for games whose samples execute code."""

    def __init__(self, game: Game, task: Task,
                 answer: Callable[[list[Any], np.random.Generator], Sequence[Any]],
                 sandbox: Any = None, fixed_queries: bool = False,
                 read_choices: Callable[..., list[Any] | None] | None = None) -> None:
        self.game, self.task, self.answer, self.sandbox = game, task, answer, sandbox
        self.fixed_queries = fixed_queries
        self.read_choices = read_choices  # the player's Player.read_choices, where it may be asked

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
        ps = [sum(prob for i, prob in enumerate(choice.probs) if self.game.grade(self.task, query, i))
              for query, choice in zip(queries, got, strict=True)]
        return Read(p=min(1.0, max(0.0, float(np.mean(ps)))))

    def __call__(self, n: int, rng: np.random.Generator) -> tuple[int, int, int]:
        if self.fixed_queries:  # every player sees the same query (options in one order), drawn from the task alone
            verdicts = self.game.play(self.task, self.answer, n, rng, self.sandbox, query_rng=task_rng(self.task))
        else:
            verdicts = self.game.play(self.task, self.answer, n, rng, self.sandbox)
        if len(verdicts) != n:
            raise RuntimeError(f"the game graded {len(verdicts)} samples for {n} asked")
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


class Estimator(ABC):
    """An estimator's capabilities are these class attributes (the config checks read them from
    the :data:`estimator` registry, never from a ``_target_`` string)."""

    joint = False  # True: estimates all players of a task together (estimate_task)
    uses_order = False  # True: reads the ranking so far (TaskContext.order): the rating must say how sure it is
    picks_answerers = False  # True: chooses who answers each task (not for schedule.mode=matches)
    greedy_decoding = False  # True: one greedy answer per query (sets every model player's temperature)
    decoding: Decoding | None = None  # greedy: how every model player decodes (given to the players when built)
    decides_outcomes = False  # True: settles the rating rule's pairwise outcomes (needs a rating with a rule)
    reads = False  # True: reads p(correct) from the players' probabilities (multiple-choice games only)

    def estimate_task(self, samples: Sequence[SampleFn], rngs: Sequence[np.random.Generator],
                      pmap: Callable = map, context: TaskContext | None = None) -> list[Estimate]:
        """Every player's estimate on one task (independently, unless the estimator is joint)."""
        return list(pmap(lambda i: self.estimate(samples[i], rngs[i]), range(len(samples))))

    @abstractmethod
    def estimate(self, sample: SampleFn, rng: np.random.Generator) -> Estimate:
        """Estimate one player's p(correct) from its samples."""


def binomial_std(p: float, n: int) -> float:
    return math.sqrt(p * (1.0 - p) / n) if n else float("inf")


class Algorithm1(Estimator):
    """The SKATE paper's adaptive estimator.

    Draw batches of ``n_step`` samples; after each batch stop once the standard error
    sqrt(p(1-p)/N) is below ``sigma_star``, or when ``max_samples`` is reached.
    """

    def __init__(self, sigma_star: float = 0.05, n_step: int = 10, max_samples: int = 200) -> None:
        self.sigma_star = sigma_star
        self.n_step = n_step
        self.max_samples = max_samples

    def estimate(self, sample: SampleFn, rng: np.random.Generator) -> Estimate:
        # n counts samples that got an answer; void samples (failed model calls) are drawn again
        # but still count against max_samples, so a failing model cannot make this loop forever.
        n = correct = unparsable = void = 0
        while True:
            step = min(self.n_step, self.max_samples - n - void)
            c, u, v = sample(step, rng)
            n, correct, unparsable, void = n + step - v, correct + c, unparsable + u, void + v
            p = correct / n if n else float("nan")
            std = binomial_std(p, n) if n else float("inf")
            if n and std < self.sigma_star:
                return Estimate(p, n, correct, std, unparsable, capped=False, void=void)
            if n + void >= self.max_samples:
                return Estimate(p, n, correct, std, unparsable, capped=bool(n), void=void)
            if v == step:  # a whole batch failed: the model is down now, more draws only cost
                return Estimate(p, n, correct, std, unparsable, capped=False, void=void)


class FixedN(Estimator):
    """Exactly ``n`` samples per (task, player)."""

    def __init__(self, n: int = 20) -> None:
        self.n = n

    def estimate(self, sample: SampleFn, rng: np.random.Generator) -> Estimate:
        correct, unparsable, void = sample(self.n, rng)
        n = self.n - void
        p = correct / n if n else float("nan")
        return Estimate(p, n, correct, binomial_std(p, n) if n else float("inf"), unparsable, void=void)


class Greedy(Estimator):
    """One answer per (task, player), as ArxivRoll scores its benchmarks: every player sees the
    same query (for multiple choice, the options in one order drawn from the task alone, not
    reshuffled per sample), language models answer at temperature 0 (``llm_temperature``: its
    :attr:`decoding`, given to every model player when built) within ``max_tokens`` when given, and p(correct) is 1 or
    0. A void answer (the call failed) is void, never wrong. Averaged over tasks it is accuracy."""

    fixed_queries = True
    greedy_decoding = True

    def __init__(self, llm_temperature: float = 0.0, max_tokens: int | None = None) -> None:
        self.llm_temperature, self.max_tokens = llm_temperature, max_tokens
        self.decoding = Decoding(llm_temperature, max_tokens)

    def estimate(self, sample: SampleFn, rng: np.random.Generator) -> Estimate:
        correct, unparsable, void = sample(1, rng)
        n = 1 - void
        p = float(correct) if n else float("nan")
        return Estimate(p, n, correct, 0.0 if n else float("inf"), unparsable, void=void)


class LogProbs(Estimator):
    """p(correct) read from the model's own probabilities: one call per (player, task), no
    sampling (for multiple-choice answers: COP, SCP).

    Each player is asked once for the label of the option it picks, with the provider's
    log-probabilities, on the task's query with the options in one order drawn from the task
    alone (the same for every player, as ``greedy`` asks); p(correct) is the probability of the
    right option at the player's answer temperature (:mod:`skate.llm.choices`). Where that cannot
    be done (a provider that gives no log-probabilities or too few alternatives, a reply that
    does not start with a label, a player that states no probabilities such as a simulated one,
    an answerer that reasons first) the player's p(correct) is sampled instead: ``fallback``
    samples of the game's own answer, on the same query (so a provider's prompt cache serves them
    all, and a sampled estimate and a read see the same options in the same order).

    For ratings that take the graded samples behind each p(correct) (``irt``), a read counts as
    ``weight`` samples with p·weight of them right (the same weight as ``fallback`` samples, so a
    read and a sampled estimate weigh alike). With ``orders`` k > 1 each read is the mean of k,
    each of the options in another order drawn from the task alone, so a model's preference
    for one label (a position bias) weighs on the right option in several places."""

    reads = True
    fixed_queries = True  # the fallback's samples show the task's one query, as the read does

    def __init__(self, fallback: int = 4, weight: int = 4, min_mass: float = 0.5, orders: int = 1) -> None:
        if fallback < 1 or weight < 1:
            raise ValueError(f"estimator: need fallback >= 1 and weight >= 1 (got fallback={fallback}, weight={weight})")
        if not 0.0 < min_mass <= 1.0:
            raise ValueError(f"estimator.min_mass={min_mass}: must lie in (0, 1]")
        if not 1 <= orders <= 24:
            raise ValueError(f"estimator.orders={orders}: give the reads per (player, task), from 1 to 24")
        self.fallback, self.weight, self.min_mass = int(fallback), int(weight), float(min_mass)
        self.orders = int(orders)

    def estimate(self, sample: SampleFn, rng: np.random.Generator) -> Estimate:
        read = getattr(sample, "read", None)
        got = read(rng, self.min_mass, self.orders) if read is not None else Read(why="no reader")
        if got.p is not None:
            p = got.p
            return Estimate(p, self.weight, p * self.weight, binomial_std(p, self.weight), read=True)
        if got.void:
            return Estimate(float("nan"), 0, 0, float("inf"), void=1, read=True)
        correct, unparsable, void = sample(self.fallback, rng)
        n = self.fallback - void
        p = correct / n if n else float("nan")
        return Estimate(p, n, correct, binomial_std(p, n) if n else float("inf"), unparsable, void=void, read=False)


def wilson(correct: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion."""
    if n == 0:
        return 0.0, 1.0
    p = correct / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


class Decided(Estimator):
    """Sample each player until the outcomes it takes part in are decided (skate's estimator).

    The rating only uses p(correct) through pairwise outcomes: under the relative rule whether
    |p_a - p_b| is under the draw margin and who is ahead, under the absolute rule whether p
    clears ``p_thresh``. So all players of a task are estimated together, in batches of
    ``n_step``. After each batch every player gets a Wilson interval at ``confidence``; a player
    stops once every outcome it is part of is settled by the intervals (a sure win, loss or
    draw against each other player; or, absolute rule, its interval clear of the threshold), or
    once its own standard error is below ``sigma_star`` (Algorithm 1's rule, so it never needs
    more), or at ``max_samples``. Samples go where they can still change an outcome.
    """

    joint = True
    decides_outcomes = True

    def __init__(self, n_step: int = 10, max_samples: int = 200, sigma_star: float = 0.05,
                 confidence: float = 0.95, outcome: str = "relative", draw_margin: float = 0.05,
                 p_thresh: float = PASS_MARK) -> None:
        from statistics import NormalDist

        self.n_step, self.max_samples, self.sigma_star = n_step, max_samples, sigma_star
        self.z = NormalDist().inv_cdf(0.5 + confidence / 2)
        self.rule = PairRule(outcome, draw_margin, p_thresh)  # the rating's own rule

    def estimate(self, sample: SampleFn, rng: np.random.Generator) -> Estimate:
        return self.estimate_task([sample], [rng])[0]

    def estimate_task(self, samples: Sequence[SampleFn], rngs: Sequence[np.random.Generator],
                      pmap: Callable = map, context: TaskContext | None = None) -> list[Estimate]:
        k = len(samples)
        n, correct, unparsable, void = [0] * k, [0] * k, [0] * k, [0] * k
        active = set(range(k))
        while active:
            order = sorted(active)
            steps = {i: min(self.n_step, self.max_samples - n[i] - void[i]) for i in order}
            results = list(pmap(lambda i, steps=steps: samples[i](steps[i], rngs[i]), order))
            for i, (c, u, v) in zip(order, results, strict=True):
                n[i] += steps[i] - v
                correct[i], unparsable[i], void[i] = correct[i] + c, unparsable[i] + u, void[i] + v
            iv = [wilson(correct[i], n[i], self.z) for i in range(k)]
            for i, (_, _, v) in zip(order, results, strict=True):
                p = correct[i] / n[i] if n[i] else float("nan")
                whole_batch_void = v == steps[i]
                if (n[i] + void[i] >= self.max_samples or whole_batch_void
                        or (n[i] and binomial_std(p, n[i]) < self.sigma_star)
                        or (n[i] and self.rule.settled(iv[i], [iv[j] for j in range(k) if j != i]))):
                    active.discard(i)
        out = []
        for i in range(k):
            p = correct[i] / n[i] if n[i] else float("nan")
            out.append(Estimate(p, n[i], correct[i], binomial_std(p, n[i]) if n[i] else float("inf"),
                                unparsable[i], capped=n[i] + void[i] >= self.max_samples, void=void[i]))
        return out


class Adaptive(Estimator):
    """Sample where an answer can still change the ranking (skate's cheapest estimator).

    It reads the ranking so far (:class:`TaskContext`, from the rating backend): each adjacent
    pair of players with the probability that their order is right. A pair below
    ``confidence`` is *uncertain*. On each task:

    1. Only the players of an uncertain pair answer (every player while there is no ranking yet,
       and any player the ranking does not place; the setter too with ``setter_answers``). A
       player whose place is already sure on both sides is not asked (its estimate is
       ``skipped``: no sample, no p(correct), no call).
    2. Each of them answers ``first`` samples.
    3. A task that does not discriminate stops there: for each uncertain pair whose answers so
       far are unanimous (both players right every time, or both wrong every time), the task
       says nothing about their order. Where the two disagree, both are topped up, ``step`` at a
       time, to ``max_samples``.

    It assumes the backend's confidences are honest (a backend whose intervals are too narrow
    stops asking players too soon), that tasks are what separates players (several tasks with a
    few samples each tell more than one task with many, since a player's luck on one task is
    shared by all its samples), and that answers to a task depend on the player, not on who else
    is asked. Without a ranking (every player uncertain) it is a small fixed-N estimator that
    skips non-discriminating tasks.
    """

    joint = True
    uses_order = True
    picks_answerers = True

    def __init__(self, first: int = 2, step: int = 2, max_samples: int = 6, confidence: float = 0.95,
                 setter_answers: bool = False, probe: int = 0, per_task: int = 0) -> None:
        if first < 1 or step < 1 or max_samples < first:
            raise ValueError(f"estimator: need first >= 1, step >= 1 and max_samples >= first "
                             f"(got first={first}, step={step}, max_samples={max_samples})")
        if not 0.5 < confidence < 1:
            raise ValueError(f"estimator.confidence={confidence}: must lie in (0.5, 1)")
        self.first, self.step, self.max_samples = int(first), int(step), int(max_samples)
        self.confidence, self.setter_answers = float(confidence), bool(setter_answers)
        self.probe = int(probe)
        self.per_task = int(per_task)

    def estimate(self, sample: SampleFn, rng: np.random.Generator) -> Estimate:
        return self.estimate_task([sample], [rng])[0]

    def plan(self, context: TaskContext | None, k: int) -> tuple[set[int], list[tuple[int, int]]]:
        """Who answers (indices into the task's players) and which pairs may be topped up."""
        if context is None or not context.order:
            everyone = set(range(k))
            return everyone, [(i, j) for i in range(k) for j in range(i + 1, k)]
        idx = {name: i for i, name in enumerate(context.players)}
        ranked = {n for p in context.order for n in (p.above, p.below)}
        pairs = [(idx[p.above], idx[p.below]) for p in context.order
                 if p.confidence < self.confidence and p.above in idx and p.below in idx]
        who = {i for pair in pairs for i in pair}
        who |= {i for name, i in idx.items() if name not in ranked}  # no place in the ranking yet
        if self.setter_answers and context.setter in idx:
            who.add(idx[context.setter])
        return who, pairs

    def estimate_task(self, samples: Sequence[SampleFn], rngs: Sequence[np.random.Generator],
                      pmap: Callable = map, context: TaskContext | None = None) -> list[Estimate]:
        k = len(samples)
        who, pairs = self.plan(context, k)
        n, correct, unparsable, void = [0] * k, [0] * k, [0] * k, [0] * k
        dead: set[int] = set()  # every sample of a batch failed: the model is down now

        def draw(steps: dict[int, int]) -> None:
            order = sorted(steps)
            results = list(pmap(lambda i: samples[i](steps[i], rngs[i]), order))
            for i, (c, u, v) in zip(order, results, strict=True):
                n[i] += steps[i] - v
                correct[i], unparsable[i], void[i] = correct[i] + c, unparsable[i] + u, void[i] + v
                if v == steps[i]:
                    dead.add(i)

        asked = sorted(who)
        # A task costs its setter's attempts whoever answers it: with few players asked, each
        # gives more samples (per_task shared among them, at least `first` each).
        first = max(self.first, self.per_task // len(asked)) if self.per_task and asked else self.first
        if 0 < self.probe < len(asked):
            # A few players first, spread over the ranking; if they all agree (all right, or all
            # wrong, every sample) the task does not discriminate at their level: stop there.
            rank = {name: r for r, name in enumerate(_ranked(context))}
            asked.sort(key=lambda i: (rank.get(context.players[i], -1) if context else i, i))
            probe = [asked[round(x)] for x in np.linspace(0, len(asked) - 1, self.probe)]
            draw({i: first for i in probe})
            if all(correct[i] == n[i] for i in probe) or all(correct[i] == 0 for i in probe):
                who = set(probe)
            else:
                draw({i: first for i in asked if i not in probe})
        else:
            draw({i: first for i in asked})
        while True:
            more: dict[int, int] = {}
            for i, j in pairs:
                if i in dead or j in dead or not (n[i] and n[j]):
                    continue
                unanimous = {correct[i], correct[j]} == {0} or (correct[i] == n[i] and correct[j] == n[j])
                if unanimous:
                    continue
                for x in (i, j):
                    room = max(self.max_samples, first) - n[x] - void[x]
                    if room > 0:
                        more[x] = min(self.step, room)
            if not more:
                break
            draw(more)
        out = []
        for i in range(k):
            if i not in who:
                out.append(skipped_estimate())
                continue
            p = correct[i] / n[i] if n[i] else float("nan")
            out.append(Estimate(p, n[i], correct[i], binomial_std(p, n[i]) if n[i] else float("inf"),
                                unparsable[i], capped=n[i] + void[i] >= max(self.max_samples, first), void=void[i]))
        return out


def _ranked(context: TaskContext | None) -> list[str]:
    """The players of the ranking so far, best first (from its adjacent pairs)."""
    if context is None or not context.order:
        return []
    out = [context.order[0].above]
    out += [p.below for p in context.order]
    return out


# --------------------------------------------------------------------------- estimator
@dataclass
class EstimatorConfig:
    """What every estimator's settings are (the ``estimator`` section's type); each estimator's
    schema extends it (see :data:`estimator`, the group's registry), and checks its own fields in
    ``check`` (adding to ``super().check()``)."""

    def check(self) -> list[Problem]:
        """What types cannot say is wrong with these settings (keys within ``estimator``)."""
        return []


def _batches(e: Algorithm1Config | DecidedConfig) -> list[Problem]:
    """Algorithm 1's stopping rule: batches of n_step until the standard error is below sigma_star."""
    return [*require(0.0 < e.sigma_star < 0.5, "sigma_star", e.sigma_star, "must lie in (0, 0.5)"),
            *require(e.n_step >= 1, "n_step", e.n_step, "must be >= 1"),
            *require(e.max_samples >= e.n_step, "max_samples", e.max_samples, "must be >= estimator.n_step")]


@dataclass
class Algorithm1Config(EstimatorConfig):
    """The paper's adaptive estimator: sample until sqrt(p(1-p)/N) < sigma_star."""

    _target_: str = "skate.estimators.Algorithm1"
    sigma_star: float = 0.05
    n_step: int = 10  # samples per batch; the stopping rule is checked after each batch
    max_samples: int = 200  # hard cap per (task, player)

    def check(self) -> list[Problem]:
        return [*super().check(), *_batches(self)]


@dataclass
class DecidedConfig(EstimatorConfig):
    _target_: str = "skate.estimators.Decided"
    n_step: int = 10
    max_samples: int = 40  # a near-tie that 40 samples cannot settle rarely moves a ranking
    sigma_star: float = 0.05  # also stop, as Algorithm 1 does, once the standard error is below this
    confidence: float = 0.8  # of the Wilson intervals that decide outcomes
    # The outcome rule to decide: the rating's own, by default.
    outcome: str = "${rating.outcome}"
    draw_margin: float = "${rating.draw_margin}"  # type: ignore[assignment]
    p_thresh: float = "${rating.p_thresh}"  # type: ignore[assignment]

    def check(self) -> list[Problem]:
        return [*super().check(), *_batches(self),
                *require(0 < self.confidence < 1, "confidence", self.confidence, "must lie in (0, 1)"),
                *one_of(OutcomeRule, "outcome", self.outcome)]


@dataclass
class AdaptiveConfig(EstimatorConfig):
    """Samples only where an answer can still change an uncertain comparison in the ranking so
    far (skate.estimators.Adaptive); needs a rating that says how sure its order is."""

    _target_: str = "skate.estimators.Adaptive"
    first: int = 2  # samples each asked player gives on a task
    step: int = 2  # then, where an unsure pair disagrees on the task, this many more at a time ...
    max_samples: int = 6  # ... up to this many per player (= first: no top-up)
    # An adjacent pair ordered with less than this probability is uncertain; null: stop.settled
    # when the game stops once settled (so it samples until then), else 0.95.
    confidence: Optional[float] = None
    setter_answers: bool = False  # the setter always answers its own task
    # Ask this many of them first (spread over the ranking); if they all agree on every sample
    # (all right, or all wrong), the task does not discriminate there and the rest are not asked.
    # 0: everyone at once.
    probe: int = 0
    # Samples a task gets in all, shared among the players asked (at least `first` each): a task
    # costs its setter's attempts however few answer it. 0: `first` each, however many are asked.
    per_task: int = 0

    def check(self) -> list[Problem]:
        c = self.confidence
        return [*super().check(),
                *require(self.first >= 1, "first", self.first, "must be >= 1"),
                *require(self.step >= 1, "step", self.step, "must be >= 1"),
                *require(self.max_samples >= self.first, "max_samples", self.max_samples, "must be >= estimator.first"),
                *require(c is None or 0.5 < c < 1, "confidence", c, "must lie in (0.5, 1), or null")]


@dataclass
class FixedNConfig(EstimatorConfig):
    _target_: str = "skate.estimators.FixedN"
    n: int = 20

    def check(self) -> list[Problem]:
        return [*super().check(), *require(self.n >= 1, "n", self.n, "must be >= 1")]


@dataclass
class LogProbsConfig(EstimatorConfig):
    """p(correct) read from the model's log-probabilities, one call per (player, task)
    (skate.estimators.LogProbs); multiple-choice games only."""

    _target_: str = "skate.estimators.LogProbs"
    fallback: int = 4  # samples drawn where a read cannot be made (no log-probabilities, a reply not starting with a label)
    weight: int = 4  # samples a read counts as, for ratings that take graded samples (irt)
    min_mass: float = 0.5  # the least probability the labels must hold at the reply's first token
    # Reads per (player, task), each of the options in another order drawn from the task (the
    # first the one greedy shows), p(correct) their mean: a model's preference for one label then
    # weighs on the right option in several places (the Qwen models' reads put 0.13 on easy tasks).
    orders: int = 1

    def check(self) -> list[Problem]:
        return [*super().check(),
                *require(self.fallback >= 1, "fallback", self.fallback, "must be >= 1"),
                *require(self.weight >= 1, "weight", self.weight, "must be >= 1"),
                *require(0.0 < self.min_mass <= 1.0, "min_mass", self.min_mass, "must lie in (0, 1]"),
                *require(1 <= self.orders <= 24, "orders", self.orders, "give the reads per (player, task), from 1 to 24")]


@dataclass
class GreedyConfig(EstimatorConfig):
    _target_: str = "skate.estimators.Greedy"
    llm_temperature: float = 0.0  # set on every language-model player (greedy decoding)
    max_tokens: Optional[int] = None  # when set, every language-model player's reply limit (ArxivRoll: 50)

    def check(self) -> list[Problem]:
        t, m = self.llm_temperature, self.max_tokens
        return [*super().check(), *require(0.0 <= t <= 2.0, "llm_temperature", t, "must lie in [0, 2]"),
                *require(m is None or m >= 1, "max_tokens", m, "must be >= 1 or null")]


# The estimator group's registry (conf/estimator/<name>.yaml extends /schema/estimator/<name>).
estimator: Registry[type[Estimator]] = Registry("estimator", __name__)
estimator.register("algorithm1", Algorithm1Config)(Algorithm1)
estimator.register("decided", DecidedConfig)(Decided)
estimator.register("adaptive", AdaptiveConfig)(Adaptive)
estimator.register("fixed_n", FixedNConfig)(FixedN)
estimator.register("greedy", GreedyConfig)(Greedy)
estimator.register("logprobs", LogProbsConfig)(LogProbs)




def check_links(e: DictConfig, r: DictConfig) -> None:
    """What only the composed config can say (before it is typed): an estimator that decides the
    rating's pairwise outcomes, whose outcome rule follows the rating's (``${rating.outcome}``),
    needs a rating that has one."""
    kind = estimator.of(e)
    if kind.component.decides_outcomes and OmegaConf.is_interpolation(e, "outcome") and "outcome" not in r:
        others = estimator.names(lambda entry: not entry.component.decides_outcomes)
        raise ConfigError(f"{kind.option} settles the pairwise outcomes of the rating's outcome rule, and "
                          f"{rating_name(r)} has none (it rates the answers themselves): use estimator={spoken(others)}, "
                          "or give estimator.outcome, estimator.draw_margin and estimator.p_thresh")

"""Simulated players: known latent skill, real tasks, the same engine as language-model players.

What a simulated player writes and how it reads a query belong to its game (a
:class:`Simulation`, from :meth:`skate.games.base.Game.simulation`). What is the same in every
game lives here:

* **answering by skill**: a sample is known outright with probability
  ``know = sigmoid((skill_eff - difficulty) / width)``, where ``difficulty`` is the game's measure
  of the task's text and ``skill_eff`` is the player's skill plus any per-kind offset
  (``topic_skill``) plus a fixed per-task "blind spot" offset (``noise``), times ``1 - slip``
  (a sloppy answerer gets wrong some samples it knows, so it answers off the logistic rule). The
  game decides what a player that does not know replies (a guess among the options, ...).
* **setting from its history**, as its augmentation strategy allows: with no history it picks
  kinds at random and pitches at ``skill + pitch``; with its own tasks it spreads over the kinds
  it has used least; with its own p(correct) it moves its difficulty towards the band it can
  still answer (about 70%); with other players' scores it also favours kinds where it beats
  them. After "not unique" it changes kind; after failing to solve its own task (games whose
  setters must prove their tasks solvable) it aims easier. With probability ``sloppiness`` (halving with each
  retry, as it has been told what went wrong) an attempt carries a defect the game chooses, so
  the retry path is exercised.
"""

from __future__ import annotations

import math
import threading
import zlib
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Generic, TypeVar

import numpy as np
from cachetools import LRUCache

from skate.players.base import Player
from skate.runlog.records import FailReason, HistoryItem, SetterContext

KNOW_WIDTH = 0.06  # how sharply knowing falls off as difficulty passes skill
AIM_OWN_P = 0.7  # hist_perf setters aim for tasks they answer about this often
AIM_OWN_P_COMPETITIVE = 0.65  # setters that also see their rivals' scores push a little harder
HISTORY_WINDOW = 8  # recent own tasks used to calibrate difficulty
UNSOLVED_STEP = 0.1  # how much easier a setter aims after failing to solve its own task


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Memo(Generic[K, V]):
    """A bounded, thread-safe memo of a pure function (of a task's text, an option, ...).

    A game reads each task many times in its round (every player, every sample) and seldom after,
    so the most recent ``size`` keys are kept (least recently used out first): a long game's memos
    stay the same size, and a key asked again after it left is computed again, to the same value.
    The function runs outside the lock (a sandbox run may take a while); two threads asking for
    the same new key may both compute it.
    """

    def __init__(self, compute: Callable[[K], V], size: int = 2048) -> None:
        self._compute = compute
        self._cache: LRUCache[K, V] = LRUCache(maxsize=size)
        self._lock = threading.Lock()

    def __call__(self, key: K) -> V:
        with self._lock:
            try:
                return self._cache[key]
            except KeyError:
                pass
        value = self._compute(key)
        with self._lock:
            self._cache[key] = value
        return value

    def __len__(self) -> int:
        with self._lock:
            return len(self._cache)


def know(skill: float, difficulty: float, width: float = KNOW_WIDTH) -> float:
    """Probability of knowing a task's answer outright: ``sigmoid((skill - difficulty) / width)``."""
    z = (skill - difficulty) / width
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


class Simulation(ABC):
    """How simulated players play one game; one per run, shared by its simulated players."""

    kinds: tuple[str, ...]  # families of task the game's generator writes
    know_width: float = KNOW_WIDTH

    @property
    def skill_keys(self) -> tuple[str, ...]:
        """The ``topic_skill`` keys a player of this game may have (its kinds by default; a game
        may add others, e.g. SCP's document domains)."""
        return self.kinds

    def kinds_of(self, text: str) -> tuple[str, ...]:
        """Every ``topic_skill`` key that applies to a task (its one kind by default)."""
        kind = self.kind_of(text)
        return (kind,) if kind else ()

    @abstractmethod
    def kind_of(self, text: str) -> str | None:
        """The family of a task, from its text (None when it is not one the generator writes)."""

    @abstractmethod
    def difficulty(self, text: str) -> float:
        """How hard a task is, in [0, 1], from its text (the scale skills are on)."""

    @abstractmethod
    def write(
        self, player: SimulatedPlayer, ctx: SetterContext, kind: str, target: float, rng: np.random.Generator
    ) -> Any:
        """A proposal of ``kind`` near difficulty ``target``."""

    @abstractmethod
    def flaw(self, player: SimulatedPlayer, ctx: SetterContext, proposal: Any, rng: np.random.Generator) -> Any:
        """A defective version of ``proposal`` (the kind of mistake a careless setter makes)."""

    @abstractmethod
    def answer(self, player: SimulatedPlayer, queries: Sequence[Any], rng: np.random.Generator) -> list[Any]:
        """One reply per query, by ``player.p_know`` of the query's task."""


class SimulatedPlayer(Player):
    def __init__(
        self,
        name: str,
        skill: float,
        sim: Simulation,
        seed: int,
        topic_skill: Mapping[str, float] | None = None,
        pitch: float = 0.0,
        sloppiness: float = 0.15,
        noise: float = 0.08,
        slip: float = 0.0,
    ) -> None:
        unknown = sorted(set(topic_skill or {}) - set(sim.skill_keys))
        if unknown:
            raise ValueError(
                f"player {name!r}: unknown topic_skill kinds {unknown}; valid kinds are {list(sim.skill_keys)}"
            )
        self.name = name
        self.skill = skill
        self.topic_skill = dict(topic_skill or {})
        self.pitch = pitch
        self.sloppiness = sloppiness
        self.noise = noise
        self.slip = slip
        self.sim = sim
        self.seed = seed
        self._difficulty: Memo[str, float] = Memo(sim.difficulty)
        self._skill: Memo[str, float] = Memo(self._effective_skill)  # a fixed function of the text

    def describe(self) -> dict[str, Any]:
        out = {
            "name": self.name,
            "kind": "simulated",
            "true_skill": self.skill,
            "topic_skill": self.topic_skill,
            "pitch": self.pitch,
            "sloppiness": self.sloppiness,
        }
        if self.slip:
            out["slip"] = self.slip
        return out

    # ------------------------------------------------------------------ answering
    def difficulty(self, text: str) -> float:
        return self._difficulty(text)

    def effective_skill(self, text: str) -> float:
        """Skill on this task: base + per-kind offsets + a fixed blind-spot offset for the task."""
        return self._skill(text)

    def _effective_skill(self, text: str) -> float:
        blind = (
            np.random.default_rng([self.seed, zlib.crc32(self.name.encode()), zlib.crc32(text.encode())]).normal(
                0.0, self.noise
            )
            if self.noise > 0
            else 0.0
        )
        offset = sum(self.topic_skill.get(key, 0.0) for key in self.sim.kinds_of(text))
        return self.skill + offset + float(blind)

    def p_know(self, text: str) -> float:
        """Probability of knowing the answer outright (before any guessing), less the player's
        slips."""
        return know(self.effective_skill(text), self.difficulty(text), self.sim.know_width) * (1.0 - self.slip)

    def answer(self, queries: Sequence[Any], rng: np.random.Generator) -> list[Any]:
        return self.sim.answer(self, queries, rng)

    # ------------------------------------------------------------------ setting
    def set_task(self, ctx: SetterContext, rng: np.random.Generator) -> Any:
        kind = self.choose_kind(ctx, rng)
        target = self.target_difficulty(ctx, rng)
        proposal = self.sim.write(self, ctx, kind, target, rng)
        # Sloppiness fades on retries: the setter has been told what went wrong.
        if rng.random() < self.sloppiness * 0.5 ** (ctx.attempt - 1):
            proposal = self.sim.flaw(self, ctx, proposal, rng)
        return proposal

    def _own_items(self, ctx: SetterContext) -> list[HistoryItem]:
        return sorted((h for h in ctx.history if h.setter == self.name), key=lambda h: h.number)

    def choose_kind(self, ctx: SetterContext, rng: np.random.Generator) -> str:
        kinds = list(self.sim.kinds)
        banned = {self.sim.kind_of(f.text) for f in ctx.failed if f.reason is FailReason.NOT_UNIQUE}
        allowed = [k for k in kinds if k not in banned] or kinds
        weights = np.ones(len(allowed))
        used: dict[str, int] = defaultdict(int)
        for h in self._own_items(ctx):
            used[self.sim.kind_of(h.prompt) or ""] += 1
        advantage = self._kind_advantage(ctx)
        for i, k in enumerate(allowed):
            weights[i] /= (1.0 + used[k]) ** 2  # spread over the kinds used least so far
            weights[i] *= math.exp(4.0 * advantage.get(k, 0.0))
        return str(allowed[int(rng.choice(len(allowed), p=weights / weights.sum()))])

    def _kind_advantage(self, ctx: SetterContext) -> dict[str, float]:
        """Mean (own p - rivals' mean p) per kind, from every scored item that shows rivals."""
        diffs: dict[str, list[float]] = defaultdict(list)
        for h in ctx.history:
            if not h.p_correct or self.name not in h.p_correct or len(h.p_correct) < 2:
                continue
            rivals = [p for n, p in h.p_correct.items() if n != self.name]
            diffs[self.sim.kind_of(h.prompt) or ""].append(h.p_correct[self.name] - float(np.mean(rivals)))
        return {k: float(np.mean(v)) for k, v in diffs.items()}

    def target_difficulty(self, ctx: SetterContext, rng: np.random.Generator) -> float:
        prior = self.skill + self.pitch
        scored = [
            (h.prompt, h.p_correct[self.name]) for h in self._own_items(ctx) if h.p_correct and self.name in h.p_correct
        ][-HISTORY_WINDOW:]
        if scored:
            aim = AIM_OWN_P if ctx.strategy == "hist_perf" else AIM_OWN_P_COMPETITIVE
            d = np.array([self.difficulty(prompt) for prompt, _ in scored])
            p = np.array([own for _, own in scored])
            # Too easy for myself (p above aim) -> harder; too hard -> easier.
            estimate = float(d.mean() + 0.5 * (p.mean() - aim))
            w = len(scored) / (len(scored) + 2.0)
            prior = (1 - w) * prior + w * estimate
        # Told this round that it could not solve its own task: it writes an easier one.
        prior -= UNSOLVED_STEP * sum(1 for f in ctx.failed if f.reason is FailReason.UNSOLVED)
        return float(np.clip(prior + rng.normal(0.0, 0.05), 0.02, 0.98))


def build_simulated(roster: Sequence[Any], sim: Simulation, seed: int) -> list[Player]:
    """Players from the ``players.simulated`` config list, sharing one :class:`Simulation`.

    ``topic_skill`` offsets for kinds of other games are left out (the config check has already
    refused kinds no game knows).
    """
    return [
        SimulatedPlayer(
            name=p.name,
            skill=float(p.skill),
            sim=sim,
            seed=seed,
            topic_skill={str(k): float(v) for k, v in dict(p.topic_skill).items() if str(k) in sim.skill_keys},
            pitch=float(p.pitch),
            sloppiness=float(p.sloppiness),
            noise=float(p.noise),
            slip=float(p.slip),
        )
        for p in roster
    ]

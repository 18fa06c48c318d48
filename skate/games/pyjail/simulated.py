"""How a simulated player of known skill plays PyJail.

It **sets** a jail from :mod:`skate.games.pyjail.generator`, of the defence family it chose and
a strength near the difficulty it aims at; its proof of solvability is a real attack session
like anyone's (it does not remember its own jail's weakness), so a jail pitched above its skill
often fails the proof and the next attempt aims easier. A defective attempt is a jail that does
not parse, defines no ``jail`` function, or cannot be broken at all.

It **attacks** in sessions. At the start of each session it reads the jail (the generator's
reader; a jail it did not write stays opaque) and, with probability ``know`` (skill against the
jail's difficulty, as in every game), sees how to break it: at one of its tries, early for a
strong player, it sends an input that breaks that jail. Its other tries come from its
repertoire: techniques up to its skill, most promising first, each input tried once. Its budget
grows with skill (``1 + round((tries - 1) * skill)`` inputs per session): when its inputs are
spent it gives up, and the session ends failed without running anything more. Every input
really runs in the sandbox; only a captured flag counts, so a weak jail falls to a repertoire
input too, and an attack that was "seen" but fails in the jail fails.
"""

from __future__ import annotations

import threading
import zlib
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

import skate.games.pyjail.generator as gen
from skate.games.base import GameEnv
from skate.games.pyjail.rules import GIVE_UP, AttackQuery, JailProposal, PyJailGame
from skate.players.simulated import SimulatedPlayer, Simulation
from skate.runlog.records import SetterContext

SETTER_FLAWS = ("syntax", "no_jail", "unbreakable")  # a jail that hangs costs every try its time limit
HIDDEN_SOURCE_PENALTY = 0.15  # attacking without the source is this much harder
FIND_EARLY = 0.6  # chance per try, once it has seen the break, that it sends it now


class PyJailSimulation(Simulation):
    kinds = gen.KINDS

    def __init__(self, game: PyJailGame) -> None:
        self.tries = game.tries
        self._plans: OrderedDict[tuple, list[str]] = OrderedDict()  # recent sessions' plans
        self._lock = threading.Lock()

    def kind_of(self, text: str) -> str | None:
        return gen.kind_of(text)

    def difficulty(self, text: str) -> float:
        return gen.difficulty(text)

    # ------------------------------------------------------------------ setting
    def write(
        self, player: SimulatedPlayer, ctx: SetterContext, kind: str, target: float, rng: np.random.Generator
    ) -> JailProposal:
        return JailProposal(gen.make_jail(kind, float(np.clip(target, 0.0, 1.0)), rng))

    def flaw(
        self, player: SimulatedPlayer, ctx: SetterContext, proposal: JailProposal, rng: np.random.Generator
    ) -> JailProposal:
        kind = gen.kind_of(proposal.source) or str(rng.choice(list(gen.KINDS)))
        flaw = str(rng.choice(SETTER_FLAWS))
        return JailProposal(gen.flawed_jail(flaw, kind, float(rng.random()), rng))

    # ------------------------------------------------------------------ attacking
    def budget(self, skill: float) -> int:
        """Inputs a player of this skill tries in one session before it gives up."""
        return 1 + int(round((self.tries - 1) * float(np.clip(skill, 0.0, 1.0))))

    def plan(self, player: SimulatedPlayer, query: AttackQuery) -> list[str]:
        """The inputs of one session, in order (the same for every try of the session)."""
        key = (player.name, player.seed, query.session, query.source)
        with self._lock:
            if key in self._plans:
                return self._plans[key]
        plan = self._plan(player, query)
        with self._lock:
            self._plans[key] = plan
            while len(self._plans) > 4096:
                self._plans.popitem(last=False)
        return plan

    def _plan(self, player: SimulatedPlayer, query: AttackQuery) -> list[str]:
        source = query.source or ""
        prng = np.random.default_rng(
            [player.seed, zlib.crc32(player.name.encode()), query.session, zlib.crc32(source.encode())]
        )
        info = gen.read_jail(source) if source else None
        if source:
            skill = player.effective_skill(source)
            p = player.p_know(source) if info is not None else 0.0
        else:  # hidden source: it cannot read the jail, only probe it
            skill, p = player.skill - HIDDEN_SOURCE_PENALTY, 0.0
        budget = min(self.budget(skill), self.tries)
        inputs = list(dict.fromkeys(gen.attack_inputs(skill, info, self.tries, prng)))  # each once
        if info is not None and prng.random() < p:
            find_at = 1
            while find_at < budget and prng.random() > FIND_EARLY:
                find_at += 1
            inputs.insert(find_at - 1, gen.breaker(info, prng))
        return inputs[:budget]

    def answer(self, player: SimulatedPlayer, queries: Sequence[AttackQuery], rng: np.random.Generator) -> list:
        out = []
        for q in queries:
            plan = self.plan(player, q)
            t = len(q.tries)
            out.append(plan[t] if t < len(plan) else GIVE_UP)
        return out


def simulation(game: PyJailGame, env: GameEnv) -> PyJailSimulation:
    """How simulated players play PyJail in one run (its registered ``simulation`` part)."""
    return PyJailSimulation(game)

"""How a simulated player of known skill plays SCP.

It **answers** by reading the source document (:class:`~skate.games.scp.reader.Reader`): with
probability ``know`` (its skill, plus its offsets for the question's type and document domain,
against the question's :func:`~skate.games.scp.reader.difficulty`) it names the option the
document says is right, otherwise it guesses among the four, so p(correct) is
``know + (1 - know) / 4``. A question whose text is not in the corpus (distractors a language
model wrote are, but its context is not) cannot be read: the player guesses.

It **sets** (``game.mode=player_set``) by looking over the fragments the offered paragraphs
allow for the question type it picked, building each question as the game would (for
Prediction, with wrong continuations taken from the other shown paragraphs, the most similar
ones for a hard question, any for an easy one) and keeping the one whose difficulty is nearest
its aim. A careless attempt names a document that was not offered, a fragment outside the
window, a repeated distractor or no distractors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from skate.games.base import GameEnv
from skate.games.scp.fragments import Fragment, acceptable
from skate.games.scp.questions import N_OPTIONS, TYPES, cloze, sequencing, similar
from skate.games.scp.reader import Reader, SCPQuery, difficulty
from skate.games.scp.rules import SHIPPED_DOMAINS, SCPGame, SCPProposal, query_of
from skate.players.simulated import SimulatedPlayer, Simulation
from skate.runlog.records import Rejection, SetterContext

FLAWS = ("not_offered", "outside_window", "repeated_distractor", "no_distractors")
CANDIDATES = 10  # fragments a setter looks at per attempt


def key_of(q: SCPQuery) -> str:
    """The text a simulated player's skill is looked up by: the question and its options, in an
    order that does not depend on how they were shuffled."""
    return q.prompt + "\x00" + "\x00".join(sorted(q.options))


class SCPSimulation(Simulation):
    def __init__(self, game: SCPGame) -> None:
        self.game = game
        self.reader = Reader(game.docs)
        self.kinds = tuple(game.types)
        self._domains = tuple(dict.fromkeys([*SHIPPED_DOMAINS, *sorted({d.domain for d in game.docs})]))
        self._info: dict[str, tuple[str, str | None, float, str | None]] = {}  # ..., the right option's text

    @property
    def skill_keys(self) -> tuple[str, ...]:
        return TYPES + self._domains

    # ------------------------------------------------------------------ reading
    def read(self, q: SCPQuery) -> tuple[str, str | None, float, int | None]:
        """(type, domain, difficulty, index of the right option in ``q``) for one sample."""
        key = key_of(q)
        info = self._info.get(key)
        if info is None:
            right = self.reader.solve(q)
            info = (q.type, self.reader.domain(q), difficulty(q, right), None if right is None else q.options[right])
            if len(self._info) > 200_000:
                self._info.clear()
            self._info[key] = info
        qtype, domain, diff, right_text = info
        return qtype, domain, diff, (q.options.index(right_text) if right_text in q.options else None)

    def kind_of(self, text: str) -> str | None:
        info = self._info.get(text)
        return info[0] if info else None

    def kinds_of(self, text: str) -> tuple[str, ...]:
        info = self._info.get(text)
        return tuple(k for k in (info[0], info[1]) if k) if info else ()

    def difficulty(self, text: str) -> float:
        info = self._info.get(text)
        return info[2] if info else 0.5

    def answer(self, player: SimulatedPlayer, queries: Sequence[SCPQuery], rng: np.random.Generator) -> list[int]:
        out = []
        for q in queries:
            right = self.read(q)[3]
            if right is not None and rng.random() < player.p_know(key_of(q)):
                out.append(right)
            else:
                out.append(int(rng.integers(len(q.options))))
        return out

    # ------------------------------------------------------------------ setting
    def write(
        self, player: SimulatedPlayer, ctx: SetterContext, kind: str, target: float, rng: np.random.Generator
    ) -> Any:
        game = self.game
        # The kind it picked first; if no shown paragraph makes a fragment of that kind, another.
        for choice in [kind, *[k for k in self.kinds if k != kind]]:
            n, min_chars = game.sizes[choice]
            span = n + (choice == "prediction")
            options: list[tuple[str, int]] = []
            for shown in ctx.assignment.get("documents", []):
                paras = game.paragraphs_of(shown["doc"])
                last = shown["first"] + len(shown["paragraphs"]) - 1
                for start in range(shown["first"], last - span + 2):
                    if acceptable(paras[start : start + n], min_chars, game.threshold):
                        options.append((shown["doc"], start))
            if options:
                kind = choice
                break
        if not options:  # nothing fits: name the first shown paragraph and let the game say why
            shown = ctx.assignment["documents"][0]
            return SCPProposal(shown["doc"], shown["first"], kind)
        picks = [options[int(i)] for i in rng.permutation(len(options))[:CANDIDATES]]
        best: tuple[float, Any] | None = None
        for doc_id, start in picks:
            paras = game.paragraphs_of(doc_id)
            frag = Fragment(doc_id, game.by_id[doc_id].domain, start, tuple(paras[start : start + n]))
            seed = int(rng.integers(2**31))
            if kind == "prediction":
                shown = next(s for s in ctx.assignment["documents"] if s["doc"] == doc_id)
                window = list(range(shown["first"], shown["first"] + len(shown["paragraphs"])))
                pool = [
                    window[i]
                    for i in similar([paras[i] for i in window], frag.text, len(window))
                    if window[i] not in (start, start + 1)
                ]
                pool = [i for i in pool if len(paras[i]) >= game.min_distractor_chars]
                if len(pool) < N_OPTIONS - 1:
                    continue
                for variant in (pool[:3], [pool[int(i)] for i in rng.choice(len(pool), 3, replace=False)]):
                    made = game._prediction(frag, paras, [paras[i] for i in variant], seed)
                    if isinstance(made, Rejection):
                        continue
                    d = self.read(query_of(made))[2]
                    proposal = SCPProposal(doc_id, start, kind, tuple(paras[i] for i in variant))
                    if best is None or abs(d - target) < best[0]:
                        best = (abs(d - target), proposal)
                continue
            q = sequencing(frag, seed) if kind == "sequencing" else cloze(frag, seed)
            if q is None:
                continue
            d = self.read(query_of(q))[2]
            if best is None or abs(d - target) < best[0]:
                best = (abs(d - target), SCPProposal(doc_id, start, kind))
        if best is None:
            doc_id, start = picks[0]
            return SCPProposal(doc_id, start, kind)
        return best[1]

    def flaw(self, player: SimulatedPlayer, ctx: SetterContext, proposal: Any, rng: np.random.Generator) -> Any:
        flaw = str(rng.choice(FLAWS))
        if flaw == "not_offered":
            return replace(proposal, doc="pep-9999.rst")
        if flaw == "outside_window":
            return replace(proposal, paragraph=0)
        if proposal.type != "prediction":
            return replace(proposal, type="summary")
        if flaw == "repeated_distractor" and proposal.distractors:
            return replace(proposal, distractors=(proposal.distractors[0],) * 3)
        return replace(proposal, distractors=(), note="the reply has no [[ ## distractors ## ]] section")


def simulation(game: SCPGame, env: GameEnv) -> SCPSimulation:
    """How simulated players play SCP in one run (its registered ``simulation`` part)."""
    return SCPSimulation(game)

"""How a simulated player of known skill plays MathQuiz.

It **sets** a multi-step arithmetic word problem from :mod:`skate.games.mathquiz.generator`
whose answer is its target, aimed at a difficulty on the scale of
:func:`~skate.games.mathquiz.generator.question_difficulty` (it drafts a few and keeps the
closest). A defective attempt states the target, is empty, or leads to another number (so its
setter's own answer misses the target).

It **answers** by reading the question (:func:`~skate.games.mathquiz.generator.solve`): with
probability ``know`` it gives the answer, otherwise a plausible slip (a step misapplied, skipped
or off by one), so p(correct) is ``know`` itself. Answers come in the forms models write (``42``,
``1,234``, ``The answer is 42.``, ``\\boxed{42}``), which the game's normaliser reads. A question
outside the generator's forms (one a language model wrote) cannot be read: a simulated player
then answers with a slip built from the question's numbers, so it almost always misses.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from skate.answers.exact import ExactQuery
from skate.games.base import GameEnv
from skate.games.mathquiz.generator import KINDS, generate_question, kind_of, question_difficulty, solve, wrong_answers
from skate.games.mathquiz.rules import MathQuizGame, MathQuizProposal
from skate.players.simulated import SimulatedPlayer, Simulation
from skate.runlog.records import SetterContext

FLAWS = ("states_target", "empty", "wrong_target")
FORMS = ("{}", "{:,}", "The answer is {}.", "\\boxed{{{}}}", "So the total comes to {}.")
SLIPS = 5  # wrong answers remembered per question


@functools.lru_cache(maxsize=65536)
def read_question(text: str) -> tuple[int | None, tuple[int, ...]]:
    """A question's answer (None if it cannot be read) and the slips a solver might make."""
    truth = solve(text)
    slips = wrong_answers(text, SLIPS, np.random.default_rng(len(text))) or [(truth or 0) + 1]
    return truth, tuple(slips)


class MathQuizSimulation(Simulation):
    kinds = KINDS

    def kind_of(self, text: str) -> str | None:
        return kind_of(text)

    def difficulty(self, text: str) -> float:
        return question_difficulty(text)

    @staticmethod
    def read(text: str) -> tuple[int | None, tuple[int, ...]]:
        return read_question(text)

    # ------------------------------------------------------------------ setting
    def write(
        self, player: SimulatedPlayer, ctx: SetterContext, kind: str, target: float, rng: np.random.Generator
    ) -> MathQuizProposal:
        number = int(ctx.assignment["target"])
        drafts = [
            generate_question(kind, float(np.clip(target + rng.normal(0, 0.1), 0, 1)), number, rng) for _ in range(4)
        ]
        return MathQuizProposal(min(drafts, key=lambda q: abs(question_difficulty(q) - target)))

    def flaw(
        self, player: SimulatedPlayer, ctx: SetterContext, proposal: MathQuizProposal, rng: np.random.Generator
    ) -> MathQuizProposal:
        flaw = str(rng.choice(FLAWS))
        number = int(ctx.assignment["target"])
        if flaw == "states_target":
            return MathQuizProposal(f"{proposal.question} (Hint: it comes to {number}.)")
        if flaw == "empty":
            return MathQuizProposal("", note="the reply has no [[ ## question ## ]] section")
        kind = kind_of(proposal.question) or str(rng.choice(list(KINDS)))
        off = number + int(rng.choice([-1, 1])) * int(rng.integers(1, 10))
        return MathQuizProposal(generate_question(kind, question_difficulty(proposal.question), off, rng))

    # ------------------------------------------------------------------ answering
    def answer(self, player: SimulatedPlayer, queries: Sequence[ExactQuery], rng: np.random.Generator) -> list[str]:
        out = []
        know: dict[str, float] = {}
        for q in queries:
            truth, slips = self.read(q.prompt)
            if q.prompt not in know:
                know[q.prompt] = player.p_know(q.prompt)
            if truth is not None and rng.random() < know[q.prompt]:
                value = truth
            else:
                value = slips[int(rng.integers(len(slips)))]
            out.append(FORMS[int(rng.integers(len(FORMS)))].format(value))
        return out


def simulation(game: MathQuizGame, env: GameEnv) -> MathQuizSimulation:
    """How simulated players play MathQuiz in one run (its registered ``simulation`` part)."""
    return MathQuizSimulation()

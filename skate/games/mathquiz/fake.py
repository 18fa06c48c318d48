"""How the project's fake OpenAI-compatible server plays MathQuiz (see :mod:`skate.llm.fake_server`).

Asked to set a question (the setter's ``rules``/``target``/``situation``/``history`` fields) a
fake model writes a word problem for the target with the generator, at a difficulty near its
skill. Asked to answer (a ``question`` field) it reads the question with the generator's reader
and gives the answer with a probability that falls as the question gets harder than its skill,
otherwise a slip; with the ``reasoning`` output requested it writes some working first. Every
choice is drawn from the request's seed and the choice's index.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from skate.games.base import FakePlayer, FakeRequest, seeded_random
from skate.games.mathquiz.generator import KINDS, generate_question, question_difficulty, solve, wrong_answers
from skate.players.simulated import know

FORMS = ("{}", "The answer is {}.", "\\boxed{{{}}}", "{:,}")


class FakeMathQuizPlayer(FakePlayer):
    def claims(self, inputs: Mapping[str, str]) -> bool:
        return set(inputs) - {"guidance", "calculation"} in ({"rules", "target", "situation", "history"}, {"question"})

    def reply(self, request: FakeRequest) -> str:
        return self._answer(request) if "question" in request.inputs else self._set(request)

    def _set(self, req: FakeRequest) -> str:
        rng = np.random.default_rng(seeded_random("set", req.model, req.seed, req.index).getrandbits(63))
        try:
            target = int(req.inputs["target"].strip())
        except ValueError:
            return "[[ ## question ## ]]\nWhat is the target?\n\n[[ ## completed ## ]]"
        kind = KINDS[int(rng.integers(len(KINDS)))]
        question = generate_question(kind, float(np.clip(req.skill - 0.1 + rng.normal(0, 0.1), 0, 1)), target, rng)
        return f"[[ ## question ## ]]\n{question}\n\n[[ ## completed ## ]]"

    def _answer(self, req: FakeRequest) -> str:
        question = req.inputs["question"]
        rnd = seeded_random("answer", req.model, req.seed, req.index, question)
        truth = solve(question)
        if truth is not None and rnd.random() < know(req.skill, question_difficulty(question)):
            value, working = truth, "I follow the question step by step and keep track of every quantity."
        else:
            slips = wrong_answers(question, 3, np.random.default_rng(rnd.getrandbits(63))) or [0]
            value, working = rnd.choice(slips), "I work through it quickly."
        answer = rnd.choice(FORMS).format(value)
        head = f"[[ ## reasoning ## ]]\n{working}\n\n" if "reasoning" in req.outputs else ""
        return f"{head}[[ ## answer ## ]]\n{answer}\n\n[[ ## completed ## ]]"

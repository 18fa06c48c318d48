"""How the project's fake OpenAI-compatible server plays COP (see :mod:`skate.llm.fake_server`).

Asked to set a task (a request with the setter's ``rules``/``situation``/``history`` fields) a
fake model writes a program with the generator at a difficulty near its skill, plus wrong
answers; asked to answer (``program`` and ``options`` fields) it finds the program's real output
among the options (or, for CRUXEval's practice programs, the output the data records) and picks it with a probability that falls as the program gets harder than its
skill, otherwise a random letter. When the request asks for a ``reasoning`` output (the
answerer's chain of thought) it writes some working first, naming another option on the way, as a
model thinking aloud does, before the letter in its ``answer`` section. Every choice is drawn from
the request's seed and the choice's index, so the same request gives the same reply (the same
letter with and without reasoning).
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections.abc import Mapping

import numpy as np

from skate.answers.choice import normalize_text
from skate.games.base import FakePlayer, FakeRequest, seeded_random
from skate.games.cop.difficulty import code_difficulty
from skate.games.cop.distractors import make_distractors
from skate.games.cop.generator import KINDS, generate_program, predict_output
from skate.games.cop.practice import usable
from skate.players.simulated import know

_N_WRONG = re.compile(r"you give (\d+) wrong answers")


@functools.cache
def practice_outputs() -> dict[str, str]:
    """What each CRUXEval practice program prints (known from the data, never run here)."""
    return {normalize_program(program): answer for _, program, answer in usable()}


def normalize_program(program: str) -> str:
    return "\n".join(line.rstrip() for line in program.strip().splitlines())


class FakeCOPPlayer(FakePlayer):
    """Remembers the programs it wrote and their outputs, to recognise the true option."""

    def __init__(self) -> None:
        self.outputs: dict[str, str] = {}  # program text -> what it prints
        self._lock = threading.Lock()

    def claims(self, inputs: Mapping[str, str]) -> bool:
        return set(inputs) - {"guidance"} in ({"rules", "situation", "history"}, {"program", "options"})

    def reply(self, request: FakeRequest) -> str:
        return self._answer(request) if "options" in request.inputs else self._set(request)

    def _set(self, req: FakeRequest) -> str:
        rng = np.random.default_rng(seeded_random("set", req.model, req.seed, req.index).getrandbits(63))
        kind = KINDS[int(rng.integers(len(KINDS)))]
        program = generate_program(kind, float(np.clip(req.skill - 0.1 + rng.normal(0, 0.1), 0, 1)), rng)
        with self._lock:  # predict_output swaps sys.stdout: one at a time
            output = predict_output(program)
            self.outputs[normalize_program(program)] = output
        found = _N_WRONG.search(req.inputs.get("rules", ""))
        wrong = make_distractors(output, int(found.group(1)) if found else 9, rng)
        return (
            f"[[ ## program ## ]]\n{program}\n\n[[ ## wrong_answers ## ]]\n{json.dumps(wrong)}\n\n[[ ## completed ## ]]"
        )

    def _answer(self, req: FakeRequest) -> str:
        program, shown = req.inputs.get("program", ""), req.inputs["options"]
        rnd = seeded_random("answer", req.model, req.seed, req.index, program, shown)
        options = re.findall(r"^([A-J]):\n```\n(.*?)\n```", shown, flags=re.MULTILINE | re.DOTALL)
        letters = [letter for letter, _ in options]
        with self._lock:
            truth = self.outputs.get(normalize_program(program))
        if truth is None:  # a CRUXEval practice program (prompt optimisation's items)
            truth = practice_outputs().get(normalize_program(program))
        right = next(
            (letter for letter, text in options if truth is not None and normalize_text(text) == normalize_text(truth)),
            None,
        )
        if right is not None and rnd.random() < know(req.skill, code_difficulty(program)):
            pick = right
        else:
            pick = rnd.choice(letters) if letters else "A"
        head = ""
        if "reasoning" in req.outputs:
            other = next((letter for letter in letters if letter != pick), pick)
            head = (
                f"[[ ## reasoning ## ]]\nAt first sight option {other} looks right, but tracing the program "
                f"line by line, keeping track of every value, gives what option {pick} shows.\n\n"
            )
        return f"{head}[[ ## answer ## ]]\n{pick}\n\n[[ ## completed ## ]]"

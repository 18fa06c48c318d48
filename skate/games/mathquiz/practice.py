"""MathQuiz practice items: generated word problems whose answer is a known target.

Each item is a question from :func:`~skate.games.mathquiz.generator.generate_question` for a
random target in the game's ``[target_min, target_max]``; kinds go round in a shuffled order and
difficulties are spread over [0, 1] (one draw per equal slice). A question is kept only if it
passes the game's own checks on a setter's question (it does not state the target, it is within
``max_question_chars``) and :func:`~skate.games.mathquiz.generator.solve` reads it back to the
target; repeated texts are dropped.
"""

from __future__ import annotations

import numpy as np

from skate.games.mathquiz.generator import KINDS, generate_question, kind_of, question_difficulty, solve
from skate.games.mathquiz.rules import MathQuizGame, states_number
from skate.runlog.records import Task

PRACTICE_SETTER = "practice"
_TRIES_PER_ITEM = 5


def practice_tasks(
    n: int, target_min: int, target_max: int, max_question_chars: int, rng: np.random.Generator
) -> list[Task]:
    """Up to ``n`` MathQuiz tasks with known answers (deterministic in ``rng``)."""
    n = max(0, n)
    slots = rng.permutation(n)  # item k aims at difficulty slice slots[k] of n
    kinds: list[str] = []
    tasks: list[Task] = []
    seen: set[str] = set()
    for k in range(n):
        for _ in range(_TRIES_PER_ITEM):
            if not kinds:
                kinds = [KINDS[int(i)] for i in rng.permutation(len(KINDS))]
            kind = kinds.pop()
            target = int(rng.integers(target_min, target_max + 1))
            difficulty = float((slots[k] + rng.random()) / n)
            question = generate_question(kind, difficulty, target, rng)
            if (
                question in seen
                or len(question) > max_question_chars
                or states_number(question, target)
                or solve(question) != target
            ):
                continue
            seen.add(question)
            tasks.append(
                Task(
                    task_id=f"practice-mathquiz-{len(tasks)}",
                    round=0,
                    setter=PRACTICE_SETTER,
                    prompt=question,
                    answer=str(target),
                    data={"kind": kind_of(question), "difficulty": round(question_difficulty(question), 4)},
                )
            )
            break
    return tasks


def practice(game: MathQuizGame, n: int, rng: np.random.Generator) -> list[Task]:
    """MathQuiz's practice tasks (its registered ``practice`` part): up to ``n`` generated
    questions whose answer is a random target in the game's range, kinds and difficulties
    spread, each read back to its target by the generator's solver."""
    return practice_tasks(n, game.target_min, game.target_max, game.max_question_chars, rng)

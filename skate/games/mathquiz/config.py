"""The ``game=mathquiz`` config schema: every key and its default, the one place they live (the
option ``game=mathquiz`` is this schema as registered; override any key on the command line, e.g.
``game.target_max=100``).

MathQuiz (ZeroSumEval): each round every setter gets a secret target integer and writes a
question whose answer is that target, without stating it. The setter then answers its own
question in a fresh context; only a question it solves is valid. Every player answers every
valid question with a free-form number (normalised: separators, ``\\boxed{}``, "the answer is ...").
"""

from __future__ import annotations

from dataclasses import dataclass

from skate.games.base import GameConfig


@dataclass
class MathQuizConfig(GameConfig):
    _target_: str = "skate.games.mathquiz.MathQuizGame"
    name: str = "mathquiz"
    target_min: int = 1  # each setter's target is drawn uniformly from [target_min, target_max]
    target_max: int = 1000
    reasoning: bool = True  # language-model answerers reason step by step before answering
    max_question_chars: int = 2000  # longer questions are rejected
    # Answers per sample: a sample is correct once one of up to `tries` fresh answers is (each
    # try asked anew, as ZeroSumEval's student, who gets max_player_attempts = 3 tries a match).
    tries: int = 1
    # Each round's target comes with one calculation that reaches it (a × b + c, drawn with the
    # target), and the setter is asked to tell that calculation as a problem: for models that
    # cannot plan arithmetic towards a number (the local cohort's Qwen models: docs/real-models.md).
    recipe: bool = False

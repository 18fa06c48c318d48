"""The ``game=mathquiz`` config schema: every key and its default (``conf/game/mathquiz.yaml`` selects it)."""

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

"""``game=mathquiz``: write a question whose answer is a given number (ZeroSumEval's MathQuiz).

| module | what it holds |
|---|---|
| ``config`` | the config schema (``conf/game/mathquiz.yaml``) |
| ``rules`` | :class:`MathQuizGame`: targets, validity (the setter answers its own question), grading |
| ``generator`` | multi-step arithmetic word problems for a target at a chosen difficulty; a reader that solves them; their difficulty |
| ``simulated`` | how a simulated player of known skill sets and answers |
| ``modules`` | the DSPy setter and answerer for language-model players |
| ``fake`` | how the fake OpenAI-compatible server plays |
"""

from skate.games import register
from skate.games.mathquiz.config import MathQuizConfig
from skate.games.mathquiz.rules import MathQuizGame, MathQuizProposal

register(MathQuizGame)

__all__ = ["MathQuizConfig", "MathQuizGame", "MathQuizProposal"]

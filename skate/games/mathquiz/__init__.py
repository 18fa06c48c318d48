"""``game=mathquiz``: write a question whose answer is a given number (ZeroSumEval's MathQuiz).

| module | what it holds |
|---|---|
| ``config`` | the config schema (the option ``game=mathquiz``) |
| ``rules`` | :class:`MathQuizGame`: targets, validity (the setter answers its own question), grading |
| ``generator`` | multi-step arithmetic word problems for a target at a chosen difficulty; a reader that solves them; their difficulty |
| ``practice`` | generated questions with known answers |
| ``simulated`` | how a simulated player of known skill sets and answers |
| ``modules`` | the DSPy setter and answerer for language-model players |
| ``fake`` | how the fake OpenAI-compatible server plays |

The rules import none of the players: this package registers them with the game (the DSPy
modules by name, imported when a language-model player first needs them).
"""

from skate.games import register
from skate.games.mathquiz.config import MathQuizConfig
from skate.games.mathquiz.fake import FakeMathQuizPlayer
from skate.games.mathquiz.practice import practice
from skate.games.mathquiz.rules import MathQuizGame, MathQuizProposal
from skate.games.mathquiz.simulated import simulation

register(
    MathQuizGame,
    simulation=simulation,
    modules="skate.games.mathquiz.modules:mathquiz_modules",
    fake_player=FakeMathQuizPlayer,
    practice=practice,
)

__all__ = ["MathQuizConfig", "MathQuizGame", "MathQuizProposal"]

"""``game=cop``: code-output prediction (SKATE).

| module | what it holds |
|---|---|
| ``config`` | the config schema (the option ``game=cop``) |
| ``rules`` | :class:`COPGame`: validity, queries (multiple choice), grading |
| ``generator`` | programs of twelve kinds at a chosen difficulty, for simulated setters |
| ``difficulty`` | how hard any program is to trace, from its syntax tree |
| ``distractors`` | plausible wrong outputs |
| ``practice`` | CRUXEval's programs (``data/cruxeval.jsonl``) as tasks with known answers |
| ``simulated`` | how a simulated player of known skill sets and answers |
| ``modules`` | the DSPy setter and answerer for language-model players |
| ``fake`` | how the fake OpenAI-compatible server plays |

The rules import none of the players: this package registers them with the game (the DSPy
modules by name, imported when a language-model player first needs them).
"""

from skate.games import register
from skate.games.cop.config import COPConfig
from skate.games.cop.fake import FakeCOPPlayer
from skate.games.cop.practice import practice
from skate.games.cop.rules import COPGame, COPProposal
from skate.games.cop.simulated import simulation

register(
    COPGame,
    simulation=simulation,
    modules="skate.games.cop.modules:cop_modules",
    fake_player=FakeCOPPlayer,
    practice=practice,
)

__all__ = ["COPConfig", "COPGame", "COPProposal"]

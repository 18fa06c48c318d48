"""``game=cop``: code-output prediction (SKATE).

| module | what it holds |
|---|---|
| ``config`` | the config schema (``conf/game/cop.yaml``) |
| ``rules`` | :class:`COPGame`: validity, queries (multiple choice), grading |
| ``generator`` | programs of twelve kinds at a chosen difficulty, for simulated setters |
| ``difficulty`` | how hard any program is to trace, from its syntax tree |
| ``distractors`` | plausible wrong outputs |
| ``simulated`` | how a simulated player of known skill sets and answers |
| ``modules`` | the DSPy setter and answerer for language-model players |
| ``fake`` | how the fake OpenAI-compatible server plays |
"""

from skate.games import register
from skate.games.cop.config import COPConfig
from skate.games.cop.rules import COPGame, COPProposal

register(COPGame)

__all__ = ["COPConfig", "COPGame", "COPProposal"]

"""``game=pyjail``: write a Python jail around a flag, prove it breakable, defend it (ZeroSumEval's
capture the flag).

| module | what it holds |
|---|---|
| ``config`` | the config schema (the option ``game=pyjail``) |
| ``rules`` | :class:`PyJailGame`: jail checks, the setter's proof, attack sessions, fresh flags |
| ``generator`` | jails of known strength (filters on names, characters, length, AST nodes, output rewriting) and the attacks that break them |
| ``simulated`` | how a simulated player of known skill sets and attacks |
| ``modules`` | the DSPy setter and attacker for language-model players |
| ``fake`` | how the fake OpenAI-compatible server plays |

Every jail and every input runs in the configured sandbox (never in the evaluator's process).
The rules import none of the players: this package registers them with the game (the DSPy
modules by name, imported when a language-model player first needs them).
"""

from skate.games import register
from skate.games.pyjail.config import PyJailConfig
from skate.games.pyjail.fake import FakePyJailPlayer
from skate.games.pyjail.rules import AttackQuery, JailProposal, PyJailGame, Try, TryVerdict
from skate.games.pyjail.simulated import simulation

register(
    PyJailGame, simulation=simulation, modules="skate.games.pyjail.modules:pyjail_modules", fake_player=FakePyJailPlayer
)

__all__ = ["AttackQuery", "JailProposal", "PyJailConfig", "PyJailGame", "Try", "TryVerdict"]

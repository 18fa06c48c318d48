"""``game=pyjail``: write a Python jail around a flag, prove it breakable, defend it (ZeroSumEval's
capture the flag).

| module | what it holds |
|---|---|
| ``config`` | the config schema (``conf/game/pyjail.yaml``) |
| ``rules`` | :class:`PyJailGame`: jail checks, the setter's proof, attack sessions, fresh flags |
| ``generator`` | jails of known strength (filters on names, characters, length, AST nodes, output rewriting) and the attacks that break them |
| ``simulated`` | how a simulated player of known skill sets and attacks |
| ``modules`` | the DSPy setter and attacker for language-model players |
| ``fake`` | how the fake OpenAI-compatible server plays |

Every jail and every input runs in the configured sandbox (never in the evaluator's process).
"""

from skate.games import register
from skate.games.pyjail.config import PyJailConfig
from skate.games.pyjail.rules import AttackQuery, JailProposal, PyJailGame, Try, TryVerdict

register(PyJailGame)

__all__ = ["AttackQuery", "JailProposal", "PyJailConfig", "PyJailGame", "Try", "TryVerdict"]

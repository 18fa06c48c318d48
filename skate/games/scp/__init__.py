"""``game=scp``: sequencing, cloze and prediction questions from documents no model has seen
(ArxivRoll's SCP), in a built benchmark or set by the players.

| module | what it holds |
|---|---|
| ``config`` | the config schema (the option ``game=scp``) |
| ``rules`` | :class:`SCPGame`: the built benchmark, player-set validity, queries and grading |
| ``corpus`` | documents from a folder (text, Markdown, reStructuredText, HTML, PDF), and the shipped PEPs |
| ``arxiv`` | recent arXiv papers of a category and date window, written as such a folder |
| ``fragments`` | paragraphs, sentences and the fragments questions are cut from |
| ``questions`` | building, checking and reading the three question types |
| ``reader`` | finding shown text in the corpus: the right option, and a question's difficulty |
| ``practice`` | questions built from the corpus, away from the played benchmark, as tasks with known answers |
| ``simulated`` | how a simulated player of known skill sets and answers |
| ``modules`` | the DSPy setter and answerer for language-model players |
| ``fake`` | how the fake OpenAI-compatible server plays |
| ``cli`` | ``python -m skate.scp`` (alias of ``python -m skate.games.scp.cli``): build, stability, arxiv |

The rules import none of the players: this package registers them with the game (the DSPy
modules by name, imported when a language-model player first needs them).
"""

from skate.games import register
from skate.games.scp.config import SCPConfig
from skate.games.scp.fake import FakeSCPPlayer
from skate.games.scp.practice import practice_tasks
from skate.games.scp.rules import SCPGame, SCPProposal
from skate.games.scp.simulated import simulation

register(SCPGame, simulation=simulation, modules="skate.games.scp.modules:scp_modules",
         fake_player=FakeSCPPlayer, practice=practice_tasks)

__all__ = ["SCPConfig", "SCPGame", "SCPProposal"]

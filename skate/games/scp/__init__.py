"""``game=scp``: sequencing, cloze and prediction questions from documents no model has seen
(ArxivRoll's SCP), in a built benchmark or set by the players.

| module | what it holds |
|---|---|
| ``config`` | the config schema (``conf/game/scp.yaml``) |
| ``rules`` | :class:`SCPGame`: the built benchmark, player-set validity, queries and grading |
| ``corpus`` | documents from a folder (text, Markdown, reStructuredText, HTML, PDF), and the shipped PEPs |
| ``arxiv`` | recent arXiv papers of a category and date window, written as such a folder |
| ``fragments`` | paragraphs, sentences and the fragments questions are cut from |
| ``questions`` | building, checking and reading the three question types |
| ``reader`` | finding shown text in the corpus: the right option, and a question's difficulty |
| ``simulated`` | how a simulated player of known skill sets and answers |
| ``modules`` | the DSPy setter and answerer for language-model players |
| ``fake`` | how the fake OpenAI-compatible server plays |
"""

from skate.games import register
from skate.games.scp.config import SCPConfig
from skate.games.scp.rules import SCPGame, SCPProposal

register(SCPGame)

__all__ = ["SCPConfig", "SCPGame", "SCPProposal"]

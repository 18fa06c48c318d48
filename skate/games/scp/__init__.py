"""``game=scp``: sequencing, cloze and prediction questions from documents no model has seen
(ArxivRoll's SCP), in a built benchmark or set by the players.

| module | what it holds |
|---|---|
| ``config`` | the config schema (the option ``game=scp``) |
| ``rules`` | :class:`SCPGame`: the built benchmark, player-set validity, queries and grading |
| ``corpus`` | documents from a folder (text, Markdown, reStructuredText, HTML, PDF), and the shipped PEPs |
| ``fragments`` | paragraphs, sentences and the fragments questions are cut from |
| ``questions`` | building, checking and reading the three question types |
| ``reader`` | finding shown text in the corpus: the right option, and a question's difficulty |
| ``practice`` | questions built from the corpus, away from the played benchmark, as tasks with known answers |
| ``simulated`` | how a simulated player of known skill sets and answers |
| ``modules`` | the DSPy setter and answerer for language-model players |
| ``fake`` | how the fake OpenAI-compatible server plays |
| ``export`` | how ``skate export`` reads its tasks: a run's again, a benchmark file's, their provenance |

Its tools (``skate scp``: build, stability, arXiv sources; ``skate rugged``: Rugged Scores) are
in :mod:`skate.tools.scp`, above the runner: they are registered here as the game's commands, by
name, and nothing in this package imports them.

The rules import none of the players: this package registers them with the game (the DSPy
modules by name, imported when a language-model player first needs them).
"""

from skate.games import register
from skate.games.scp.config import SCPConfig
from skate.games.scp.export import EXPORT
from skate.games.scp.fake import FakeSCPPlayer
from skate.games.scp.practice import practice_tasks
from skate.games.scp.rules import SCPGame, SCPProposal
from skate.games.scp.simulated import simulation

register(
    SCPGame,
    simulation=simulation,
    modules="skate.games.scp.modules:scp_modules",
    fake_player=FakeSCPPlayer,
    practice=practice_tasks,
    export=EXPORT,
    commands={
        "scp": ("skate.cli.scp:main", "the SCP game's tools: build a benchmark, its stability, arXiv sources"),
        "rugged": ("skate.tools.scp.rugged:main", "Rugged Scores (ArxivRoll) from public and private accuracies"),
    },
)

__all__ = ["SCPConfig", "SCPGame", "SCPProposal"]

"""The SCP game's tools (:mod:`skate.games.scp` registers them as its commands).

| module | what it holds |
|---|---|
| ``cli`` | ``skate scp``: ``build`` a benchmark file, its ``stability`` over build seeds (played by the runner), ``arxiv`` sources |
| ``arxiv`` | recent arXiv papers of a category and date window, written as a documents folder ``build`` reads |
| ``rugged`` | ``skate rugged``: ArxivRoll's Rugged Scores from public accuracies and a finished SCP run |

What a game of SCP needs when it is played (its corpus, questions, rules, players) stays in
:mod:`skate.games.scp`; nothing there imports this package.
"""

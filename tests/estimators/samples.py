"""What the estimators' tests sample from: a scripted sampler, and a game that grades a reply equal
to the task's answer as right."""

from __future__ import annotations

from skate.games.base import Game, GameSpec
from skate.runlog.records import Task

TASK = Task("r001-p", 1, "p", "what is 6 x 7?", "42")


class Scripted:
    """A sampler that returns a fixed list of right/wrong verdicts and records its batch sizes."""

    def __init__(self, verdicts):
        self.verdicts = list(verdicts)
        self.used = 0
        self.batches: list[int] = []

    def __call__(self, n, rng):
        self.batches.append(n)
        got = self.verdicts[self.used : self.used + n]
        self.used += n
        return sum(got), 0, 0


class EchoGame(Game):
    """A game whose query is the task's prompt and whose reply is correct when it equals the answer."""

    spec = GameSpec(name="echo", answer_format="exact_match")

    def validate(self, proposal, checks):
        raise NotImplementedError

    def simulation(self, env):
        raise NotImplementedError

    def modules(self, env):
        raise NotImplementedError

    @classmethod
    def fake_player(cls):
        raise NotImplementedError

    def make_query(self, task, rng):
        return task.prompt

    def grade(self, task, query, reply):
        return reply == task.answer

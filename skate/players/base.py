"""The Player interface: every player both sets tasks and answers them."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from skate.runlog.records import SetterContext


class Player(ABC):
    """A participant in the game.

    ``set_task`` returns the game's proposal (what its setter writes), or a
    :class:`~skate.runlog.records.VoidProposal` when a model call failed. ``answer`` is shown several
    queries of one task at once (so a model client can send them together) and returns one reply
    per query: a value the game grades (an option's index, an answer's text, ...), ``None`` when
    the reply could not be read (a wrong answer), or :data:`~skate.runlog.records.VOID` when the model
    call failed (left out of p(correct)). Players never see a task's answer, only queries.
    """

    name: str
    io_bound: bool = False  # answers wait on the network: the engine may ask many at once

    @abstractmethod
    def set_task(self, ctx: SetterContext, rng: np.random.Generator) -> Any: ...

    @abstractmethod
    def answer(self, queries: Sequence[Any], rng: np.random.Generator) -> Sequence[Any]: ...

    def read_choices(self, queries: Sequence[Any], rng: np.random.Generator, min_mass: float = 0.5) -> list[Any] | None:
        """Its probability of picking each option of each multiple-choice query, read in one go
        (a :class:`skate.llm.choices.ChoiceRead` per query), or None where this player cannot say
        (the default: its p(correct) is then sampled)."""
        return None

    def describe(self) -> dict[str, Any]:
        """What the run record should say about this player."""
        return {"name": self.name, "kind": type(self).__name__}

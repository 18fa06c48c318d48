"""The Player interface: every player both sets tasks and answers them."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from skate.records import SetterContext


class Player(ABC):
    """A participant in the game.

    ``set_task`` returns a game-specific proposal (for COP a
    :class:`~skate.games.cop.COPProposal`). ``answer_batch`` is shown one task and several
    option sets at once (so a model client can send them together) and returns, per option set,
    the index of the chosen option, ``None`` when the reply named no option (a wrong answer), or
    :data:`~skate.records.VOID` when the model call failed (left out of p(correct)). ``set_task``
    may return a :class:`~skate.records.VoidProposal` when its model call failed.
    """

    name: str
    io_bound: bool = False  # answers wait on the network: the engine may ask many at once

    @abstractmethod
    def set_task(self, ctx: SetterContext, rng: np.random.Generator) -> Any: ...

    @abstractmethod
    def answer_batch(self, prompt: str, option_sets: list[list[str]],
                     rng: np.random.Generator) -> Sequence[int | None]: ...

    def describe(self) -> dict[str, Any]:
        """What the run record should say about this player."""
        return {"name": self.name, "kind": type(self).__name__}

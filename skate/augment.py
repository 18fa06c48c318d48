"""Augmentation strategies: how much game history enters a setter's context (SKATE App. E).

| strategy      | tasks shown                 | p(correct) shown            |
|---------------|-----------------------------|-----------------------------|
| no_info       | none                        | none                        |
| hist_tasks    | the setter's own            | none                        |
| hist_perf     | the setter's own            | the setter's own            |
| full_personal | the setter's own            | every player's              |
| full_context  | every player's              | every player's              |

Items are numbered in the order the tasks were set and then shuffled, so a setter sees varied
orderings but can still tell which came first.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from skate.errors import Settings
from skate.registry import Component
from skate.runlog.records import HistoryItem, Task


class Strategy(enum.StrEnum):
    no_info = "no_info"
    hist_tasks = "hist_tasks"
    hist_perf = "hist_perf"
    full_personal = "full_personal"
    full_context = "full_context"


@dataclass
class AugConfig(metaclass=Settings):
    _target_: str = "skate.augment.Augmentation"
    strategy: Strategy = Strategy.hist_perf
    max_items: int = 0  # keep at most this many (most recent) history items; 0 = no cap


@dataclass(frozen=True)
class ScoredTask:
    """A finished task with every player's p(correct), and the graded samples behind each
    (``counts``: player -> (correct, samples))."""

    task: Task
    p_correct: dict[str, float]
    counts: dict[str, tuple[float, int]] = field(default_factory=dict)  # a read's correct is p x n


class Augmentation(Component[AugConfig]):
    """The history a setter sees, from the ``aug`` settings (an :class:`AugConfig`, or its keys
    as keywords: ``Augmentation(strategy="no_info")``)."""

    schema = AugConfig  # the aug section has no registry: one strategy class for every option

    def __init__(self, settings: AugConfig | None = None, /, **values: Any) -> None:
        super().__init__(settings, **values)
        self.strategy = Strategy(self.settings.strategy)  # a strategy given by name: ValueError for none of them
        self.max_items = self.settings.max_items

    def history(self, player: str, archive: Sequence[ScoredTask], rng: np.random.Generator) -> tuple[HistoryItem, ...]:
        """The shuffled, numbered history that ``player`` may see when setting a task."""
        s = self.strategy
        if s is Strategy.no_info:
            return ()
        own_only = s is not Strategy.full_context
        items: list[HistoryItem] = []
        for number, scored in enumerate(archive, start=1):
            if own_only and scored.task.setter != player:
                continue
            if s is Strategy.hist_tasks:
                p = None
            elif s is Strategy.hist_perf:
                p = {player: scored.p_correct[player]} if player in scored.p_correct else {}
            else:
                p = dict(scored.p_correct)
            items.append(
                HistoryItem(
                    number=number,
                    round=scored.task.round,
                    setter=scored.task.setter,
                    prompt=scored.task.prompt,
                    p_correct=p,
                )
            )
        if self.max_items > 0:
            items = items[-self.max_items :]
        order = rng.permutation(len(items))
        return tuple(items[i] for i in order)

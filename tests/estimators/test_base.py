"""The sampler: it asks the game for each sample's query and has it grade each reply."""

from __future__ import annotations

import numpy as np
import pytest

from skate.estimators.base import Sampler
from skate.runlog.records import VOID
from tests.estimators.samples import TASK, EchoGame


def test_the_sampler_asks_the_game_for_queries_and_grades_each_reply():
    seen = []

    def answer(queries, rng):
        seen.append(list(queries))
        return ["42", "41", None, VOID, "42"]

    correct, unreadable, void = Sampler(EchoGame(), TASK, answer)(5, np.random.default_rng(0))
    assert (correct, unreadable, void) == (2, 1, 1)
    assert seen == [[TASK.prompt] * 5]


def test_a_player_that_returns_the_wrong_number_of_replies_is_an_error():
    with pytest.raises(RuntimeError, match="3 replies for 2 queries"):
        Sampler(EchoGame(), TASK, lambda q, rng: ["42"] * 3)(2, np.random.default_rng(0))

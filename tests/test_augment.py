"""What each augmentation strategy lets a setter see (SKATE App. E, Table 1)."""

from __future__ import annotations

import numpy as np
import pytest

from skate.augment import AugConfig, Augmentation, ScoredTask, Strategy
from skate.errors import SettingError
from skate.runlog.records import Task

PLAYERS = ("ann", "bob", "cat")


def archive() -> list[ScoredTask]:
    out = []
    for rnd in (1, 2, 3):
        for i, setter in enumerate(PLAYERS):
            task = Task(f"r{rnd}-{setter}", rnd, setter, f"print({rnd}{i})", "x", ())
            out.append(ScoredTask(task, {p: round(0.1 * (j + 1) + 0.01 * rnd, 2) for j, p in enumerate(PLAYERS)}))
    return out


def hist(strategy, player="bob", seed=0, **kw):
    return Augmentation(strategy=strategy, **kw).history(player, archive(), np.random.default_rng(seed))


def test_no_info_sees_nothing():
    assert hist("no_info") == ()


def test_hist_tasks_sees_own_tasks_without_scores():
    h = hist("hist_tasks")
    assert {x.setter for x in h} == {"bob"} and len(h) == 3
    assert all(x.p_correct is None for x in h)


def test_hist_perf_sees_own_tasks_with_own_score_only():
    h = hist("hist_perf")
    assert {x.setter for x in h} == {"bob"} and len(h) == 3
    assert all(set(x.p_correct) == {"bob"} for x in h)
    by_round = {x.round: x.p_correct["bob"] for x in h}
    assert by_round == {1: 0.21, 2: 0.22, 3: 0.23}


def test_full_personal_sees_own_tasks_with_every_score():
    h = hist("full_personal")
    assert {x.setter for x in h} == {"bob"} and len(h) == 3
    assert all(set(x.p_correct) == set(PLAYERS) for x in h)


def test_full_context_sees_every_task_with_every_score():
    h = hist("full_context")
    assert len(h) == 9 and {x.setter for x in h} == set(PLAYERS)
    assert all(set(x.p_correct) == set(PLAYERS) for x in h)


def test_items_are_numbered_in_setting_order_then_shuffled():
    h = hist("full_context", seed=3)
    numbers = [x.number for x in h]
    assert sorted(numbers) == list(range(1, 10))
    assert numbers != sorted(numbers)  # shuffled
    for x in h:  # the number still tells the order the task was set in
        assert x.prompt == archive()[x.number - 1].task.prompt
    # different draws give different orders, the same seed the same one
    assert [x.number for x in hist("full_context", seed=3)] == numbers
    assert any([x.number for x in hist("full_context", seed=s)] != numbers for s in range(4, 8))


def test_own_history_keeps_global_numbers():
    assert sorted(x.number for x in hist("hist_tasks", player="bob")) == [2, 5, 8]


def test_max_items_keeps_the_most_recent():
    h = hist("full_context", max_items=4)
    assert sorted(x.number for x in h) == [6, 7, 8, 9]


def test_unknown_strategy():
    with pytest.raises(ValueError):
        Augmentation(strategy="everything")


def test_built_from_the_aug_settings_or_their_keys():
    """``Augmentation(settings.aug)``, as a game builds it, or the schema's keys; a strategy given
    by name is the strategy."""
    built = Augmentation(AugConfig(strategy=Strategy.full_context, max_items=4))
    keyed = Augmentation(strategy="full_context", max_items=4)
    assert (built.strategy, built.max_items) == (keyed.strategy, keyed.max_items) == (Strategy.full_context, 4)
    assert Augmentation().strategy is AugConfig.strategy
    with pytest.raises(SettingError, match="max_item"):
        Augmentation(max_item=4)

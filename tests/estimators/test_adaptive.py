"""estimator=adaptive: samples go only where an answer can still change an unsure comparison of
the ranking so far, and a task that does not discriminate is dropped after a few samples."""

from __future__ import annotations

import numpy as np
import pytest

from skate.estimators.adaptive import Adaptive
from skate.estimators.base import TaskContext
from skate.ratings.base import OrderPair


class Player:
    """A sampler of known accuracy that counts what it was asked (``always``: every sample right
    (True) or wrong (False); ``dead``: every model call fails)."""

    def __init__(self, always: bool | None = None, p: float = 0.5, dead: bool = False) -> None:
        self.always, self.p, self.dead, self.asked = always, p, dead, 0

    def __call__(self, n: int, rng: np.random.Generator) -> tuple[int, int, int]:
        self.asked += n
        if self.dead:
            return 0, 0, n
        if self.always is not None:
            return (n if self.always else 0), 0, 0
        return int(rng.binomial(n, self.p)), 0, 0


def estimate(est, players, order=None, setter=None):
    names = tuple(players)
    ctx = TaskContext(players=names, setter=setter, order=tuple(order) if order is not None else None)
    rngs = [np.random.default_rng(i) for i in range(len(names))]
    return dict(zip(names, est.estimate_task(list(players.values()), rngs, context=ctx), strict=True))


def chain(names, confidences):
    return [OrderPair(a, b, c) for (a, b), c in zip(zip(names, names[1:], strict=False), confidences, strict=True)]


def test_with_no_ranking_yet_everyone_answers_the_first_samples():
    players = {n: Player(p=0.5) for n in "abcd"}
    out = estimate(Adaptive(first=2, max_samples=2), players)
    assert {n: e.n for n, e in out.items()} == dict.fromkeys("abcd", 2)
    assert not any(e.skipped for e in out.values())


def test_players_whose_place_is_sure_on_both_sides_are_not_asked():
    players = {n: Player(p=0.5) for n in "abcde"}
    # a > b sure, b ? c unsure, c > d sure, d ? e unsure
    order = chain("abcde", [0.999, 0.7, 0.999, 0.8])
    out = estimate(Adaptive(first=2, max_samples=2, confidence=0.95), players, order)
    assert {n for n, e in out.items() if not e.skipped} == {"b", "c", "d", "e"}
    assert out["a"].skipped and out["a"].n == 0 and players["a"].asked == 0
    assert out["a"].is_void and not out["a"].failed  # no p(correct), but no call failed either
    # the setter answers its own task when told to
    out = estimate(Adaptive(first=2, confidence=0.95, setter_answers=True), players, order, setter="a")
    assert not out["a"].skipped and out["a"].n == 2


def test_a_player_the_ranking_does_not_place_is_asked():
    players = {n: Player(p=0.5) for n in "abc"}
    out = estimate(Adaptive(first=1, confidence=0.9), players, chain("ab", [0.99]))
    assert out["c"].n == 1 and out["a"].skipped and out["b"].skipped


def test_a_pair_that_disagrees_is_topped_up_and_a_unanimous_one_is_not():
    players = {
        "a": Player(always=True),
        "b": Player(always=False),
        "c": Player(always=False),
        "d": Player(always=False),
    }
    out = estimate(Adaptive(first=2, step=2, max_samples=6, confidence=0.95), players, chain("abcd", [0.6, 0.6, 0.6]))
    # a and b disagree: both to 6; c and d are both wrong every time: they stop at 2
    assert {n: e.n for n, e in out.items()} == {"a": 6, "b": 6, "c": 2, "d": 2}
    assert out["a"].capped and not out["d"].capped


def test_a_task_everyone_passes_costs_only_the_first_samples():
    players = {n: Player(always=True) for n in "abcd"}
    out = estimate(Adaptive(first=2, step=2, max_samples=10), players)
    assert sum(p.asked for p in players.values()) == 8
    assert all(e.p == 1.0 for e in out.values())


def test_a_probe_that_agrees_drops_the_task_for_the_others():
    easy = {n: Player(always=True) for n in "abcdef"}
    out = estimate(Adaptive(first=1, max_samples=1, probe=3), easy, chain("abcdef", [0.6] * 5))
    asked = {n for n, p in easy.items() if p.asked}
    assert len(asked) == 3 and {"a", "f"} <= asked  # spread over the ranking: its ends included
    assert sum(e.skipped for e in out.values()) == 3
    mixed = {n: Player(always=n in "ab") for n in "abcdef"}
    estimate(Adaptive(first=1, max_samples=1, probe=3), mixed, chain("abcdef", [0.6] * 5))
    assert all(p.asked == 1 for p in mixed.values())  # the probe disagreed: everyone answers


def test_a_dead_model_is_not_asked_again():
    players = {"a": Player(dead=True), "b": Player(always=True)}
    out = estimate(Adaptive(first=2, step=2, max_samples=10), players)
    assert players["a"].asked == 2 and out["a"].failed and out["a"].void == 2
    assert out["b"].n == 2


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="max_samples"):
        Adaptive(first=3, max_samples=2)
    with pytest.raises(ValueError, match="estimator.confidence"):
        Adaptive(confidence=0.4)


def test_a_per_task_budget_gives_the_few_players_asked_more_samples_each():
    """A task costs its setter's attempts however few answer it: per_task shares a budget among
    the players asked (at least `first` each)."""
    players = {n: Player(p=0.5) for n in "abcdef"}
    # only c and d are unsure of each other: 6 samples each
    out = estimate(
        Adaptive(first=1, max_samples=1, per_task=12), players, chain("abcdef", [0.999, 0.999, 0.7, 0.999, 0.999])
    )
    assert {n: e.n for n, e in out.items() if not e.skipped} == {"c": 6, "d": 6}
    # everyone unsure: 12 // 6 = 2 each
    players = {n: Player(p=0.5) for n in "abcdef"}
    out = estimate(Adaptive(first=1, max_samples=1, per_task=12), players)
    assert {e.n for e in out.values()} == {2}


def test_built_alone_with_no_confidence_it_takes_the_default():
    """A game's confidence is set when its settings are composed (stop.settled's, else the default);
    an estimator built alone with none takes the default."""
    from skate.estimators.adaptive import UNSURE_BELOW

    assert Adaptive().confidence == UNSURE_BELOW and Adaptive(confidence=0.8).confidence == 0.8

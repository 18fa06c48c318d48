"""p(correct) estimators: Algorithm 1's stopping rule, the cap, fixed-N; the sampler that
grades samples through a game."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skate.games.base import Game, GameSpec
from skate.runlog.records import VOID, Task
from skate.estimators import Algorithm1, FixedN, Sampler

TASK = Task("r001-p", 1, "p", "what is 6 x 7?", "42")


class Scripted:
    """A sampler that returns a fixed list of right/wrong verdicts and records its batch sizes."""

    def __init__(self, verdicts):
        self.verdicts = list(verdicts)
        self.used = 0
        self.batches: list[int] = []

    def __call__(self, n, rng):
        self.batches.append(n)
        got = self.verdicts[self.used:self.used + n]
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


@pytest.mark.parametrize("always", [True, False])
def test_certain_answers_stop_after_first_batch(always):
    ans = Scripted([always] * 1000)
    est = Algorithm1(sigma_star=0.05, n_step=10, max_samples=200).estimate(ans, np.random.default_rng(1))
    assert est.n == 10 and est.p == (1.0 if always else 0.0) and est.std == 0.0 and not est.capped
    assert ans.batches == [10]


def test_stops_at_first_batch_where_standard_error_drops_below_sigma_star():
    rng = np.random.default_rng(7)
    verdicts = list(rng.random(1000) < 0.6)
    ans = Scripted(verdicts)
    est = Algorithm1(sigma_star=0.05, n_step=10, max_samples=500).estimate(ans, np.random.default_rng(2))
    # recompute the rule by hand at every batch boundary
    expected_n = None
    for n in range(10, 501, 10):
        p = sum(verdicts[:n]) / n
        if math.sqrt(p * (1 - p) / n) < 0.05:
            expected_n = n
            break
    assert est.n == expected_n and est.correct == sum(verdicts[:expected_n])
    assert est.p == pytest.approx(est.correct / est.n) and est.std < 0.05
    assert 80 <= est.n <= 110  # p about 0.6 needs about 96 samples


def test_cap_stops_sampling_and_is_recorded():
    ans = Scripted([True, False] * 500)
    est = Algorithm1(sigma_star=0.05, n_step=10, max_samples=30).estimate(ans, np.random.default_rng(3))
    assert est.n == 30 and est.capped and est.p == pytest.approx(0.5)
    assert est.std > 0.05


def test_cap_not_a_multiple_of_step():
    ans = Scripted([True, False] * 500)
    est = Algorithm1(sigma_star=0.01, n_step=10, max_samples=25).estimate(ans, np.random.default_rng(3))
    assert est.n == 25 and ans.batches == [10, 10, 5]


def test_fixed_n_draws_exactly_n():
    ans = Scripted([True, True, False, True] * 50)
    est = FixedN(n=20).estimate(ans, np.random.default_rng(4))
    assert est.n == 20 and est.correct == 15 and est.p == 0.75 and ans.batches == [20]


def test_unparsable_replies_count_as_wrong():
    never_parses = Sampler(EchoGame(), TASK, lambda queries, rng: [None] * len(queries))
    est = FixedN(n=12).estimate(never_parses, np.random.default_rng(5))
    assert est.p == 0.0 and est.unparsable == 12


def test_void_samples_are_drawn_again_but_never_counted():
    flaky = Sampler(EchoGame(), TASK, lambda queries, rng: [VOID if rng.random() < 0.5 else "42" for _ in queries])
    est = Algorithm1(n_step=10, max_samples=60).estimate(flaky, np.random.default_rng(3))
    assert est.void > 0 and est.p == 1.0 and est.correct == est.n
    dead = Sampler(EchoGame(), TASK, lambda queries, rng: [VOID] * len(queries))
    est = Algorithm1().estimate(dead, np.random.default_rng(3))
    assert est.is_void and est.void == 10  # a whole void batch ends the estimate


def test_same_rng_same_estimate():
    coin = Sampler(EchoGame(), TASK, lambda queries, rng: [str(40 + int(rng.integers(4))) for _ in queries])
    a = Algorithm1().estimate(coin, np.random.default_rng(9))
    b = Algorithm1().estimate(coin, np.random.default_rng(9))
    assert a == b

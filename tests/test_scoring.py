"""p(correct) estimators: option sets, Algorithm 1's stopping rule, the cap, fixed-N."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from skate.records import Task
from skate.scoring import Algorithm1, FixedN, draw_option_sets

TASK = Task("r001-p", 1, "p", "print(42)", "42", tuple(str(i) for i in range(1, 10)))


class Scripted:
    """Answers from a fixed list of right/wrong verdicts and records every option set it saw."""

    def __init__(self, verdicts):
        self.verdicts = list(verdicts)
        self.seen: list[list[str]] = []
        self.batches: list[int] = []

    def __call__(self, prompt, option_sets, rng):
        self.batches.append(len(option_sets))
        picks = []
        for opts in option_sets:
            self.seen.append(opts)
            right = self.verdicts[len(self.seen) - 1]
            idx = opts.index("42")
            picks.append(idx if right else (idx + 1) % len(opts))
        return picks


def test_option_sets_hold_the_answer_and_three_distinct_distractors():
    rng = np.random.default_rng(0)
    sets, where = draw_option_sets(TASK, 400, 4, rng)
    for opts, w in zip(sets, where):
        assert len(opts) == 4 and opts[w] == "42" and opts.count("42") == 1
        assert len(set(opts)) == 4 and set(opts) - {"42"} <= set(TASK.distractors)
    # shuffled: the answer lands in every position, roughly evenly
    counts = Counter(where)
    assert set(counts) == {0, 1, 2, 3} and min(counts.values()) > 60
    # every distractor gets used
    assert set().union(*map(set, sets)) == {"42", *TASK.distractors}


@pytest.mark.parametrize("always", [True, False])
def test_certain_answers_stop_after_first_batch(always):
    ans = Scripted([always] * 1000)
    est = Algorithm1(sigma_star=0.05, n_step=10, max_samples=200).estimate(ans, TASK, 4, np.random.default_rng(1))
    assert est.n == 10 and est.p == (1.0 if always else 0.0) and est.std == 0.0 and not est.capped
    assert ans.batches == [10]


def test_stops_at_first_batch_where_standard_error_drops_below_sigma_star():
    rng = np.random.default_rng(7)
    verdicts = list(rng.random(1000) < 0.6)
    ans = Scripted(verdicts)
    est = Algorithm1(sigma_star=0.05, n_step=10, max_samples=500).estimate(ans, TASK, 4, np.random.default_rng(2))
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
    est = Algorithm1(sigma_star=0.05, n_step=10, max_samples=30).estimate(ans, TASK, 4, np.random.default_rng(3))
    assert est.n == 30 and est.capped and est.p == pytest.approx(0.5)
    assert est.std > 0.05


def test_cap_not_a_multiple_of_step():
    ans = Scripted([True, False] * 500)
    est = Algorithm1(sigma_star=0.01, n_step=10, max_samples=25).estimate(ans, TASK, 4, np.random.default_rng(3))
    assert est.n == 25 and ans.batches == [10, 10, 5]


def test_fixed_n_draws_exactly_n():
    ans = Scripted([True, True, False, True] * 50)
    est = FixedN(n=20).estimate(ans, TASK, 4, np.random.default_rng(4))
    assert est.n == 20 and est.correct == 15 and est.p == 0.75 and ans.batches == [20]


def test_unparsable_replies_count_as_wrong():
    def never_parses(prompt, option_sets, rng):
        return [None] * len(option_sets)

    est = FixedN(n=12).estimate(never_parses, TASK, 4, np.random.default_rng(5))
    assert est.p == 0.0 and est.unparsable == 12


def test_same_rng_same_estimate():
    def coin(prompt, option_sets, rng):
        return [int(rng.integers(4)) for _ in option_sets]

    a = Algorithm1().estimate(coin, TASK, 4, np.random.default_rng(9))
    b = Algorithm1().estimate(coin, TASK, 4, np.random.default_rng(9))
    assert a == b

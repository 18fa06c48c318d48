"""Algorithm 1's stopping rule and its cap, on scripted and game-graded samples."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skate.estimators.algorithm1 import Algorithm1
from skate.estimators.base import Sampler
from skate.runlog.records import VOID
from tests.estimators.samples import TASK, EchoGame, Scripted


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

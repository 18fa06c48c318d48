"""Fixed N: exactly n samples; replies that cannot be read count as wrong."""

from __future__ import annotations

import numpy as np

from skate.estimators.base import Sampler
from skate.estimators.fixed_n import FixedN
from tests.estimators.samples import TASK, EchoGame, Scripted


def test_fixed_n_draws_exactly_n():
    ans = Scripted([True, True, False, True] * 50)
    est = FixedN(n=20).estimate(ans, np.random.default_rng(4))
    assert est.n == 20 and est.correct == 15 and est.p == 0.75 and ans.batches == [20]


def test_unparsable_replies_count_as_wrong():
    never_parses = Sampler(EchoGame(), TASK, lambda queries, rng: [None] * len(queries))
    est = FixedN(n=12).estimate(never_parses, np.random.default_rng(5))
    assert est.p == 0.0 and est.unparsable == 12

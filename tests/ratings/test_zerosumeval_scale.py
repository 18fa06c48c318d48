"""Bradley–Terry on ZeroSumEval's scale (1000 + 100 × log-10 odds), with the full fit or the
bootstrap median as the point estimate, checked by hand on tiny win matrices."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skate.ratings.bradley_terry import BradleyTerryRating, zerosumeval_scale
from tests.ratings.test_ratings_backends import feed

THREE_TO_ONE = [("t1", "a", "b", 1), ("t2", "a", "b", 1), ("t3", "a", "b", 1), ("t4", "a", "b", 0)]
CYCLE = [
    ("t1", "a", "b", 1),
    ("t2", "b", "c", 1),
    ("t3", "a", "c", 1),
    ("t4", "c", "a", 0.5),
    ("t5", "a", "b", 0),
    ("t6", "b", "c", 1),
    ("t7", "a", "c", 0.5),
]


def test_the_scale_by_hand():
    # a beats b 3 times to 1: θ_a − θ_b = ln 3, centred: θ_a = ln 3 / 2, so on ZeroSumEval's
    # scale a = 1000 + 100 × log10(3) / 2 and b = 1000 − 100 × log10(3) / 2.
    rows = feed(BradleyTerryRating(alpha=1e-9, bootstrap=50, scale="zerosumeval"), ["a", "b"], THREE_TO_ONE)
    assert rows["a"].score == pytest.approx(1000 + 50 * math.log10(3), abs=1e-4)
    assert rows["b"].score == pytest.approx(1000 - 50 * math.log10(3), abs=1e-4)
    # 100 points = odds 10 to 1
    diff = rows["a"].score - rows["b"].score
    assert 1 / (1 + 10 ** (-diff / 100)) == pytest.approx(0.75, abs=1e-6)


@pytest.mark.parametrize("point", ["fit", "median"])
def test_the_scale_is_exactly_the_linear_map_of_theta(point):
    logit = feed(BradleyTerryRating(bootstrap=200, point=point), ["a", "b", "c"], CYCLE)
    zse = feed(BradleyTerryRating(bootstrap=200, point=point, scale="zerosumeval"), ["a", "b", "c"], CYCLE)
    for n in "abc":
        for key in ("score", "lo", "hi"):
            assert getattr(zse[n], key) == pytest.approx(
                1000 + 100 * getattr(logit[n], key) / math.log(10), rel=0, abs=1e-9
            )
        assert zse[n].rank == logit[n].rank
    assert zerosumeval_scale(np.array([0.0, math.log(10)])) == pytest.approx([1000.0, 1100.0])


def test_the_median_point_is_the_bootstrap_median_and_lies_in_the_interval():
    r = BradleyTerryRating(bootstrap=300, point="median", scale="zerosumeval", seed=4)
    rows = feed(r, ["a", "b", "c"], CYCLE)
    fit = feed(BradleyTerryRating(bootstrap=300, scale="zerosumeval", seed=4), ["a", "b", "c"], CYCLE)
    per_task = r.task_matrices(["a", "b", "c"])
    boot = zerosumeval_scale(r.bootstrap(per_task, 3, np.zeros(3))[0])
    for i, n in enumerate("abc"):
        assert rows[n].lo <= rows[n].score <= rows[n].hi
        assert (rows[n].lo, rows[n].hi) == (fit[n].lo, fit[n].hi)  # same resamples, same interval
        assert rows[n].score == pytest.approx(float(np.median(boot[:, i])), abs=1e-3)
    assert any(rows[n].score != pytest.approx(fit[n].score) for n in "abc")


def test_defaults_are_todays_and_bad_values_are_named():
    r = BradleyTerryRating()
    assert (r.scale, r.point) == ("logit", "fit")
    with pytest.raises(ValueError, match="rating.scale"):
        BradleyTerryRating(scale="elo")
    with pytest.raises(ValueError, match="rating.scale / rating.point"):
        BradleyTerryRating(point="mean")

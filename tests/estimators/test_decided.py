"""skate's `decided` estimator: players stop once their outcomes are settled."""

from __future__ import annotations

import numpy as np
import pytest

from skate.estimators.base import wilson
from skate.estimators.decided import Decided
from skate.runlog.files import read_events
from skate.runner import run_game
from tests.test_runner_game import config


def always(right: bool):
    def sample(n, rng):
        return (n if right else 0), 0, 0

    return sample


def coin(n, rng):
    """Right a quarter of the time, like a blind guess among four options."""
    return int((rng.random(n) < 0.25).sum()), 0, 0


def test_wilson_interval_by_hand():
    lo, hi = wilson(5, 10, z=1.959964)
    assert (lo, hi) == (pytest.approx(0.2366, abs=1e-4), pytest.approx(0.7634, abs=1e-4))
    assert wilson(0, 0) == (0.0, 1.0)


def test_clearly_separated_players_stop_after_one_batch():
    est = Decided(n_step=10, confidence=0.8, max_samples=40)
    a, b = est.estimate_task([always(True), always(False)], [np.random.default_rng(i) for i in (1, 2)])
    assert (a.n, a.p, b.n, b.p) == (10, 1.0, 10, 0.0)


def test_close_players_keep_sampling_until_the_cap():
    est = Decided(n_step=10, confidence=0.8, max_samples=40)
    a, b = est.estimate_task([coin, coin], [np.random.default_rng(i) for i in (1, 2)])
    assert a.n == b.n == 40 and a.capped and b.capped


def test_a_settled_player_stops_while_an_unsettled_one_goes_on():
    # c is far from a and b, a and b are close: c settles at once, a and b keep going.
    est = Decided(n_step=10, confidence=0.8, max_samples=60)
    a, b, c = est.estimate_task([coin, coin, always(True)], [np.random.default_rng(i) for i in (1, 2, 3)])
    assert c.n < a.n and c.n < b.n


def test_absolute_rule_stops_once_clear_of_the_threshold():
    est = Decided(n_step=10, confidence=0.8, max_samples=200, outcome="absolute", p_thresh=0.55)
    (a,) = est.estimate_task([always(True)], [np.random.default_rng(0)])
    assert a.n == 10


def test_a_void_batch_ends_the_estimate():
    est = Decided()
    (a,) = est.estimate_task([lambda n, rng: (0, 0, n)], [np.random.default_rng(0)])
    assert a.n == 0 and a.void == 10 and a.is_void


def test_a_game_with_the_decided_estimator_spends_fewer_samples_and_ranks_right(tmp_path):
    alg = run_game(config({"seed": 4, "game.rounds": 6}), tmp_path / "alg")
    dec = run_game(config({"seed": 4, "game.rounds": 6}, estimator="decided"), tmp_path / "dec")
    assert dec.summary.samples < 0.75 * alg.summary.samples
    assert [r["player"] for r in dec.table] == ["hi", "mid", "lo"]
    assert all(e["n"] >= 10 for e in read_events(tmp_path / "dec") if e["event"] == "estimate")


def test_built_alone_it_decides_the_rule_the_rating_s_schema_sets_by_default():
    """Its outcome rule follows the rating's keys (${rating.outcome}, ...): resolved when a game's
    settings are composed; one built alone takes the rating schema's defaults, and keys given win."""
    from skate.ratings.config import OutcomeRuleConfig

    default, rule = OutcomeRuleConfig(), Decided().rule
    assert (rule.outcome, rule.draw_margin, rule.p_thresh) == (default.outcome, default.draw_margin, default.p_thresh)
    rule = Decided(outcome="absolute", draw_margin=0.1, p_thresh=0.7).rule
    assert (rule.outcome, rule.draw_margin, rule.p_thresh) == ("absolute", 0.1, 0.7)

"""The outcome rule: both variants, one outcome per unique pair of players per task, and when
intervals of p(correct) settle an outcome (what the decided estimator stops on)."""

from __future__ import annotations

import pytest

from skate.ratings.outcomes import PairRule

RELATIVE = PairRule("relative", draw_margin=0.05)
ABSOLUTE = PairRule("absolute", p_thresh=0.55)


@pytest.mark.parametrize(
    ("p_a", "p_b", "expected"),
    [
        (0.80, 0.60, 1.0),
        (0.60, 0.80, 0.0),
        (0.50, 0.54, 0.5),  # |diff| < 0.05: draw
        (0.50, 0.56, 0.0),  # |diff| > 0.05: higher wins
        (1.00, 1.00, 0.5),
        (0.00, 0.10, 0.0),
    ],
)
def test_relative_rule(p_a, p_b, expected):
    assert RELATIVE.result(p_a, p_b) == expected


@pytest.mark.parametrize(
    ("p_a", "p_b", "expected"),
    [
        (0.80, 0.60, 0.5),  # both pass: draw, however far apart
        (0.10, 0.50, 0.5),  # both fail: draw
        (0.55, 0.54, 1.0),  # at the threshold passes
        (0.30, 0.90, 0.0),
    ],
)
def test_absolute_rule(p_a, p_b, expected):
    assert ABSOLUTE.result(p_a, p_b) == expected


def test_rules_disagree_where_they_should():
    assert RELATIVE.result(0.9, 0.6) == 1.0
    assert ABSOLUTE.result(0.9, 0.6) == 0.5


def test_one_outcome_per_unique_pair_in_roster_order():
    p = {"c": 0.2, "a": 0.9, "b": 0.5}
    outs = RELATIVE.task_outcomes("t1", p, order=["a", "b", "c"])
    assert [(o.a, o.b, o.result) for o in outs] == [("a", "b", 1.0), ("a", "c", 1.0), ("b", "c", 1.0)]
    assert all(o.task_id == "t1" for o in outs)


def test_players_without_a_score_are_skipped():
    outs = ABSOLUTE.task_outcomes("t", {"a": 0.5, "c": 0.5}, order=["a", "b", "c"])
    assert [(o.a, o.b, o.drawn) for o in outs] == [("a", "c", True)]


def test_unknown_rule_is_an_error():
    with pytest.raises(ValueError):
        PairRule("sideways")


@pytest.mark.parametrize(
    ("own", "others", "settled"),
    [
        ((0.8, 0.9), [(0.1, 0.2)], True),  # a sure win
        ((0.1, 0.2), [(0.8, 0.9)], True),  # a sure loss
        ((0.50, 0.52), [(0.50, 0.53)], True),  # a sure draw: every pair of values is closer than 0.05
        ((0.4, 0.7), [(0.5, 0.6)], False),  # could go any way
        ((0.8, 0.9), [(0.1, 0.2), (0.7, 0.85)], False),  # settled against one rival, not the other
    ],
)
def test_relative_outcomes_are_settled_only_when_every_value_in_the_intervals_agrees(own, others, settled):
    assert RELATIVE.settled(own, others) is settled
    # brute force over a grid of values inside the intervals: the same result everywhere iff settled
    grid = [i / 100 for i in range(101)]
    agree = all(
        len({RELATIVE.result(a, b) for a in grid if own[0] <= a <= own[1] for b in grid if o[0] <= b <= o[1]}) == 1
        for o in others
    )
    assert agree is settled


@pytest.mark.parametrize(("own", "settled"), [((0.6, 0.9), True), ((0.1, 0.5), True), ((0.5, 0.6), False)])
def test_absolute_outcomes_are_settled_by_the_player_s_own_verdict(own, settled):
    assert ABSOLUTE.settled(own, [(0.0, 1.0)]) is settled

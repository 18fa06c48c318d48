"""Both outcome rules, one outcome per unique pair of players per task."""

from __future__ import annotations

import pytest

from skate.ratings.outcomes import pair_result, task_outcomes


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
    assert pair_result(p_a, p_b, "relative", draw_margin=0.05) == expected


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
    assert pair_result(p_a, p_b, "absolute", p_thresh=0.55) == expected


def test_rules_disagree_where_they_should():
    assert pair_result(0.9, 0.6, "relative") == 1.0
    assert pair_result(0.9, 0.6, "absolute") == 0.5


def test_one_outcome_per_unique_pair_in_roster_order():
    p = {"c": 0.2, "a": 0.9, "b": 0.5}
    outs = task_outcomes("t1", p, order=["a", "b", "c"], rule="relative")
    assert [(o.a, o.b, o.result) for o in outs] == [("a", "b", 1.0), ("a", "c", 1.0), ("b", "c", 1.0)]
    assert all(o.task_id == "t1" for o in outs)


def test_players_without_a_score_are_skipped():
    outs = task_outcomes("t", {"a": 0.5, "c": 0.5}, order=["a", "b", "c"], rule="absolute")
    assert [(o.a, o.b, o.drawn) for o in outs] == [("a", "c", True)]


def test_unknown_rule_is_an_error():
    with pytest.raises(ValueError):
        pair_result(0.5, 0.5, "sideways")

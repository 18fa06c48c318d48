"""Reading an option's probability from a reply's token log-probabilities (skate.llm.choices)."""

from __future__ import annotations

import math

import pytest

from skate.llm.choices import label_of, option_probabilities

LETTERS = ("A", "B", "C", "D")


def tok(token: str, top: dict[str, float]) -> dict:
    """A generated token whose alternatives have these probabilities."""
    return {
        "token": token,
        "logprob": math.log(top.get(token, 1e-9)),
        "top": [[k, math.log(v)] for k, v in top.items()],
    }


def test_each_label_gets_its_probability_at_temperature_one():
    got = option_probabilities([tok("B", {"A": 0.1, "B": 0.6, "C": 0.2, "D": 0.1})], LETTERS, 1.0)
    assert got.ok and got.probs == pytest.approx((0.1, 0.6, 0.2, 0.1))


def test_temperature_sharpens_as_sampling_at_it_would():
    p = {"A": 0.1, "B": 0.6, "C": 0.2, "D": 0.1}
    got = option_probabilities([tok("B", p)], LETTERS, 0.5)
    z = sum(v**2 for v in p.values())
    assert got.probs == pytest.approx(tuple(p[k] ** 2 / z for k in LETTERS))
    assert option_probabilities([tok("B", p)], LETTERS, 0.0).probs == (0.0, 1.0, 0.0, 0.0)


def test_forms_of_a_label_are_summed_and_lower_case_is_not_a_label():
    top = {"A": 0.3, " A": 0.2, "B.": 0.2, "(C": 0.1, "D)": 0.1, "b": 0.05, "The": 0.05}
    got = option_probabilities([tok("A", top)], LETTERS, 1.0)
    assert got.probs == pytest.approx(tuple(x / 0.9 for x in (0.5, 0.2, 0.1, 0.1)))
    assert label_of(" **B**", LETTERS) == "B" and label_of("b", LETTERS) is None and label_of("BA", LETTERS) is None


def test_opening_marks_before_the_label_are_skipped():
    tokens = [tok("**", {"**": 0.9, "A": 0.1}), tok("C", {"A": 0.25, "B": 0.25, "C": 0.4, "D": 0.1})]
    assert option_probabilities(tokens, LETTERS, 1.0).probs == pytest.approx((0.25, 0.25, 0.4, 0.1))


@pytest.mark.parametrize(
    "tokens, why",
    [
        (None, "no log-probabilities"),
        ([], "no log-probabilities"),
        ([tok("A", {"A": 0.5, "B": 0.3, "C": 0.2})], "option D is not among the 3 alternatives"),
        ([tok("The", {"The": 0.8, "A": 0.05, "B": 0.05, "C": 0.05, "D": 0.05})], "does not start with a label"),
        ([{"token": "A", "logprob": -0.1, "top": []}], "no alternatives"),
        ([tok(" ", {" ": 1.0})], "held no label"),
    ],
)
def test_what_cannot_be_read_says_why(tokens, why):
    got = option_probabilities(tokens, LETTERS, 0.7)
    assert not got.ok and why in got.why


def test_numbered_options_read_like_letters():
    got = option_probabilities([tok("2", {"1": 0.2, "2": 0.5, "3": 0.2, "4": 0.1})], ("1", "2", "3", "4"), 1.0)
    assert got.probs == pytest.approx((0.2, 0.5, 0.2, 0.1))

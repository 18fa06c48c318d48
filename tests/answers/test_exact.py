"""Free-form numeric answers: every normalising rule, and the near misses that must not match."""

from __future__ import annotations

import pytest

from skate.answers.exact import canonical_number, grade_number, normalize_number


@pytest.mark.parametrize(
    ("reply", "number"),
    [
        ("42", "42"),
        ("  42\n", "42"),  # whitespace
        ("1,234", "1234"),  # thousands separators
        ("1,234,567", "1234567"),
        ("1\u202f234", "1234"),
        ("1\u00a0234", "1234"),
        ("1_234", "1234"),
        ("1'234", "1234"),
        ("42.0", "42"),
        ("42.00", "42"),
        ("1,234.0", "1234"),  # a fractional part of zeros
        ("-5", "-5"),
        ("\u22125", "-5"),
        ("+7", "7"),
        ("-0", "0"),  # signs, the Unicode minus
        ("12.5", "12.5"),
        ("12.50", "12.5"),
        ("\\boxed{42}", "42"),
        ("so \\boxed{1,234}.", "1234"),
        ("\\boxed{ 7 }", "7"),
        ("The answer is 42.", "42"),
        ("the answer is -5", "-5"),
        ("Answer: 17", "17"),
        ("Final answer = 9", "9"),
        ("**Answer:** **17**", "17"),
        ("The answer is $1,200.", "1200"),
        ("3 + 4 = 7, so the answer is 7", "7"),  # the phrase decides among several numbers
        ("I first got 7. The answer is 8.", "8"),  # the last such phrase
        ("\\boxed{3} and later \\boxed{4}", "4"),  # the last box
        ("42 apples", "42"),
        ("$1,200", "1200"),
        ("42.", "42"),  # one number in the reply
        ("\\boxed{\\frac{1}{2}}", "0.5"),  # a fraction is its value (tests/answers/test_exact_fractions.py)
    ],
)
def test_readable_replies(reply, number):
    assert normalize_number(reply) == number


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "   ",
        None,
        "no idea",
        "12 or 120",  # no number, or two without saying which
        "x-5",
        "v2",
        "1.2.3",  # not numbers of their own
        "\\boxed{1 2}",  # a box with two numbers in it
    ],
)
def test_unreadable_replies(reply):
    assert normalize_number(reply) is None


@pytest.mark.parametrize(
    ("answer", "reply"),
    [
        ("12", "120"),
        ("120", "12"),
        ("5", "-5"),
        ("-5", "5"),
        ("12", "12.5"),
        ("12", "1,2"),
        ("1234", "123"),
        ("7", "The answer is 17."),
        ("7", "\\boxed{77}"),
        ("42", "4 2"),
    ],
)
def test_near_misses_do_not_match(answer, reply):
    assert not grade_number(answer, reply)


@pytest.mark.parametrize(
    "reply",
    [
        "1234",
        " 1,234 ",
        "1234.0",
        "\\boxed{1,234}",
        "The answer is 1 234.".replace(" 234", "\u202f234"),
        "So the total comes to 1,234.",
    ],
)
def test_every_form_of_the_same_number_matches(reply):
    assert grade_number("1234", reply)


def test_canonical_numbers():
    assert canonical_number("007") == "7" and canonical_number("1,000.000") == "1000"
    assert canonical_number("0.10") == "0.1" and canonical_number("abc") is None


@pytest.mark.parametrize(
    "reply, value",
    [
        ("The answer is 1/3 of 12", None),  # a part of the calculation, not the answer
        ("The answer is 1/3 of 12 = 4", "4"),  # ... whose result the same line gives
        ("The answer is 50% of 8", None),
        ("The answer is 50% of 8 = 4.", "4"),
        ("answer: 3 out of 4", None),
        ("The answer is 4 of the apples", "4"),  # "of" and no number: the answer stands
        ("The answer is 1/3.", "1/3"),
    ],
)
def test_a_fraction_of_a_number_after_the_cue_is_a_calculation(reply, value):
    assert normalize_number(reply) == value

"""Fractions, ratios and expressions in free-form numeric answers (issue 24): a plain fraction of
two integers is read as its exact value, any other calculation is unreadable, and no reply is
ever read as a part of what it wrote (the numerator of 5/2, the first bound of 3-5)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from skate.answers.exact import canonical_value, grade_number, normalize_number

READABLE = [
    # plain fractions of two integers: their exact value
    ("5/2", "2.5"),
    ("answer is 5/2", "2.5"),
    ("The answer is 5/2.", "2.5"),
    ("10/2", "5"),
    ("10 / 2", "5"),
    ("\\frac{10}{2}", "5"),
    ("\\dfrac{10}{2}", "5"),
    ("\\tfrac{10}{2}", "5"),
    ("\\frac {10} {2}", "5"),
    ("\\boxed{\\frac{10}{2}}", "5"),
    ("\\boxed{\\dfrac{5}{2}}", "2.5"),
    ("$\\frac{5}{2}$", "2.5"),
    ("\\(\\frac{5}{2}\\)", "2.5"),
    ("The answer is $\\frac{5}{2}$.", "2.5"),
    ("-5/2", "-2.5"),
    ("\u22125/2", "-2.5"),
    ("5/-2", "-2.5"),
    ("-\\frac{10}{4}", "-2.5"),
    ("\\frac{-10}{4}", "-2.5"),
    ("answer = -\\frac{1}{2}", "-0.5"),
    ("0/5", "0"),
    ("-0/5", "0"),
    ("1/8", "0.125"),
    ("1/3", "1/3"),
    ("2/6", "1/3"),
    ("-2/6", "-1/3"),
    ("\\boxed{\\frac{4}{6}}", "2/3"),
    ("1,000/4", "250"),
    ("So each gets 10/2 apples.", "5"),
    # an equation: its last side
    ("5/2 = 2.5 so the answer is 2.5", "2.5"),
    ("5/2 = 2.5", "2.5"),
    ("The answer is 10/2 = 5", "5"),
    ("The answer is 2 + 3 = 5.", "5"),
    ("3 + 4 = 7", "7"),
    ("\\boxed{x = 5}", "5"),
    ("\\boxed{10/2=5}", "5"),
    ("Total = 3 * 4 = 12", "12"),
    # units, formatting and punctuation around a number
    ("5%", "5"),
    ("The answer is 5%.", "5"),
    ("The answer is 42!", "42"),
    ("\\boxed{5 \\text{ apples}}", "5"),
    ("\\boxed{\\text{42}}", "42"),
    ("\\boxed{\\mathbf{42}}", "42"),
    ("\\left(42\\right)", "42"),
    ("The answer is \\(42\\)", "42"),
    ("$\\boxed{42}$", "42"),
    ("The total is **42**.", "42"),
    ("- 42", "42"),
    ("* 42", "42"),
    ("Result: 17", "17"),
    ("The answer is 5 - that is final", "5"),
    ("The answer is 5 - (rounded)", "5"),
    ("The answer is 5\n- 3 reasons", "5"),
    ("The answer is 12, because 3*4=12", "12"),
    ("x_1 = 5", "5"),
    ("\\therefore 42", "42"),
    # what worked before keeps working
    ("the answer is \u22125", "-5"),
    ("1,234.0", "1234"),
    ("The answer is 1\u202f234.", "1234"),
    ("I first got 7. The answer is 8.", "8"),
    ("\\boxed{3} and later \\boxed{4}", "4"),
]

UNREADABLE = [
    # calculations left undone
    "2+3",
    "answer is 2+3",
    "5*1",
    "5 * 1",
    "2**3",
    "2^3",
    "2^{3}",
    "answer is 2^3",
    "2 \\times 3",
    "5 \\cdot 1",
    "2 × 3",
    "10 ÷ 2",
    "10 \\div 2",
    "5 / 2 + 1",
    "1/2/3",
    "0.1 + 0.2",
    "(2+3)*5",
    "5*(2)",
    "2(3)",
    "5 - (3+2)",
    # ratios, ranges and dates
    "5:2",
    "The answer is 5:2",
    "3-5",
    "The answer is 3-5",
    "3\u20135",
    "the answer is 3 to 5",
    "The answer is 7 or 8",
    "2024-05-01",
    "The answer is 2024-05-01",
    "2024/05/01",
    "05/01",
    # fractions that are not two integers, or have no value
    "5/0",
    "\\frac{5}{0}",
    "2.5/0.5",
    "5/2.0",
    "\\frac{1.5}{3}",
    "I get \\frac{\\sqrt{3}}{2}",
    "The answer is \\frac{\\sqrt{3}}{2}",
    # mixed numbers and numbers side by side
    "2 1/2",
    "the answer is 2 1/2",
    "\\boxed{2 1/2}",
    "\\boxed{2\\frac{1}{2}}",
    "The answer is 2\\frac{1}{2}",
    "The answer is 4 2",
    "The answer is 12,5",
    "answer is 5 x 3",
    "1/2, 3/4",
    # roots, functions and signs that are not the number's
    "sqrt(25)",
    "The answer is sqrt(25)",
    "\\sqrt{25}",
    "\\boxed{\\sqrt{25}}",
    "\\sqrt 25",
    "√25",
    "f(3)",
    "\\log 8",
    "\\pm 5",
    "±5",
    "is - 5",
    "x + 5",
    "x-5",
    # several answers without saying which
    "10/2 and 3",
    "12 apples and 3 pears",
    "3/4 of 8 is 6",
    "5/2 or 3",
]


@pytest.mark.parametrize(("reply", "number"), READABLE)
def test_fractions_and_equations_are_read_as_their_exact_value(reply, number):
    assert normalize_number(reply) == number


@pytest.mark.parametrize("reply", UNREADABLE)
def test_calculations_ratios_and_ranges_are_unreadable(reply):
    assert normalize_number(reply) is None


@pytest.mark.parametrize(("reply", "_"), READABLE)
def test_a_canonical_form_reads_back_as_itself(reply, _):
    """The LLM answerer stores the normalised reply, which the game then grades again."""
    canonical = normalize_number(reply)
    assert normalize_number(canonical) == canonical and grade_number(canonical, reply)


@pytest.mark.parametrize(
    ("answer", "reply", "match"),
    [
        ("5", "answer is 5/2", False),
        ("5", "5/2", False),
        ("2", "5/2", False),
        ("5", "\\boxed{\\frac{5}{2}}", False),
        ("5", "\\boxed{\\frac{10}{2}}", True),
        ("5", "10/2", True),
        ("5", "The answer is \\dfrac{10}{2}.", True),
        ("2.5", "5/2", True),
        ("2.5", "\\frac{5}{2}", True),
        ("0.5", "1/2", True),
        ("1/3", "2/6", True),
        ("1/3", "0.333", False),
        ("5", "2+3", False),
        ("5", "The answer is 2+3", False),
        ("5", "5*1", False),
        ("5", "5:2", False),
        ("5", "5 / 2 + 1", False),
        ("8", "2^3", False),
        ("2", "2^3", False),
        ("5", "sqrt(25)", False),
        ("25", "sqrt(25)", False),
        ("2", "2 1/2", False),
        ("5", "5/0", False),
        ("2024", "2024-05-01", False),
        ("3", "The answer is 3-5", False),
        ("5", "The answer is 2 + 3 = 5", True),
        ("5", "5%", True),
    ],
)
def test_grading_fractions(answer, reply, match):
    assert grade_number(answer, reply) is match


def test_canonical_values_are_unique():
    assert canonical_value(Fraction(10, 2)) == "5" and canonical_value(Fraction(-5, 2)) == "-2.5"
    assert canonical_value(Fraction(1, 3)) == "1/3" and canonical_value(Fraction(-2, 6)) == "-1/3"
    assert canonical_value(Fraction(1, 40)) == "0.025" and canonical_value(Fraction(-1, 1000)) == "-0.001"
    assert canonical_value(Fraction(0)) == "0" and canonical_value(Fraction(123456789, 10**12)) == "0.000123456789"

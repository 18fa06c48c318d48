r"""A free-form answer compared with the known one: exact match after normalising.

The rule for numbers (:func:`normalize_number`), applied to a reply's text:

1. If it contains ``\boxed{...}``, only the last box's content is read, and it must hold exactly
   one answer.
2. Otherwise, if it says "the answer is N" (also "answer: N", "answer = N", any case), only the
   answer that starts right after the last such phrase is read. It is unreadable when another
   number follows it directly or through a connective (``2 1/2``, ``4 2``, ``12,5``,
   ``3 to 5``, ``12 or 120``); words after it do not matter (``is 12, because 3*4=12``).
3. Otherwise the whole reply must hold exactly one answer; a reply naming two numbers without
   saying which is its answer is unreadable (``None``) and never matched.

An *answer* is a *term*, or an equation of terms ``t1 = t2 = ... = tn`` whose last side counts
(``3 + 4 = 7`` gives 7, ``5/2 = 2.5`` gives 2.5). A term is a number, a LaTeX fraction, or
several of them joined by arithmetic operators (``+ - * ** / : ^ × · ÷``, ``\times``,
``\cdot``, ``\div``). What a term is worth:

4. A number may carry a sign (``-5``, ``−5``), thousands separators (``1,234``, ``1 234`` with a
   no-break or thin space, ``1_234``, ``1'234``) and a decimal part. Its canonical form drops the
   separators and a fractional part of zeros (``12.0`` and ``12.00`` are ``12``), and ``-0`` is ``0``.
5. A plain fraction of two integers, ``a/b`` or ``\frac{a}{b}`` (also ``\dfrac``, ``\tfrac``;
   a sign allowed, no leading zeros, ``b`` not 0), is its exact value: ``10/2`` and
   ``\frac{10}{2}`` are ``5``, ``5/2`` is ``2.5``, ``2/6`` is ``1/3``. A fraction is how a
   rational number is written, so it is read whole, never as its numerator: ``5/2`` never
   matches 5. The canonical form of a value is unique (an integer, else a terminating decimal,
   else the reduced ``p/q``), so equal values match, and a canonical form reads back as itself.
6. Any other term is a calculation left undone and is unreadable: sums, differences, products
   and powers (``2+3``, ``5*1``, ``2^3``, ``2 \times 3``), ratios (``5:2``), divisions written as
   operations (``10 ÷ 2``, ``10 \div 2``), fractions of decimals (``2.5/0.5``), of more than two
   numbers (``5/2/1``, ``5 / 2 + 1``) or by zero (``5/0``); so are roots and other functions
   (``sqrt(25)``, ``\sqrt{25}``, ``√25``), ``±``, mixed numbers (``2 1/2``: two and a half, or
   2 times 1/2?), ranges and dates (``3-5``, ``2024-05-01``, ``05/01``), and a number after a
   word and a detached sign or operator (``x-5``, ``x + 5``, ``is - 5``). The grader does not do
   arithmetic: a reply that stops at an expression has not given a number, and reading any part
   of one would match wrong replies (the numerator of ``5/2``, the first bound of ``3-5``, the
   year of a date).

Around the answer, words, units (``$``, ``%``: ``5%`` is 5, the number a question about a
percentage asks for), ``**`` and LaTeX text commands (``\text{...}``, ``\mathbf{...}``), a final
full stop or ``!`` (punctuation, not a factorial) do not matter, and neither does a list
marker ``-`` or ``*`` at the start of a line. A number glued to a word (``v2``, ``x_1``) or
written with two decimal points (``1.2.3``) is not a number of its own.

Two answers match when their canonical forms are equal, so ``12`` never matches ``120``, ``-5``
never matches ``5``, ``12.5`` never matches ``12`` and ``5/2`` never matches ``5``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

_SEP = "[,_'\u00a0\u2009\u202f]"
_INT = r"(?:\d{1,3}(?:" + _SEP + r"\d{3})+|\d+)"
_UNUM = _INT + r"(?:\.\d+)?"
# One number token in running text (also used to find a number a question states).
_NUMBER = r"(?<![\w.+\-])(?P<num>[-+]?" + _UNUM + r")(?![\w]|\.\d)"
NUMBER = re.compile(_NUMBER)
_BOXED = re.compile(r"\\boxed\s*\{")
_MINUS = str.maketrans({"\u2212": "-", "\u2012": "-", "\u2013": "-"})

# Where an answer may start: a number or a LaTeX fraction (a sign allowed), not glued to a word.
_FRAC = r"\\[dt]?frac\s*\{"
_START = re.compile(r"(?<![\w.])[-+]?(?:\d|" + _FRAC + ")")
_CUE = re.compile(r"answer(?:\s+is|\s*[:=])(?:[\s*$:]|\\[(\[])*(?=[-+]?(?:\d|" + _FRAC + "))", re.IGNORECASE)
_NUM_AT = re.compile(r"[-+]?" + _UNUM + r"(?!\w|\.\d)")
_FRAC_AT = re.compile(r"([-+]?)" + _FRAC)
_INT_PART = re.compile(r"\s*([-+]?)(0|[1-9]\d{0,2}(?:" + _SEP + r"\d{3})+|[1-9]\d*)\s*\Z")
_OP = re.compile(r"[ \t]*(\*\*|[-+*/:^×·÷]|\\(?:times|cdot|div)(?![A-Za-z]))[ \t]*")
_EQ = re.compile(r"[ \t]*=[ \t]*")
# After a term: an operator on something this reader does not parse, or a bracket glued to it.
_OPERAND_LIKE = r"(?:[-+]?\d|[(\[{][ \t]*[-+\d(\\]|[√∛]|\\[A-Za-z])"
_TRAIL = re.compile(
    r"[ \t]*(?:[\^×·÷±]|(?:\*\*|[-+*/:]|\\(?:times|cdot|div|pm|mp)(?![A-Za-z]))[ \t]*"
    + _OPERAND_LIKE
    + r")|\(\s*[-+\d(]"
)
# After the answer a cue points at: another number, directly or through a connective.
_ANOTHER = re.compile(
    r"[ \t]*(?:,|,?[ \t]*(?:or|to|and|x|times|plus|minus|mod|over|divided by|multiplied by)"
    r"[ \t]+)?[-+]?(?:\d|" + _FRAC + ")",
    re.IGNORECASE,
)
# After the answer a cue points at: "of" and another number ("1/3 of 12", "50% of 8", "3 out of
# 4"): a part of a calculation, not the answer; the answer is then what an "=" later on that line
# gives, if anything.
_OF = re.compile(r"[ \t]*%?[ \t]*(?:out[ \t]+)?of[ \t]+[-+]?(?:\d|" + _FRAC + ")", re.IGNORECASE)
_EQ_LATER = re.compile(r"[^\n=]*=[ \t]*")
_CALL = re.compile(r"(?:(\\)([A-Za-z]+)[ \t]*[({]?|(?<![\\A-Za-z])([A-Za-z]+)\(|[√∛∜±∓])[ \t]*\Z")
# LaTeX commands that only format, space or lead to what follows (a number after any other
# command, such as \sqrt, \times, \pm or \log, is part of a calculation: unreadable, not read).
_HARMLESS = frozenset(
    {
        "text",
        "textbf",
        "textit",
        "textrm",
        "textsf",
        "texttt",
        "textnormal",
        "mathrm",
        "mathbf",
        "mathit",
        "mathsf",
        "mathtt",
        "mathnormal",
        "boldsymbol",
        "bm",
        "boxed",
        "fbox",
        "mbox",
        "hbox",
        "displaystyle",
        "textstyle",
        "underline",
        "emph",
        "left",
        "right",
        "big",
        "Big",
        "bigl",
        "bigr",
        "Bigl",
        "Bigr",
        "quad",
        "qquad",
        "item",
        "newline",
        "par",
        "noindent",
        "color",
        "textcolor",
        "bf",
        "rm",
        "it",
        "approx",
        "sim",
        "therefore",
        "implies",
        "to",
        "rightarrow",
        "Rightarrow",
        "longrightarrow",
        "Longrightarrow",
    }
)


@dataclass(frozen=True)
class ExactQuery:
    """What one free-form sample shows: the task's text only."""

    prompt: str


def canonical_number(token: str) -> str | None:
    """The canonical form of one number token (separators dropped, ``12.0`` → ``12``)."""
    try:
        value = Decimal(re.sub(_SEP, "", token))
    except InvalidOperation:
        return None
    if value == value.to_integral_value():
        return str(int(value))
    return format(value.normalize(), "f")


def canonical_value(value: Fraction) -> str:
    """The one canonical form of an exact value: ``5``, else ``2.5``, else ``1/3``."""
    if value.denominator == 1:
        return str(value.numerator)
    q, twos, fives = value.denominator, 0, 0
    while q % 2 == 0:
        q, twos = q // 2, twos + 1
    while q % 5 == 0:
        q, fives = q // 5, fives + 1
    if q != 1:
        return f"{value.numerator}/{value.denominator}"
    places = max(twos, fives)
    digits = str(abs(value.numerator) * 10**places // value.denominator).rjust(places + 1, "0")
    return ("-" if value < 0 else "") + digits[:-places] + "." + digits[-places:]


def _last_box(text: str) -> str | None:
    """The content of the last ``\\boxed{...}`` (braces balanced), if there is one."""
    starts = [m.end() for m in _BOXED.finditer(text)]
    if not starts:
        return None
    return _braced(text, starts[-1])[0]


def _braced(text: str, i: int) -> tuple[str, int]:
    """The text from ``i`` to the brace that closes the one opened just before ``i`` (to the end
    if none does), and the position after that brace."""
    depth, start = 1, i
    while i < len(text):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start:i], i + 1
        i += 1
    return text[start:], i


def _operand(text: str, i: int) -> tuple[int, tuple[str, ...]] | None:
    """A number or a LaTeX fraction at ``i``: its end and its parts, else ``None``."""
    m = _NUM_AT.match(text, i)
    if m:
        return m.end(), ("num", m.group())
    m = _FRAC_AT.match(text, i)
    if m:
        top, j = _braced(text, m.end())
        brace = re.compile(r"\s*\{").match(text, j)
        if brace:
            bottom, k = _braced(text, brace.end())
            return k, ("frac", m.group(1), top, bottom)
    return None


def _ratio(top: str, bottom: str) -> Fraction | None:
    """``top/bottom`` when both are integers (no leading zeros) and ``bottom`` is not 0."""
    a, b = _INT_PART.match(top), _INT_PART.match(bottom)
    if not a or not b:
        return None
    num, den = (int(sign + re.sub(_SEP, "", digits)) for sign, digits in (a.groups(), b.groups()))
    return Fraction(num, den) if den else None


def _term_value(operands: list[tuple[str, ...]], ops: list[str]) -> Fraction | None:
    """A term's exact value: a number or a plain fraction of two integers; else ``None``."""
    if not ops:
        kind, *parts = operands[0]
        if kind == "num":
            return Fraction(Decimal(re.sub(_SEP, "", parts[0])))
        sign, top, bottom = parts
        value = _ratio(top, bottom)
        return -value if value is not None and sign == "-" else value
    if ops == ["/"] and all(kind == "num" for kind, *_ in operands):
        return _ratio(operands[0][1], operands[1][1])
    return None


def _answer_at(text: str, i: int) -> tuple[int, Fraction | None] | None:
    """The answer (an equation's last side) starting at ``i``: where it ends and its value
    (``None`` when it is not a number or plain fraction); ``None`` if no number starts there."""
    first = _operand(text, i)
    if first is None:
        return None
    end, operands = first[0], [first[1]]
    ops: list[str] = []
    while True:
        joint = _OP.match(text, end) or _EQ.match(text, end)
        nxt = _operand(text, joint.end()) if joint else None
        if joint is None or nxt is None:
            break
        if joint.re is _EQ:  # a new side of the equation: only the last one counts
            operands, ops = [], []
        else:
            ops.append(joint.group(1))
        end = nxt[0]
        operands.append(nxt[1])
    value = _term_value(operands, ops)
    return end, (None if _TRAIL.match(text, end) else value)


def _in_calculation(text: str, i: int) -> bool:
    """Whether the answer starting at ``i`` is an operand of something before it: an operator,
    a function or root (``sqrt(``, ``\\sqrt{``, ``√``), or a sign standing after a word."""
    before = text[max(0, i - 80) : i]
    line = before.rsplit("\n", 1)[-1].rstrip(" \t")
    if not line:
        return False
    if line[-1] in "^×·÷√∛∜±∓":
        return True
    if line[-1] in "+-":  # a detached sign or operator; at the start of a line, a list marker
        return bool(line[:-1].strip())
    if line[-1] in "*/:":
        rest = line.rstrip("*") if line[-1] == "*" else line[:-1]
        rest = rest.rstrip(" \t")
        return bool(rest) and (rest[-1].isdigit() or rest[-1] in ")]}")
    call = _CALL.search(line)
    return call is not None and not (call.group(1) and call.group(2) in _HARMLESS)


def _only_answer(text: str) -> str | None:
    """The canonical value of the one answer ``text`` holds; ``None`` if it holds none, several,
    or one that is a calculation."""
    found: list[Fraction | None] = []
    pos = 0
    while (m := _START.search(text, pos)) is not None:
        read = _answer_at(text, m.start())
        if read is None:
            pos = m.start() + 1
            continue
        end, value = read
        found.append(None if _in_calculation(text, m.start()) else value)
        if len(found) > 1:
            return None
        pos = end
    return canonical_value(found[0]) if len(found) == 1 and found[0] is not None else None


def normalize_number(text: Any) -> str | None:
    """The canonical number a reply gives as its answer, or ``None`` when it gives none, several
    without saying which, or a calculation instead of a number; see the module's docstring for
    the rule."""
    if text is None:
        return None
    return _normalized(str(text))


@functools.lru_cache(maxsize=4096)
def _normalized(text: str) -> str | None:
    """:func:`normalize_number` of a string, read once: a game grades the same known answer, and
    simulated players' same few replies, thousands of times."""
    text = text.translate(_MINUS)
    boxed = _last_box(text)
    if boxed is not None:
        return _only_answer(boxed)
    cues = list(_CUE.finditer(text))
    if not cues:
        return _only_answer(text)
    read = _answer_at(text, cues[-1].end())
    if read is not None and _OF.match(text, read[0]):  # "1/3 of 12": a calculation; "... = 4" gives 4
        later = _EQ_LATER.match(text, read[0])
        read = _answer_at(text, later.end()) if later else None
    if read is None or read[1] is None or _ANOTHER.match(text, read[0]) or _OF.match(text, read[0]):
        return None
    return canonical_value(read[1])


def grade_number(answer: str, reply: Any) -> bool:
    """Whether a reply's number equals the known answer (both normalised)."""
    got = normalize_number(reply)
    return got is not None and got == normalize_number(answer)

r"""A free-form answer compared with the known one: exact match after normalising.

The rule for numbers (:func:`normalize_number`), applied to a reply's text:

1. If it contains ``\boxed{...}``, only the last box's content is read.
2. Otherwise, if it says "the answer is N" (also "answer: N", "answer = N", any case), only the
   number after the last such phrase is read.
3. What is left must hold exactly one number; otherwise the reply is unreadable (``None``): a
   reply naming two numbers without saying which is its answer is never matched.
4. A number may carry a sign (``-5``, ``−5``), thousands separators (``1,234``, ``1 234`` with a
   no-break or thin space, ``1_234``, ``1'234``) and a decimal part. Its canonical form drops the
   separators and a fractional part of zeros (``12.0`` and ``12.00`` are ``12``), and ``-0`` is ``0``.
   Surrounding text, ``$`` signs, ``**`` and a final full stop do not matter.

Two answers match when their canonical forms are equal, so ``12`` never matches ``120``, ``-5``
never matches ``5`` and ``12.5`` never matches ``12``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

_SEP = "[,_'\u00a0\u2009\u202f]"
_NUMBER = (r"(?<![\w.+\-])(?P<num>[-+]?(?:\d{1,3}(?:" + _SEP + r"\d{3})+|\d+)(?:\.\d+)?)(?![\w]|\.\d)")
NUMBER = re.compile(_NUMBER)
_BOXED = re.compile(r"\\boxed\s*\{")
_CUE = re.compile(r"answer(?:\s+is|\s*[:=])[\s*$:]*" + _NUMBER, re.IGNORECASE)
_MINUS = str.maketrans({"\u2212": "-", "\u2012": "-", "\u2013": "-"})


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


def _last_box(text: str) -> str | None:
    """The content of the last ``\\boxed{...}`` (braces balanced), if there is one."""
    starts = [m.end() for m in _BOXED.finditer(text)]
    if not starts:
        return None
    depth, i = 1, starts[-1]
    while i < len(text):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[starts[-1]:i]
        i += 1
    return text[starts[-1]:]


def normalize_number(text: Any) -> str | None:
    """The canonical number a reply gives as its answer, or ``None`` when it gives none (or
    several without saying which); see the module's docstring for the rule."""
    if text is None:
        return None
    text = str(text).translate(_MINUS)
    boxed = _last_box(text)
    if boxed is not None:
        text = boxed
    else:
        cues = list(_CUE.finditer(text))
        if cues:
            return canonical_number(cues[-1].group("num"))
    found = NUMBER.findall(text)
    if len(found) != 1:
        return None
    return canonical_number(found[0])


def grade_number(answer: str, reply: Any) -> bool:
    """Whether a reply's number equals the known answer (both normalised)."""
    got = normalize_number(reply)
    return got is not None and got == normalize_number(answer)

"""Wrong but plausible answer options for a program's printed output.

:func:`make_distractors` mutates the real output (numbers nudged, digits swapped, items dropped or
reordered, strings edited, keywords swapped) into options that differ from it and from each other
under the game's comparison key, :func:`~skate.answers.choice.normalize_text`.
"""

from __future__ import annotations

import ast
import itertools
import math
import re
import string
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from skate.answers.choice import normalize_text

# The game's comparison key for answers (whitespace runs become one space, ends stripped).
normalize_answer = normalize_text

_NO_VALUE = object()
_LITERAL_LIMIT = 5000
_NUMBER_IN_TEXT = re.compile(r"(?<!\d)-?\d{1,15}(?!\d)")  # numbers short enough to tweak
_KEYWORD_ALTERNATIVES = {
    "True": ("False", "None", "1", "0", "true", "[True]", "(True,)", "'True'", "True True", "-1"),
    "False": ("True", "None", "0", "1", "false", "[False]", "(False,)", "'False'", "False False", "[]"),
    "None": ("0", "False", "True", "[]", "''", "None None", "none", "null", "-1", "()"),
}


def _literal(text: str) -> Any:
    """The Python value ``text`` spells, or ``_NO_VALUE``."""
    if len(text) > _LITERAL_LIMIT:
        return _NO_VALUE
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. SyntaxWarning for "1e40x"
            return ast.literal_eval(text.strip())
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NO_VALUE


def _same_value(a: Any, b: Any) -> bool:
    if a is _NO_VALUE or b is _NO_VALUE:
        return False
    try:
        return type(a) is type(b) and repr(a) == repr(b)
    except Exception:  # noqa: BLE001 - a literal's repr does not fail; if one did: not equal  # pragma: no cover
        return False


# -- scalar mutations -------------------------------------------------------


def _mutate_int(x: int, rng: np.random.Generator) -> int:
    small = int(rng.integers(1, 4))
    moves: list[Callable[[], int]] = [
        lambda: x + 1,
        lambda: x - 1,
        lambda: x + small,
        lambda: x - small,
        lambda: -x,
        lambda: x * 2,
        lambda: x // 2,
        lambda: x + 10,
        lambda: x - 10,
        lambda: x * 10,
        lambda: _swap_digits(x, rng),
        lambda: _change_digit(x, rng),
    ]
    return moves[int(rng.integers(len(moves)))]()


def _swap_digits(x: int, rng: np.random.Generator) -> int:
    digits = list(str(abs(x)))
    if len(digits) < 2:
        return x + 1
    i = int(rng.integers(len(digits) - 1))
    digits[i], digits[i + 1] = digits[i + 1], digits[i]
    return int("".join(digits)) * (-1 if x < 0 else 1)


def _change_digit(x: int, rng: np.random.Generator) -> int:
    digits = list(str(abs(x)))
    i = int(rng.integers(len(digits)))
    digits[i] = str((int(digits[i]) + int(rng.integers(1, 10))) % 10)
    return int("".join(digits)) * (-1 if x < 0 else 1)


def _mutate_float(x: float, rng: np.random.Generator) -> float:
    moves: list[Callable[[], float]] = [
        lambda: x + 1,
        lambda: x - 1,
        lambda: x + 0.5,
        lambda: x - 0.5,
        lambda: -x,
        lambda: x * 2,
        lambda: x / 2,
        lambda: float(round(x)),
        lambda: x + 0.1,
        lambda: x * 10,
    ]
    value = moves[int(rng.integers(len(moves)))]()
    return round(value, 10) if math.isfinite(value) else x + 1


def _mutate_text(s: str, rng: np.random.Generator) -> str:
    """A small edit of free text: a typo, a case change, a reordering or a number tweak."""
    if not s:
        return "0"
    n = len(s)
    i = int(rng.integers(n))
    j = min(n - 1, i + 1)
    alphabet = string.ascii_lowercase if not s[i].isdigit() else string.digits
    moves: list[Callable[[], str]] = [
        lambda: s[:i] + s[j] + s[i] + s[j + 1 :] if n > 1 else s + s,
        lambda: s[:i] + s[i + 1 :] if n > 1 else s + "s",
        lambda: s[:i] + s[i] + s[i:],
        lambda: s[:i] + alphabet[int(rng.integers(len(alphabet)))] + s[i + 1 :],
        lambda: s.upper() if s != s.upper() else s.lower(),
        lambda: s.swapcase(),
        lambda: s.capitalize() if s != s.capitalize() else s.lower(),
        lambda: s[::-1],
        lambda: s[1:] + s[0],
        lambda: s[-1] + s[:-1],
        lambda: s[:-1] if n > 1 else s * 2,
        lambda: s + s[-1],
        lambda: _tweak_number_in_text(s, rng),
        lambda: _shuffle_words(s, rng),
    ]
    return moves[int(rng.integers(len(moves)))]()


def _tweak_number_in_text(s: str, rng: np.random.Generator) -> str:
    matches = list(_NUMBER_IN_TEXT.finditer(s))
    if not matches:
        return s + str(int(rng.integers(0, 10)))
    m = matches[int(rng.integers(len(matches)))]
    return s[: m.start()] + str(_mutate_int(int(m.group()), rng)) + s[m.end() :]


def _shuffle_words(s: str, rng: np.random.Generator) -> str:
    words = s.split(" ")
    if len(words) < 2:
        return s[::-1]
    i = int(rng.integers(len(words) - 1))
    if rng.random() < 0.5:
        words[i], words[i + 1] = words[i + 1], words[i]
    else:
        del words[i]
    return " ".join(words)


# -- structured values --------------------------------------------------------


def _mutate_scalar(v: Any, rng: np.random.Generator) -> Any:
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        return _mutate_int(v, rng)
    if isinstance(v, float):
        return _mutate_float(v, rng)
    if isinstance(v, str):
        return _mutate_text(v, rng) if v else "a"
    if v is None:
        return 0
    if isinstance(v, bytes):
        return v + b"0"
    if isinstance(v, complex):
        return v + 1
    return v


def _mutate_value(v: Any, rng: np.random.Generator) -> Any:
    """A plausible wrong version of a literal value (same shape, one change)."""
    if isinstance(v, dict):
        return _mutate_dict(v, rng)
    if isinstance(v, (list, tuple)):
        items = _mutate_sequence(list(v), rng)
        return tuple(items) if isinstance(v, tuple) else items
    if isinstance(v, (set, frozenset)):
        items = sorted(v, key=repr)
        if not items:
            return type(v)({0})
        changed = _mutate_value(items[int(rng.integers(len(items)))], rng)
        try:
            return type(v)(items + [changed]) if rng.random() < 0.5 else type(v)(items[1:] or [changed])
        except TypeError:
            return type(v)(items[1:])
    return _mutate_scalar(v, rng)


def _mutate_sequence(items: list[Any], rng: np.random.Generator) -> list[Any]:
    if not items:
        return [0]
    n = len(items)
    i = int(rng.integers(n))
    choice = int(rng.integers(7))
    if choice == 0 and n > 1:
        j = i + 1 if i + 1 < n else i - 1
        items[i], items[j] = items[j], items[i]
    elif choice == 1 and n > 1:
        items.reverse()
    elif choice == 2 and n > 1:
        del items[i]
    elif choice == 3:
        items.insert(i, items[i])
    elif choice == 4 and n > 1:
        items = items[1:] + items[:1]
    else:
        items[i] = _mutate_value(items[i], rng)
    return items


def _mutate_dict(d: dict[Any, Any], rng: np.random.Generator) -> dict[Any, Any]:
    if not d:
        return {"a": 0}
    items = list(d.items())
    n = len(items)
    i = int(rng.integers(n))
    choice = int(rng.integers(5))
    if choice == 0 and n > 1:
        j = i + 1 if i + 1 < n else i - 1
        items[i], items[j] = items[j], items[i]
    elif choice == 1 and n > 1:
        del items[i]
    elif choice == 2:
        key = _mutate_scalar(items[i][0], rng)
        if key not in d:
            try:
                hash(key)
                items[i] = (key, items[i][1])
            except TypeError:
                pass
    else:
        items[i] = (items[i][0], _mutate_value(items[i][1], rng))
    return dict(items)


# -- whole answers --------------------------------------------------------------

_Mutator = Callable[[str, np.random.Generator], str | None]


def _line_mutator(answer: str, rng: np.random.Generator) -> str | None:
    """Change one line of a multi-line answer."""
    lines = answer.split("\n")
    i = int(rng.integers(len(lines)))
    lines[i] = _mutate_single(lines[i], rng)
    return "\n".join(lines)


def _line_shuffle(answer: str, rng: np.random.Generator) -> str | None:
    lines = answer.split("\n")
    i = int(rng.integers(len(lines)))
    choice = int(rng.integers(3))
    if choice == 0 and len(lines) > 1:
        j = i + 1 if i + 1 < len(lines) else i - 1
        lines[i], lines[j] = lines[j], lines[i]
    elif choice == 1 and len(lines) > 1:
        del lines[i]
    else:
        lines.insert(i, lines[i])
    return "\n".join(lines)


def _fields(line: str) -> list[str] | None:
    """Split ``line`` on spaces outside brackets and quotes (the values of one print call).

    Returns None when brackets or quotes do not balance.
    """
    fields: list[str] = []
    current: list[str] = []
    depth, quote, escaped = 0, "", False
    for ch in line:
        if quote:
            current.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
            current.append(ch)
        elif ch in "([{":
            depth += 1
            current.append(ch)
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                return None
            current.append(ch)
        elif ch == " " and depth == 0:
            if current:
                fields.append("".join(current))
                current = []
        else:
            current.append(ch)
    if depth or quote:
        return None
    if current:
        fields.append("".join(current))
    return fields


def _mutate_field(text: str, rng: np.random.Generator) -> str:
    """A plausible wrong version of one printed value."""
    value = _literal(text) if text[:1] in "-+0123456789([{'\".TFN" else _NO_VALUE
    if value is not _NO_VALUE:
        try:
            return repr(_mutate_value(value, rng))
        except Exception:  # noqa: BLE001 - an odd literal type: the text is mutated instead  # pragma: no cover
            pass
    if _NUMBER_IN_TEXT.search(text) and (rng.random() < 0.7 or text[:1] in "([{"):
        return _tweak_number_in_text(text, rng)
    return _mutate_text(text, rng)


def _mutate_single(answer: str, rng: np.random.Generator) -> str:
    """One plausible wrong version of a single-line answer."""
    stripped = answer.strip()
    if stripped in _KEYWORD_ALTERNATIVES and rng.random() < 0.7:
        options = _KEYWORD_ALTERNATIVES[stripped]
        return options[int(rng.integers(len(options)))]
    fields = _fields(stripped)
    if not fields or len(fields) == 1:
        return _mutate_field(stripped, rng) if stripped else _mutate_text(answer, rng)
    i = int(rng.integers(len(fields)))
    roll = rng.random()
    if roll < 0.12:
        j = i + 1 if i + 1 < len(fields) else i - 1
        fields[i], fields[j] = fields[j], fields[i]
    elif roll < 0.18:
        del fields[i]
    else:
        fields[i] = _mutate_field(fields[i], rng)
    return " ".join(fields)


def _mutators_for(answer: str) -> list[_Mutator]:
    """Edits suited to the answer; a multi-line answer mostly gets one line changed."""
    if "\n" in answer.strip("\n"):
        return [_line_mutator, _line_mutator, _line_shuffle]
    return [_mutate_single]


def _fallbacks(answer: str) -> Iterator[str]:
    """An endless stream of distinct variants, used when plausible edits run out."""
    stripped = answer.strip()
    value = _literal(stripped)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 10**15:
        for k in itertools.count(1):
            yield str(value + k)
            yield str(value - k)
    for suffix in ("s", "0", "1", "!", ".", "?", "x", "-1", " 0", " 1", " None"):
        yield answer + suffix
    for k in itertools.count(2):
        yield f"{answer} {k}"


def make_distractors(answer: str, n: int, rng: np.random.Generator) -> list[str]:
    """Write ``n`` wrong but plausible answers for the printed ``answer``.

    Each distractor keeps the answer's shape (a number stays a number, a list
    stays a list with one element changed, swapped, dropped or duplicated, a
    word gets a typo or a case change, ...).  All of them differ from each
    other and from the answer under :func:`normalize_answer`.  When plausible
    edits run out, suffixes are appended, so this always succeeds.  Only
    ``rng`` is used for randomness.
    """
    if n <= 0:
        return []
    taken = {normalize_answer(answer)}
    answer_value = _literal(answer.strip())
    chosen: list[str] = []

    def offer(candidate: str | None) -> None:
        if candidate is None:
            return
        key = normalize_answer(candidate)
        if not key or key in taken or _same_value(_literal(candidate.strip()), answer_value):
            return
        taken.add(key)
        chosen.append(candidate)

    mutators = _mutators_for(answer)
    for _ in range(25 * n + 50):
        if len(chosen) >= n:
            break
        mutate = mutators[int(rng.integers(len(mutators)))]
        try:
            offer(mutate(answer, rng))
        except (ValueError, OverflowError, RecursionError, MemoryError):
            continue  # e.g. an integer too long to print; other edits will do
    fallbacks = _fallbacks(answer)
    while len(chosen) < n:
        offer(next(fallbacks))
    return chosen

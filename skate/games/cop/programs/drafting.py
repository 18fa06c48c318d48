"""Drafting COP programs: pick variants, write a draft, keep it only if it runs well.

:func:`generate_program` draws one or two variants of a kind (registered by the template
modules, one per kind, imported below), writes a draft with a ``# <kind>: <description>``
header, and redraws until :func:`_acceptable` passes: the draft runs cleanly within a trace
budget and prints a short value that is not only True/False (:func:`boolean_only`).
:func:`predict_output` runs a generated program to read its output; :func:`kind_of` reads the
kind back from the header.
"""

from __future__ import annotations

import contextlib
import io
import math
import re
import sys
from typing import Any

import numpy as np

# Importing a template module registers its variants in _VARIANTS.
from skate.games.cop.programs import (  # noqa: F401 - imported for their effect: each registers its variants
    arithmetic,
    bitwise,
    classes,
    closures,
    comprehensions,
    dicts,
    exceptions,
    generators,
    recursion,
    slicing,
    sorting,
    strings,
)
from skate.games.cop.programs.kit import _VARIANTS, KINDS, _Ctx, _Writer

__all__ = ["boolean_only", "generate_program", "kind_of", "predict_output"]

# Longest output a generated program may print; longer drafts are redrawn.
_MAX_OUTPUT_CHARS = 300
_MAX_ATTEMPTS = 40
# Chance at difficulty 1 that a program combines two puzzles (falls to 0 at 0.5).
_COMPOSE_PROBABILITY = 0.9
# Trace events (calls and lines) a draft may use while being validated.
_MAX_TRACE_EVENTS = 60_000

if set(_VARIANTS) != set(KINDS):  # pragma: no cover - guards against editing mistakes
    raise RuntimeError("every kind needs at least one program variant")


def generate_program(kind: str, difficulty: float, rng: np.random.Generator) -> str:
    """Write a complete Python program of the given kind and difficulty.

    The first line is the header ``# <kind>: <description>`` and the last line
    prints the answer.  ``difficulty`` is clamped to ``[0, 1]``; higher values
    give longer, more nested programs with more iterations, more interacting
    steps and trickier semantics (above 0.5 a program may combine two puzzles
    of the same kind into one printed answer).  All randomness comes from
    ``rng``, so the same generator state always gives the same program.

    Raises:
        ValueError: if ``kind`` is not one of :data:`KINDS`.
    """
    if kind not in _VARIANTS:
        raise ValueError(f"unknown program kind {kind!r}; valid kinds are: {', '.join(KINDS)}")
    d = float(min(1.0, max(0.0, difficulty))) if math.isfinite(difficulty) else 0.0
    for _ in range(_MAX_ATTEMPTS):
        ctx = _Ctx(rng=rng, d=d)
        parts = 2 if ctx.chance(_COMPOSE_PROBABILITY * max(0.0, 2.0 * d - 1.0)) else 1
        chosen = ctx.sample(_VARIANTS[kind], parts)
        writer = _Writer()
        printed = [variant.build(ctx, writer) for variant in chosen]
        writer(f"print({', '.join(printed)})")
        description = "; then ".join(variant.description for variant in chosen)
        source = f"# {kind}: {description}\n" + writer.text()
        if _acceptable(source):
            return source
    raise RuntimeError(f"could not generate an acceptable {kind!r} program")  # pragma: no cover


class _BudgetExceeded(BaseException):
    """Raised inside a draft that runs for too long (BaseException: drafts cannot catch it)."""


class _LineBudget:
    """A trace function that stops a draft after a fixed number of trace events."""

    def __init__(self, limit: int) -> None:
        self.left = limit

    def __call__(self, frame: Any, event: str, arg: Any) -> _LineBudget:
        self.left -= 1
        if self.left < 0:
            raise _BudgetExceeded
        return self


def _acceptable(source: str) -> bool:
    """Whether a draft runs cleanly, quickly, and prints a short, non-empty answer that is a
    value (not only True/False).

    Templates are designed to terminate fast; the trace budget is a safety net
    so that an unlucky draft is redrawn instead of hanging the generator.
    """
    previous = sys.gettrace()
    sys.settrace(_LineBudget(_MAX_TRACE_EVENTS))
    try:
        output = _run_draft(source)
    except (Exception, _BudgetExceeded):  # noqa: BLE001 - a draft that fails, however, is simply redrawn
        return False
    finally:
        sys.settrace(previous)
    return 0 < len(output) <= _MAX_OUTPUT_CHARS and output.strip() != "" and not boolean_only(output)


def boolean_only(output: str) -> bool:
    """Whether a program's output is nothing but the words True and False (a boolean, or a few
    of them separated by whitespace), which COP does not accept as a task's answer."""
    words = output.split()
    return bool(words) and all(w in ("True", "False") for w in words)


def _run_draft(source: str) -> str:
    """Like :func:`predict_output`, but captures ``print`` without touching ``sys.stdout``.

    Generated programs only write through ``print``, so shadowing it in the
    program's globals captures everything while staying safe to use from
    several threads at once.
    """
    buffer = io.StringIO()

    def captured_print(*args: Any, **kwargs: Any) -> None:
        kwargs["file"] = buffer
        print(*args, **kwargs)

    exec(compile(source, "<generated program>", "exec"), {"__name__": "__main__", "print": captured_print})
    output = buffer.getvalue()
    return output[:-1] if output.endswith("\n") else output


def predict_output(code: str) -> str:
    """Run a program in this process and return what it prints.

    The program runs with globals ``{"__name__": "__main__"}`` and its standard
    output captured; one trailing newline is removed.  Exceptions propagate.

    Only use this on trusted programs produced by :func:`generate_program`.
    It offers no isolation at all, so it must never run model-written code;
    that has to go through the sandbox.  It also swaps the process-wide
    ``sys.stdout`` while running, so calls from several threads at once can
    capture each other's output.
    """
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(compile(code, "<generated program>", "exec"), {"__name__": "__main__"})
    output = buffer.getvalue()
    return output[:-1] if output.endswith("\n") else output


def kind_of(code: str) -> str | None:
    """The kind named in a ``# <kind>: ...`` first-line header, if it is known."""
    first = code.split("\n", 1)[0]
    match = _HEADER.match(first)
    if match and match.group(1) in KINDS:
        return match.group(1)
    return None


_HEADER = re.compile(r"^\s*#\s*([A-Za-z_]+)\s*:")

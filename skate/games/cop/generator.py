"""Programs for simulated players to set: "what does this program print?"

:func:`generate_program` writes a varied, self-contained Python program of a given *kind* (see
:data:`KINDS`) with a difficulty knob in ``[0, 1]``; the knob is on the scale of
:func:`skate.games.cop.difficulty.code_difficulty`, which measures any program from its syntax
tree. :func:`skate.games.cop.distractors.make_distractors` writes the wrong options.

:func:`predict_output` runs a generated program in-process to read its output.
It is only meant for programs produced by :func:`generate_program`; code written
by a model must go through the sandbox instead.

Generated programs only use builtins, print one value at the end (never only
True/False: :func:`boolean_only` drafts are redrawn, as COP's ``require_value``
rule would reject them), never depend on hash randomisation, object addresses
or the clock, and finish in a few milliseconds at every difficulty.

The code lives in the :mod:`skate.games.cop.programs` package (its docstring lists the
modules); this module re-exports the public names.
"""

from __future__ import annotations

from skate.games.cop.programs.drafting import boolean_only, generate_program, kind_of, predict_output
from skate.games.cop.programs.kit import KINDS

__all__ = ["KINDS", "boolean_only", "generate_program", "kind_of", "predict_output"]

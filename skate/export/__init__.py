"""Export a finished game's tasks, or a built SCP benchmark, for other evaluation harnesses.

``skate export RUN_DIR|BENCH.jsonl --to jsonl|lm-eval|inspect --out DIR`` writes every
valid task (a run's ``task`` events; every question of a ``skate scp build`` file) with
its answer, setter, round and provenance:

- ``jsonl``: ``tasks.jsonl`` and ``tasks.schema.json`` (the JSON schema of one record);
- ``lm-eval``: an lm-evaluation-harness task (``<task>.yaml``, ``utils.py`` that loads
  ``tasks.jsonl`` beside it): a generation task scored by exact match on the option label or the
  normalised number;
- ``inspect``: an Inspect task file (``<task>.py``, reading ``tasks.jsonl`` beside it).

Each record's ``prompt`` is the question as a solver sees it, the same text skate's own answerer
sends a language model (its input fields in DSPy's ``[[ ## name ## ]]`` sections, with one fixed
option order drawn from the task alone, as ``estimator=greedy`` draws it:
:func:`skate.estimators.base.task_rng` and the game's ``make_query``), after the answerer's instructions
and before a line asking for the answer alone.

The tasks of a game whose answers are executed (PyJail's: a jail's flag is captured by running code
in a sandbox) are left out, since no static harness runs them (the output says how many were left
out and why).

Bad input (a run that has not ended, an unknown format, an ``--out`` folder that exists) is a
:class:`UsageError`; nothing is written then (the files are written into a temporary folder
beside ``--out``, renamed at the end).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from pathlib import Path

from skate.export.formats import WRITERS
from skate.export.tasks import EXECUTED_NOTE, FORMATS, Collected, Exported, UsageError, collect, executed

__all__ = ["EXECUTED_NOTE", "FORMATS", "Collected", "Exported", "UsageError", "export"]


# ------------------------------------------------------------------ writing
def export(source: str | Path, to: str, out: str | Path) -> str:
    """Export ``source`` as ``to`` into the new folder ``out``; the summary (several lines: what
    was written, then what was left out). Raises :class:`UsageError`, writing nothing."""
    if to not in FORMATS:
        raise UsageError(f"unknown --to {to!r}: use one of {', '.join(FORMATS)}")
    out = Path(out)
    if out.exists():
        raise UsageError(f"{out} already exists: give a new --out folder (or remove it first)")
    if not out.parent.is_dir():
        raise UsageError(f"{out.parent} is not an existing folder: create it or choose another --out")
    got = collect(Path(source))
    if not got.tasks:
        notes = "; ".join(EXECUTED_NOTE.format(n=n, game=g) for g, n in got.left_out.items())
        left = f" ({notes})" if notes else ""
        raise UsageError(f"{source} has no task a static harness can check{left}: nothing to export")
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        lines = WRITERS[to](got, tmp, out)
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    by_game = Counter(t.game for t in got.tasks)
    counts = ", ".join(f"{g} {n}" for g, n in sorted(by_game.items()))
    summary = [f"wrote {len(got.tasks)} tasks ({counts}) from {source} as {to} to {out}", *lines]
    for game, n in got.left_out.items():
        summary.append(EXECUTED_NOTE.format(n=n, game=game) if executed(game) else f"left out {n} {game} task(s)")
    return "\n".join(summary)

"""COP practice items: CRUXEval's programs as multiple-choice tasks with known answers.

CRUXEval (facebookresearch/cruxeval, MIT; shipped as ``skate/games/cop/data/cruxeval.jsonl``
with its licence beside it) pairs a function ``f`` with an input and the ``repr`` of ``f(<input>)``. Each
record becomes a COP program, the record's code followed by ``print(f(<input>))``, so its answer
is what that program prints: ``str()`` of the output, which for a string is the bare text, not
its ``repr``. The answer is worked out from the recorded output literal (``ast.literal_eval``),
never by running the code on the host. Records whose output is not a literal, contains a set
(whose printed order depends on how the set was built, and for strings on hash randomisation) or
prints nothing once whitespace is collapsed (COP refuses such programs) are left out.
"""

from __future__ import annotations

import ast
import json
import warnings
from functools import cache
from importlib.resources import files
from typing import Any

import numpy as np

from skate.answers.choice import normalize_text
from skate.games.cop.distractors import make_distractors
from skate.games.cop.rules import COPGame
from skate.runlog.records import Task

PRACTICE_SETTER = "practice"
SOURCE = "cruxeval"


def program(code: str, call_input: str) -> str:
    """The COP program of a CRUXEval record: its code, then a line printing ``f(<input>)``."""
    return f"{code.rstrip()}\n\nprint(f({call_input}))\n"


def _has_set(value: Any) -> bool:
    if isinstance(value, (set, frozenset)):
        return True
    if isinstance(value, dict):
        return any(_has_set(k) or _has_set(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_has_set(v) for v in value)
    return False


def printed(output: str) -> str | None:
    """What ``print`` shows of the value a CRUXEval output literal spells, as COP keeps it (the
    trailing newlines stripped), or None when the record cannot be a COP task (see the module's
    docstring)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = ast.literal_eval(output)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if _has_set(value):
        return None
    text = str(value).rstrip("\n")  # COP's answer is the program's stdout without its final newlines
    return text if normalize_text(text) else None


@cache
def records() -> tuple[dict[str, str], ...]:
    """All CRUXEval records, in file order."""
    text = files("skate.games.cop").joinpath("data", "cruxeval.jsonl").read_text(encoding="utf-8")
    return tuple(json.loads(line) for line in text.splitlines() if line.strip())


@cache
def usable() -> tuple[tuple[str, str, str], ...]:
    """``(id, program, answer)`` of every record that makes a COP task, in file order."""
    out = []
    for rec in records():
        answer = printed(rec["output"])
        if answer is not None:
            out.append((rec["id"], program(rec["code"], rec["input"]), answer))
    return tuple(out)


def practice_tasks(n: int, n_distractors: int, rng: np.random.Generator) -> list[Task]:
    """Up to ``n`` COP tasks from distinct CRUXEval records drawn with ``rng``, each with
    ``n_distractors`` wrong options from the game's own writer (deterministic in ``rng``)."""
    pool = usable()
    tasks = []
    for k, i in enumerate(rng.permutation(len(pool))[: max(0, n)]):
        source_id, code, answer = pool[int(i)]
        tasks.append(
            Task(
                task_id=f"practice-cop-{k}",
                round=0,
                setter=PRACTICE_SETTER,
                prompt=code,
                answer=answer,
                data={
                    "distractors": tuple(make_distractors(answer, n_distractors, rng)),
                    "source": f"{SOURCE}/{source_id}",
                },
            )
        )
    return tasks


def practice(game: COPGame, n: int, rng: np.random.Generator) -> list[Task]:
    """COP's practice tasks (its registered ``practice`` part): up to ``n`` CRUXEval programs as
    COP tasks, from distinct records, each with the game's ``n_distractors`` wrong options from
    its own writer."""
    return practice_tasks(n, game.n_distractors, rng)

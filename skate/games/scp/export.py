"""How ``skate export`` reads SCP's tasks (:class:`~skate.games.base.GameExport`, registered with
the game): a finished run's tasks carry their questions, so they are rendered again in
``player_set`` mode without the age check (the run warned when it was played); each exported
question names where it came from; and a benchmark file that ``skate scp build`` wrote is read as
the provided tasks of one built round (ids ``r001-qNNNN``)."""

from __future__ import annotations

from typing import Any

from skate.games.base import GameExport
from skate.runlog.records import Task

PROVENANCE = ("question_id", "doc", "position", "domain", "type", "doc_date", "doc_date_source", "built")


def provenance(task: Task) -> dict[str, Any]:
    """Where an SCP question came from: its question id, document and place, the benchmark's
    build seed, its groups, and the dates a benchmark expires by (those the task carries)."""
    prov = {k: task.data[k] for k in PROVENANCE if k in task.data}
    if "seed" in task.data:
        prov["build_seed"] = task.data["seed"]
    return prov


def benchmark(path: str) -> dict[str, Any]:
    """The game settings that play the benchmark file ``path`` as one built round."""
    return {"mode": "built", "benchmark": path, "rounds": 1, "max_doc_age_days": None}


EXPORT = GameExport(
    replay={"mode": "player_set", "max_doc_age_days": None},
    provenance=provenance,
    benchmark=benchmark,
    benchmark_source="skate scp build",
)

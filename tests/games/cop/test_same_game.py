"""The default COP game is the same game after COP moved into its own package: same ratings
table, same events (every attempt, task, estimate and rating update), same seed.

The fingerprints in ``golden_games.json`` were made by the code before the move, and remade
once when the program generator began redrawing drafts that print only True/False (COP's
``require_value`` rule); its ``about`` says so.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from skate.config import compose_config
from skate.runner import run_game
from skate.store import read_events

GOLDEN = json.loads((Path(__file__).parent / "golden_games.json").read_text())["games"]


def fingerprint(run_dir: Path) -> tuple[str, dict[str, int]]:
    """SHA-256 over every event but run_start (keys sorted; no timestamps or elapsed time)."""
    h = hashlib.sha256()
    kinds: dict[str, int] = {}
    for e in read_events(run_dir):
        if e["event"] == "run_start":
            continue
        e = {k: v for k, v in e.items() if k != "ts"}
        if e["event"] == "run_end":
            # elapsed time varies; the execution count was added to the summary after the golden run,
            # and why the game ended (ended, ended_detail) to run_end
            e["summary"] = {k: v for k, v in e["summary"].items() if k not in ("elapsed_s", "sandbox_executions")}
            e = {k: v for k, v in e.items() if k not in ("ended", "ended_detail")}
        if e["event"] == "round_end":
            e.pop("order", None)  # how sure the ranking is: added to round_end after the golden run
        kinds[e["event"]] = kinds.get(e["event"], 0) + 1
        h.update(json.dumps(e, sort_keys=True).encode())
    return h.hexdigest(), kinds


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_the_game_is_unchanged(tmp_path, name):
    golden = GOLDEN[name]
    run_game(compose_config([*golden["overrides"], "logger=none", "report=false"]), tmp_path)
    ratings = json.loads((tmp_path / "ratings.json").read_text())
    assert ratings == golden["ratings"]
    digest, kinds = fingerprint(tmp_path)
    assert kinds == golden["kinds"]
    assert digest == golden["digest"]

"""The default COP game is the same game after COP moved into its own package: same ratings
table, same events (every attempt, task, estimate and rating update), same seed.

The fingerprints in ``golden_games.json`` were made by the code before the move, and remade
once when the program generator began redrawing drafts that print only True/False (COP's
``require_value`` rule); its ``about`` says so.

The ratings enter the fingerprint as each task's ``rated`` record (updates made, running count,
every moved player's numbers after them), whichever way the log keeps them: a log per pair
(``events.rating_updates=pair``, and the golden games' own logs) is folded into the same
records, so both kinds of log must give the same fingerprint, bit for bit.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import skate
from skate.cli.compose import edits_of
from skate.runlog.files import read_events
from skate.runner import run_game
from skate.settings.config import SECTIONS

GOLDEN = json.loads((Path(__file__).parent / "golden_games.json").read_text())["games"]


def canonical(events: list[dict]) -> Iterator[dict]:
    """The events with the ratings as one ``rated`` record per task: a run of ``rating`` lines
    (one per pairwise update) becomes the record the per-task log writes for it."""
    roster = [p["name"] for p in events[0].get("players", [])] if events and events[0]["event"] == "run_start" else []
    pending: list[dict] = []

    def fold() -> dict:
        last: dict[str, dict[str, float]] = {}
        for u in pending:
            for side in ("a", "b"):
                last[u[side]] = {k[:-2]: v for k, v in u.items() if k.endswith("_" + side) and k != "p_" + side}
        names = [n for n in roster if n in last]
        keys = list(last[names[0]])
        state = {k: {n: last[n][k] for n in names} for k in keys}
        out = {
            "event": "rated",
            "task_id": pending[0]["task_id"],
            "updates": len(pending),
            "update": pending[-1]["update"],
        }
        if keys:
            out["state"] = state
        pending.clear()
        return out

    for e in events:
        if e["event"] == "rating":
            if pending and pending[-1]["task_id"] != e["task_id"]:
                yield fold()
            pending.append(e)
            continue
        if pending:
            yield fold()
        yield e
    if pending:
        yield fold()


def fingerprint(run_dir: Path) -> tuple[str, dict[str, int]]:
    """SHA-256 over every event but run_start (keys sorted; no timestamps or elapsed time), the
    ratings as per-task records (:func:`canonical`)."""
    h = hashlib.sha256()
    kinds: dict[str, int] = {}
    for e in canonical(read_events(run_dir)):
        if e["event"] == "run_start":
            continue
        e = {k: v for k, v in e.items() if k != "ts"}
        if e["event"] == "run_end":
            # elapsed time varies; the execution count was added to the summary after the golden run,
            # and so were what the tasks told (rejections by reason and their hints, the tasks that
            # separated the players, who answered at a guess: issue 57), and why the game ended
            # (ended, ended_detail) to run_end
            e["summary"] = {
                k: v
                for k, v in e["summary"].items()
                if k not in ("elapsed_s", "sandbox_executions", "rejections", "hints", "separating", "at_guess")
            }
            e = {k: v for k, v in e.items() if k not in ("ended", "ended_detail")}
        if e["event"] == "round_end":
            e.pop("order", None)  # how sure the ranking is: added to round_end after the golden run
        kinds[e["event"]] = kinds.get(e["event"], 0) + 1
        h.update(json.dumps(e, sort_keys=True).encode())
    return h.hexdigest(), kinds


def golden_settings(overrides: list[str]) -> skate.SkateConfig:
    """A golden game's settings: the command line it was recorded as (``seed=2 estimator=decided``),
    read as the command line reads it (a group's option, or a key's value), without W&B or report."""
    edits = edits_of(overrides)
    choices = {k: v for k, v in edits.items() if k in (*SECTIONS, "experiment")}
    values = {k: v for k, v in edits.items() if k not in choices}
    return skate.config(values={**values, "report": False}, **{**choices, "logger": "none"})


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_the_game_is_unchanged(tmp_path, name):
    golden = GOLDEN[name]
    run_game(golden_settings(golden["overrides"]), tmp_path)
    ratings = json.loads((tmp_path / "ratings.json").read_text())
    assert ratings == golden["ratings"]
    digest, kinds = fingerprint(tmp_path)
    assert kinds == golden["kinds"]
    assert digest == golden["digest"]


def test_a_log_per_pair_folds_into_the_same_fingerprint(tmp_path):
    """The same short game logged per task and per pair: the same ratings and fingerprint."""
    prints = []
    for kind in ("task", "pair"):
        out = tmp_path / kind
        run_game(
            skate.config(
                values={"seed": 1, "game.rounds": 2, "report": False, "events.rating_updates": kind}, logger="none"
            ),
            out,
        )
        prints.append((json.loads((out / "ratings.json").read_text()), fingerprint(out)))
        kinds = {e["event"] for e in read_events(out)}
        assert ("rating" in kinds, "rated" in kinds) == ((False, True) if kind == "task" else (True, False))
    assert prints[0] == prints[1]

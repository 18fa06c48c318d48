"""skate scp stability's library: the settings it keeps to itself, every seed's rows as a CSV file."""

from __future__ import annotations

import csv
import dataclasses

import pytest

from skate.games.scp.config import SCPConfig
from skate.tools.scp.study import OWNED, UsageError, write_per_seed


def test_the_settings_the_study_owns_are_the_games():
    fields = {f.name for f in dataclasses.fields(SCPConfig)}
    assert OWNED[0] == "game" and {k.removeprefix("game.") for k in OWNED[1:]} <= fields
    assert {"game.docs", "game.per_doc", "game.types", "game.build_seed"} <= set(OWNED)  # what stability sets


def test_every_seeds_rows_are_written_as_csv_and_an_unwritable_file_is_one_line(tmp_path):
    rows = [
        {"seed": 0, "player": "ace", "questions": 9, "void": 0, "accuracy": 88.9, "expected": 90.1},
        {"seed": 0, "player": "m", "questions": 9, "void": 1, "accuracy": 50.0},
    ]
    write_per_seed(rows, tmp_path / "s.csv")
    with open(tmp_path / "s.csv", newline="") as fh:
        got = list(csv.DictReader(fh))
    assert [(r["player"], r["accuracy"], r["expected"]) for r in got] == [("ace", "88.9", "90.1"), ("m", "50.0", "")]
    with pytest.raises(UsageError, match=r"^cannot write .*nowhere/s\.csv: "):
        write_per_seed(rows, tmp_path / "nowhere" / "s.csv")

"""Console progress: plain lines every few rounds without a terminal, a rich bar with one."""

from __future__ import annotations

import logging

import pytest

from skate.loggers.console import ConsoleLogger


def test_plain_progress_lines_without_a_terminal(caplog):
    caplog.set_level(logging.INFO, logger="skate")
    c = ConsoleLogger(every=2, progress="auto")  # pytest's stderr is not a terminal
    assert not c.rich
    summary = {"tasks": 3, "attempts": 4, "samples": 50}
    for r in (1, 2, 3):
        c.round_end(r, 3, summary, [{"player": "x"}])
    lines = [m for m in caplog.messages if m.startswith("round")]
    assert lines == ["round 2/3: 3 valid tasks so far, 4 attempts, 50 answer samples; leader x",
                     "round 3/3: 3 valid tasks so far, 4 attempts, 50 answer samples; leader x"]
    with pytest.raises(ValueError, match="progress"):
        ConsoleLogger(progress="fancy")


def test_rich_progress_bar_runs(capsys):
    c = ConsoleLogger(progress="rich")
    c.start({"game": "cop", "players": [1, 2], "rounds": 2, "rating": "r", "aug": "a", "sandbox": "s", "seed": 0})
    c.round_end(1, 2, {"tasks": 1, "attempts": 1, "samples": 5}, [{"player": "x"}])
    c.close()

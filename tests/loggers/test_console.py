"""Console progress: plain lines every few rounds without a terminal, a rich bar with one; the
wait for a model that stopped answering in either."""

from __future__ import annotations

import logging

import pytest

from skate.errors import SettingError
from skate.loggers.console import ConsoleLogger, ConsoleLoggerConfig


def test_plain_progress_lines_without_a_terminal(caplog):
    caplog.set_level(logging.INFO, logger="skate")
    c = ConsoleLogger(every=2, progress="auto")  # pytest's stderr is not a terminal
    assert not c.rich
    summary = {"tasks": 3, "attempts": 4, "samples": 50}
    for r in (1, 2, 3):
        c.round_end(r, 3, summary, [{"player": "x"}])
    lines = [m for m in caplog.messages if m.startswith("round")]
    assert lines == [
        "round 2/3: 3 valid tasks so far, 4 attempts, 50 answer samples; leader x",
        "round 3/3: 3 valid tasks so far, 4 attempts, 50 answer samples; leader x",
    ]
    with pytest.raises(ValueError, match="progress"):
        ConsoleLogger(progress="fancy")


def test_the_progress_names_a_leader_only_once_someone_is_rated(caplog):
    caplog.set_level(logging.INFO, logger="skate")
    c = ConsoleLogger(every=1, progress="plain")
    summary = {"tasks": 0, "attempts": 4, "samples": 0}
    c.round_end(1, 2, summary, [{"player": "x", "rank": None, "no_data": True}, {"player": "y", "no_data": True}])
    c.round_end(2, 2, {**summary, "tasks": 1}, [{"player": "y", "rank": 1}, {"player": "x", "no_data": True}])
    assert [m.rsplit("; ", 1)[1] for m in caplog.messages if m.startswith("round")] == ["no one rated yet", "leader y"]


def test_rich_progress_bar_runs(capsys):
    c = ConsoleLogger(progress="rich")
    c.start({"game": "cop", "players": [1, 2], "rounds": 2, "rating": "r", "aug": "a", "sandbox": "s", "seed": 0})
    c.round_end(1, 2, {"tasks": 1, "attempts": 1, "samples": 5}, [{"player": "x"}])
    c.close()


def outage(state, down_s, model="openai/mid"):
    return {
        "state": state,
        "model": model,
        "endpoint": "http://gpu-box:8000/v1",
        "down_s": down_s,
        "probes": 1,
        "held": 2,
        "wait_s": 600.0,
    }


def test_the_wait_for_a_model_that_is_down_shows_in_plain_lines_at_each_probe(caplog):
    caplog.set_level(logging.INFO, logger="skate")
    c = ConsoleLogger(progress="plain")
    for info in (outage("down", 0.0), outage("waiting", 5.5), outage("waiting", 40.2), outage("up", 47.0)):
        c.outage(info)
    assert [m for m in caplog.messages if m.startswith("waiting")] == [
        "waiting for openai/mid (down 5.5 s, gives up at 600 s)",
        "waiting for openai/mid (down 40 s, gives up at 600 s)",
    ]


def test_the_bar_says_which_models_it_waits_for_and_goes_back_to_the_game_when_they_answer():
    c = ConsoleLogger(progress="rich")
    c.start({"game": "cop", "players": [1, 2], "rounds": 2, "rating": "r", "aug": "a", "sandbox": "s", "seed": 0})
    c.round_end(1, 2, {"tasks": 1, "attempts": 1, "samples": 5}, [{"player": "x"}])

    def status():
        return c._bar.tasks[0].fields["status"]

    c.outage(outage("waiting", 40.0))
    c.outage(outage("waiting", 12.0, model="openai/ace"))
    assert status() == (
        "waiting for openai/mid (down 40 s, gives up at 600 s); waiting for openai/ace (down 12 s, gives up at 600 s)"
    )
    c.outage(outage("up", 45.0))
    c.outage(outage("gave_up", 600.0, model="openai/ace"))
    assert status() == "1 tasks, 5 samples, leader x"
    c.close()


def test_a_logger_is_built_from_its_settings_or_their_keys():
    assert ConsoleLogger(ConsoleLoggerConfig(every=3, progress="plain")).every == ConsoleLogger(every=3).every == 3
    assert ConsoleLogger().settings == ConsoleLoggerConfig()
    with pytest.raises(SettingError, match="evry"):
        ConsoleLogger(evry=3)

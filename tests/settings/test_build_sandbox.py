"""A game that runs no program (mathquiz, SCP) is played without a sandbox: none is started, so
a sandbox that cannot work here does not stop it, and its record says no program ran. A game that
runs programs still gets the configured sandbox and still fails in one line without one."""

from __future__ import annotations

import contextlib

import pytest

import skate
from skate.games import load_games
from skate.runlog.events import read_start
from skate.runlog.files import EventLog
from skate.runner import run_game
from skate.sandbox import NoSandbox, SandboxError, SandboxUnavailable
from skate.settings.build import assemble, build_table

BROKEN = {"sandbox.binary": "/nonexistent/nsjail"}  # with sandbox=nsjail


@pytest.mark.parametrize("game", ["mathquiz", "scp"])
def test_a_game_without_programs_plays_where_no_sandbox_works(game, tmp_path):
    run_game(
        skate.config(values={"game.rounds": 1, "report": False, **BROKEN}, game=game, logger="none", sandbox="nsjail"),
        tmp_path,
    )
    start = read_start(tmp_path)
    assert start.sandbox == "none" and start.sandbox_detail == "none (the game runs no program)"
    assert (tmp_path / "ratings.json").exists()


def test_a_game_with_programs_still_needs_its_sandbox(tmp_path):
    settings = skate.config(values=BROKEN, game="cop", sandbox="nsjail")
    with contextlib.ExitStack() as cleanup, pytest.raises(SandboxUnavailable, match="/nonexistent/nsjail"):
        build_table(settings, cleanup)
    with contextlib.ExitStack() as cleanup, pytest.raises(SandboxUnavailable, match="/nonexistent/nsjail"):
        assemble(settings, cleanup, EventLog(tmp_path / "events.jsonl"))
    assert not (tmp_path / "events.jsonl").exists()  # nothing written, nothing opened


def test_each_game_says_whether_it_runs_programs_and_no_sandbox_runs_none():
    says = {name: cls.runs_programs for name, cls in load_games().items()}
    assert all(isinstance(v, bool) for v in says.values()) and set(says.values()) == {True, False}, says
    with pytest.raises(SandboxError, match="runs no program"):
        NoSandbox().run("print(1)")

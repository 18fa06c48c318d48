"""Whole PyJail games on simulated players: from the command line, in the hardened sandbox;
every jail really broken by its setter's recorded input; no flag anywhere in the run folder; the
unisolated sandbox refused unless asked for; the run rated again with ZeroSumEval's rule."""

from __future__ import annotations

import re

import pytest

import skate
from skate.games.pyjail import PyJailGame, TryVerdict
from skate.players.config import SimPlayerConfig
from skate.runlog.files import read_events
from skate.runner import run_game
from skate.settings.recorded import rate_run
from tests.cli.test_play import skate as skate_command

FLAG = re.compile(r"skate\{[0-9a-f]{32}\}")
FOUR = (
    "players.simulated=[{name: ace, skill: 0.9}, {name: good, skill: 0.66}, {name: fair, skill: 0.5},"
    " {name: weak, skill: 0.3}]"
)  # on the command line
FOUR_PLAYERS = [
    SimPlayerConfig(name="ace", skill=0.9),
    SimPlayerConfig(name="good", skill=0.66),
    SimPlayerConfig(name="fair", skill=0.5),
    SimPlayerConfig(name="weak", skill=0.3),
]


@pytest.fixture(scope="module")
def game(tmp_path_factory):
    out = tmp_path_factory.mktemp("pyjail")
    result = run_game(
        skate.config(
            values={"game.rounds": 2, "seed": 1, "players.simulated": FOUR_PLAYERS, "estimator.n": 6},
            game="pyjail",
            logger="none",
            estimator="fixed_n",
        ),
        out,
    )
    return out, result, read_events(out)


def test_every_jail_falls_to_its_setters_recorded_input(game, sandbox):
    _, _, events = game
    start = events[0]
    assert start["game"] == "pyjail" and start["sandbox_detail"]
    assert set(start["sandbox_bounds"]) == {"memory", "tmp", "system_calls"}
    tasks = [e for e in events if e["event"] == "task"]
    assert len(tasks) >= 6
    g = PyJailGame()
    for t in tasks:
        assert g.run_try(sandbox, t["prompt"], t["setter_solution"]).verdict is TryVerdict.CAPTURED
    est = [e for e in events if e["event"] == "estimate"]
    assert len(est) == 4 * len(tasks) and all(e["n"] == 6 for e in est)
    ps = [e["p"] for e in est]
    assert min(ps) < 0.5 < max(ps)  # some jails hold against some attackers, some fall


def test_no_flag_is_written_anywhere(game):
    out, _, _ = game
    for path in out.rglob("*"):
        if path.is_file():
            assert not FLAG.search(path.read_text(errors="replace")), path


def test_the_run_is_rated_again_with_setter_vs_solver(game):
    out, _, _ = game
    name, rows = rate_run(out, {"rating.outcome": "setter_vs_solver"})
    assert len(rows) == 4 and all(r["games"] > 0 for r in rows)


def test_the_command_line_game_and_the_unisolated_sandbox(tmp_path):
    refused = skate_command(
        "game=pyjail",
        "game.rounds=1",
        "sandbox=subprocess",
        "logger=none",
        f"hydra.run.dir={tmp_path / 'refused'}",
        cwd=tmp_path,
    )
    assert refused.returncode == 2
    assert "not a security boundary" in refused.stderr and "game.allow_unsafe_sandbox=true" in refused.stderr
    assert not (tmp_path / "refused" / "events.jsonl").exists()
    ok = skate_command(
        "game=pyjail",
        "game.rounds=1",
        "logger=none",
        "report=false",
        FOUR,
        "estimator=fixed_n",
        "estimator.n=3",
        f"hydra.run.dir={tmp_path / 'ok'}",
        cwd=tmp_path,
    )
    assert ok.returncode == 0, ok.stderr
    assert "rank  player" in ok.stdout

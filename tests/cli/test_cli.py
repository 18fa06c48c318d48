"""``skate <command>``: one console entry (skate/cli/), every tool listed by ``--help``, and the
``python -m skate.<tool>`` aliases users already type."""

from __future__ import annotations

import importlib
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from skate.cli import COMMANDS, command_of, commands, run
from skate.games import load_games

SKATE = Path(sys.executable).parent / "skate"  # the console script pyproject.toml installs


def test_skate_help_lists_every_command_and_a_wrong_word_gets_the_list():
    out = subprocess.run([str(SKATE), "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0
    block = out.stdout.split("commands:\n", 1)[1].split("\n\n", 1)[0]
    listed = [line.split()[0] for line in block.splitlines()]
    assert listed == list(COMMANDS)
    bad = subprocess.run([str(SKATE), "rat", "RUN"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.startswith("skate: 'rat' is not a command") and "rate " in bad.stderr


@pytest.mark.parametrize("name", [n for n in COMMANDS if n not in ("play", "optimize")])
def test_every_command_answers_help(name, capsys):
    with pytest.raises(SystemExit) as exc:
        run(name, ["--help"])
    assert exc.value.code == 0
    assert "usage:" in capsys.readouterr().out


def test_overrides_and_hydra_flags_play_a_game():
    assert command_of(["game=cop", "seed=2"]) == ("play", ["game=cop", "seed=2"])
    assert command_of(["-m", "seed=1,2"]) == ("play", ["-m", "seed=1,2"])
    assert command_of([]) == ("play", [])
    assert command_of(["rate", "RUN"]) == ("rate", ["RUN"])


@pytest.mark.parametrize(("alias", "command"), [
    ("skate.rate", "rate"), ("skate.sensitivity", "sensitivity"), ("skate.local", "local"),
    ("skate.rugged", "rugged"), ("skate.scp", "scp"), ("skate.export.__main__", "export"),
    ("skate.report.__main__", "report"), ("skate.sandbox.__main__", "sandbox"),
])
def test_python_dash_m_aliases_run_the_commands(alias, command):
    module, _, function = COMMANDS[command][0].partition(":")
    assert importlib.import_module(alias).main is getattr(importlib.import_module(module), function)


def test_a_games_commands_are_skate_commands_and_a_clash_names_both(monkeypatch):
    scp = load_games()["scp"]
    assert COMMANDS["scp"] == scp.commands["scp"] and COMMANDS["rugged"] == scp.commands["rugged"]
    assert command_of(["rugged", "scores.csv"]) == ("rugged", ["scores.csv"])
    monkeypatch.setattr(scp, "commands", {**scp.commands, "rate": ("skate.tools.scp.cli:main", "a clash")})
    with pytest.raises(ValueError, match=r"^game=scp registers the command 'rate', which skate already has: rename"):
        commands()


@pytest.mark.parametrize(("alias", "command"), [("skate.scp", "scp"), ("skate.rugged", "rugged")])
def test_the_old_names_of_a_games_commands_warn_once_and_run_them(alias, command, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", [alias, "--help"])
    monkeypatch.delitem(sys.modules, alias, raising=False)  # run as python -m runs it: a fresh __main__
    with pytest.warns(DeprecationWarning) as got, pytest.raises(SystemExit) as exc:
        runpy.run_module(alias, run_name="__main__")
    said = [str(w.message) for w in got if w.category is DeprecationWarning]
    assert said == [f"python -m {alias} is deprecated and will be removed: type skate {command} instead"]
    assert exc.value.code == 0 and f"usage: skate {command}" in capsys.readouterr().out


def test_skate_play_help_shows_the_config_groups():
    out = subprocess.run([str(SKATE), "play", "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "rating: " in out.stdout and f"game: {', '.join(sorted(load_games()))}" in out.stdout

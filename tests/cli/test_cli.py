"""``skate <command>``: one console entry (skate/cli/), every tool listed by ``--help``, and the
``python -m skate.<tool>`` aliases of earlier releases, which say what replaced them."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from skate.cli import command_of, commands, main, parse_with_overrides, run
from skate.games import load_games

SKATE = Path(sys.executable).parent / "skate"  # the console script pyproject.toml installs


def test_skate_help_lists_every_command_and_a_wrong_word_gets_the_list():
    out = subprocess.run([str(SKATE), "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0
    block = out.stdout.split("commands:\n", 1)[1].split("\n\n", 1)[0]
    listed = [line.split()[0] for line in block.splitlines()]
    assert listed == list(commands())
    bad = subprocess.run([str(SKATE), "rat", "RUN"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.startswith("skate: 'rat' is not a command") and "rate " in bad.stderr


@pytest.mark.parametrize("name", [n for n in commands() if n not in ("play", "optimize")])
def test_every_command_answers_help(name, capsys):
    with pytest.raises(SystemExit) as exc:
        run(name, ["--help"])
    assert exc.value.code == 0
    assert "usage:" in capsys.readouterr().out


@pytest.fixture
def root_logging():
    """Hydra sets the root logger's handlers up on the stream it finds (here, the test's captured
    stderr): they are put back, so later tests do not log to a closed stream."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.mark.parametrize("name", ["play", "optimize"])
def test_the_hydra_apps_take_their_arguments_and_leave_the_process_argv_alone(name, capsys, monkeypatch, root_logging):
    """play and optimize are main(argv) -> int like every command: Hydra sees their arguments
    while it runs, and the process's sys.argv is as it was afterwards (here, after --help's exit)."""
    monkeypatch.setattr(sys, "argv", ["outer", "untouched"])
    with pytest.raises(SystemExit) as exc:
        run(name, ["game=mathquiz", "--help"])
    assert exc.value.code in (0, None)
    out = capsys.readouterr().out
    assert "== Configuration groups ==" in out and "name: mathquiz" in out  # the override was seen
    assert f"game: {', '.join(sorted(load_games()))}\n" in out  # every registered game is an option
    assert sys.argv == ["outer", "untouched"]


def test_the_entry_returns_its_status_instead_of_exiting(capsys):
    assert main(["--help"]) == 0
    block = capsys.readouterr().out.split("commands:\n", 1)[1].split("\n\n", 1)[0]
    assert [line.split()[0] for line in block.splitlines()] == list(commands())  # a game's own among them
    assert main(["rat", "RUN"]) == 2 and "'rat' is not a command" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "overrides"),
    [
        (["add", "openai/m", "--name", "X", "llm.cache_dir=c"], ["llm.cache_dir=c"]),  # after the options
        (["add", "openai/m", "a=1", "--name", "X", "+b=2", "~c"], ["a=1", "+b=2", "~c"]),  # around them, in order
        (["add", "--name", "X", "openai/m", "a=1"], ["a=1"]),
    ],
)
def test_a_commands_overrides_may_come_anywhere_among_its_options(argv, overrides):
    from skate.cli.leaderboard import parser

    args = parse_with_overrides(parser(), argv)
    assert (args.model, args.name, args.overrides) == ("openai/m", "X", overrides)


@pytest.mark.parametrize(
    ("argv", "refused"),
    [
        (["add", "openai/m", "--nmae", "X"], "unrecognized arguments: --nmae X"),
        (["show", "a=1"], "unrecognized arguments: a=1"),  # show takes no overrides
    ],
)
def test_what_is_neither_an_option_nor_an_override_is_refused_in_one_line(argv, refused, capsys):
    from skate.cli.leaderboard import parser

    with pytest.raises(SystemExit) as exc:
        parse_with_overrides(parser(), argv)
    assert exc.value.code == 2 and capsys.readouterr().err.strip().splitlines()[-1].endswith(refused)


def test_the_sandbox_command_takes_its_overrides_after_its_options(tmp_path, capsys):
    from skate.cli.sandbox import main as sandbox

    program = tmp_path / "p.py"
    program.write_text("print(6 * 7)\n")
    assert sandbox([str(program), "--json", "sandbox=subprocess"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["sandbox"], got["stdout"]) == ("subprocess", "42\n")


def test_overrides_and_hydra_flags_play_a_game():
    assert command_of(["game=cop", "seed=2"]) == ("play", ["game=cop", "seed=2"])
    assert command_of(["-m", "seed=1,2"]) == ("play", ["-m", "seed=1,2"])
    assert command_of([]) == ("play", [])
    assert command_of(["rate", "RUN"]) == ("rate", ["RUN"])


def test_a_games_commands_are_skate_commands_and_a_clash_names_both(monkeypatch):
    scp = load_games()["scp"]
    assert commands()["scp"] == scp.commands["scp"] and commands()["rugged"] == scp.commands["rugged"]
    assert command_of(["rugged", "scores.csv"]) == ("rugged", ["scores.csv"])
    monkeypatch.setattr(scp, "commands", {**scp.commands, "rate": ("skate.cli.scp:main", "a clash")})
    with pytest.raises(ValueError, match=r"^game=scp registers the command 'rate', which skate already has: rename"):
        commands()


def test_skate_play_help_shows_the_config_groups():
    out = subprocess.run([str(SKATE), "play", "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "rating: " in out.stdout and f"game: {', '.join(sorted(load_games()))}" in out.stdout
    groups = out.stdout.split("== Configuration groups ==", 1)[1].split("== Config ==", 1)[0]
    # only the options a user chooses: not the schemas they extend, not Hydra's own groups
    assert "rating: bradley_terry, elo, irt, trueskill, ttt, zerosumeval\n" in groups
    assert "aug: full_context, full_personal, hist_perf, hist_tasks, no_info\n" in groups
    assert "schema" not in groups and "hydra/" not in groups

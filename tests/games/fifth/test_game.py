"""``game=fifth`` (game.py, beside this file): a game registered from outside skate, the way an
installed game package is (its distribution's ``skate.games`` entry point, written here into a
temporary folder on the import path). With it present, the tests outside its folder that go over
every game (conformance, config errors, the command list and each command's help, ``skate play
--help``, the sandbox, the zerosumeval preset, answerer reasoning) pass with no edit, and its own
command runs as ``skate fifth-words``. All of it runs in one subprocess, so the rest of the suite
plays the four games it always did."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
# The tests outside this folder that go over every game (those that do not, deselected by -k).
OVER_EVERY_GAME = [
    "tests/games/test_games_conformance.py",
    "tests/cli/test_compose.py::test_each_refusal_is_one_line_saying_what_to_write",
    "tests/cli/test_cli.py::test_the_entry_returns_its_status_instead_of_exiting",  # skate --help lists it
    "tests/cli/test_cli.py::test_every_command_answers_help",
    "tests/cli/test_cli.py::test_the_hydra_apps_take_their_arguments_and_leave_the_process_argv_alone",  # play --help
    "tests/settings/test_build_sandbox.py::test_each_game_says_whether_it_runs_programs_and_no_sandbox_runs_none",
    "tests/test_engine_schedule.py::test_the_zerosumeval_preset_composes",
    "tests/llm/test_modules_reasoning.py::test_each_game_has_a_reasoning_key_and_its_answerer_follows_it",
    # and its own command, where it is installed
    "tests/games/fifth/test_game.py::test_its_own_command_runs_as_a_skate_command",
]
SELECT = "fifth or nope or entry_returns or hydra_apps or runs_programs or own_command"


def installed(tmp_path: Path) -> dict[str, str]:
    """The environment of a process in which the fifth game is installed: a distribution's
    metadata with the entry point, on the import path before the repository."""
    dist = tmp_path / "site" / "skate_fifth-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: skate-fifth\nVersion: 0\n")
    (dist / "entry_points.txt").write_text("[skate.games]\nfifth = tests.games.fifth.game\n")
    path = [str(tmp_path / "site"), str(ROOT), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in path if p), "COLUMNS": "1000"}  # whole test ids


def test_the_tests_that_go_over_every_game_pass_with_a_fifth_game_installed(tmp_path):
    env = installed(tmp_path)
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA", "-x", *OVER_EVERY_GAME, "-k", SELECT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stdout[-3000:]
    passed = re.findall(r"^PASSED (.+?)\s*$", res.stdout, flags=re.M)
    conformance = [t for t in passed if t.startswith("tests/games/test_games_conformance.py") and t.endswith("[fifth]")]
    assert len(conformance) >= 16, passed  # every conformance test, for the fifth game too
    assert "tests/cli/test_cli.py::test_every_command_answers_help[fifth-words]" in passed
    assert "tests/test_engine_schedule.py::test_the_zerosumeval_preset_composes[fifth]" in passed
    assert "tests/games/fifth/test_game.py::test_its_own_command_runs_as_a_skate_command" in passed
    assert (
        "tests/cli/test_cli.py::test_the_hydra_apps_take_their_arguments_and_leave_the_process_argv_alone[play]"
        in passed
    )
    assert any("choose one of cop, fifth, mathquiz" in t for t in passed), passed  # the refusal lists it
    assert not re.search(r"^(FAILED|ERROR) ", res.stdout, flags=re.M)


def test_its_own_command_runs_as_a_skate_command(capsys):
    """Run by the subprocess above, where the fifth game is installed (skipped elsewhere)."""
    from skate.cli import main
    from skate.games import load_games

    if "fifth" not in load_games():
        pytest.skip("the fifth game is installed only in the subprocess of the test above")
    assert main(["fifth-words", "--longest", "2"]) == 0
    assert capsys.readouterr().out.split() == ["extraordinarily", "incomprehensibilities"]

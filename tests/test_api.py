"""skate from Python, as a user calls it: ``skate.SkateConfig()`` is the game ``skate`` plays with
no overrides, sections built and edited as dataclasses, ``skate.play`` plays and returns the game,
``skate.load_run`` reads any run folder back and ``skate.rate`` rates it again; bad input is the
command line's one line, as an exception."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

import skate
from skate.errors import ConfigError
from skate.games.mathquiz.config import MathQuizConfig
from skate.loggers.base import logger
from skate.ratings.elo import EloConfig
from skate.settings.config import record_of
from skate.settings.options import settle
from skate.settings.recorded import rate_run

QUIET = {"logger": lambda: logger.get("none").schema(), "report": False, "print_table": False}


def quiet(**sections):
    return skate.SkateConfig(**{k: (v() if callable(v) else v) for k, v in QUIET.items()}, **sections)


# The command line's settings are skate.config's here: tests/settings/test_options.py checks that
# skate.config composes what Hydra does (every option of every group, every experiment, the local
# cohort with each game, values), so no test here starts a command line to compare with.
def test_the_default_settings_are_the_game_skate_plays_with_no_overrides():
    composed = skate.config()  # `skate` with no overrides
    assert record_of(settle(skate.SkateConfig())) == record_of(composed)
    assert skate.SkateConfig().players.simulated[0].name == "sim-ace"  # the default cohort
    # and each section is its option's schema, as composed
    assert [type(getattr(skate.SkateConfig(), f.name)) for f in dataclasses.fields(composed)] == [
        type(getattr(composed, f.name)) for f in dataclasses.fields(composed)
    ]


def test_import_skate_loads_no_game_until_it_is_used():
    code = "import sys, skate; print('skate.runner' in sys.modules, 'skate.games' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    out = tmp_path_factory.mktemp("api") / "mathquiz"
    return skate.play(quiz := quiet(game=MathQuizConfig(rounds=3), seed=2), out), quiz


def test_play_plays_the_settings_given_and_returns_the_game(played):
    game, settings = played
    assert game.run_dir.is_dir() and json.loads((game.run_dir / "ratings.json").read_text()) == game.ratings
    assert game.ratings[0]["rank"] == 1 and game.summary["tasks"] == len(game.result.archive) > 0
    start = json.loads((game.run_dir / "events.jsonl").read_text().splitlines()[0])
    assert start["game"] == "mathquiz" and start["rounds"] == 3 and start["seed"] == 2
    # the same game as the command line's (skate game=mathquiz game.rounds=3 seed=2 logger=none ...)
    cli = skate.config(
        game="mathquiz", logger="none", values={"game.rounds": 3, "seed": 2, "report": False, "print_table": False}
    )
    assert record_of(settle(settings)) == record_of(cli)
    assert settings.game.rounds == 3  # the caller's settings are not changed


def test_load_run_reads_a_run_back_and_rate_rates_it_again(played):
    game, _ = played
    run = skate.load_run(game.run_dir)
    assert run.finished and set(run.players) == {r["player"] for r in run.ratings}
    assert isinstance(run.settings.game, MathQuizConfig) and run.settings.game.rounds == 3
    assert len(run.tasks) == game.summary["tasks"] and {e.task_id for e in run.estimates} == {
        t.task_id for t in run.tasks
    }
    assert [r["player"] for r in skate.rate(run)] == [
        r["player"] for r in game.ratings
    ]  # its own rating: the live table
    elo = skate.rate(game.run_dir, EloConfig())
    assert elo == rate_run(game.run_dir, {"rating": "elo"})[1]  # what skate rate RUN_DIR rating=elo gives
    absolute = skate.rate(run, dataclasses.replace(run.settings.rating, outcome="absolute"))
    assert len(absolute) == len(run.players)


def test_bad_settings_are_the_command_line_s_one_line(tmp_path):
    with pytest.raises(ConfigError, match=r"game\.rounds"):
        skate.play(quiet(game=MathQuizConfig(rounds=0)), tmp_path / "a")
    with pytest.raises(ConfigError, match=r"game\.rounds: .*ten"):
        skate.play(quiet(game=MathQuizConfig(rounds="ten")), tmp_path / "b")  # type: ignore[arg-type]
    with pytest.raises(
        ConfigError, match=r"^gaem is not a setting of SkateConfig \(did you mean game\?\); its settings: aug, "
    ):
        skate.SkateConfig(gaem=MathQuizConfig())  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"roundz is not a setting of MathQuizConfig \(did you mean rounds\?\)"):
        MathQuizConfig(roundz=3)  # type: ignore[call-arg]  (a SettingError is a TypeError too, as Python's own)
    with pytest.raises(TypeError, match="play takes a SkateConfig"):
        skate.play({"game": "mathquiz"}, tmp_path / "c")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="has no events.jsonl"):
        skate.load_run(tmp_path)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_game_s_settings_from_the_yaml_presets_as_the_command_line_composes_them():
    local = skate.config(players="local_cohort", game="mathquiz", values={"game.rounds": 2})
    assert local.game.rounds == 2  # (tests/settings/test_options.py: the same settings as Hydra's composition)
    assert local.aug.strategy.value == "no_info" and local.game.recipe  # the cohort's own choices and preset
    cohort = skate.preset("local_cohort")
    assert cohort.llm == local.players.llm  # (the game's preset adds setter_repair: resample for MathQuiz)
    assert cohort.setter_repair is None and local.players.setter_repair == "resample"
    assert isinstance(skate.SkateConfig(players=cohort).players, type(cohort))

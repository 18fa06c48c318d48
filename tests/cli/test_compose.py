"""The command line's composition (skate.cli.compose): a config that cannot be composed gets one
line naming the key or option and what to write instead (describe_config_error), for every way
Hydra refuses one; a key added with ``+`` that no schema has is refused before anything is built;
the help lists each group's options."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hydra.errors import ConfigCompositionException, MissingConfigException, OverrideParseException

from skate.cli.compose import compose_config, describe_config_error, settings_from, user_groups
from skate.errors import ConfigError
from skate.games import load_games
from skate.settings.options import build_settings

GAMES = ", ".join(sorted(load_games()))  # Hydra lists a group's options in this order


@pytest.mark.parametrize(
    "override, line",
    [
        ("game=nope", f"game=nope is not an option of game: choose one of {GAMES}"),
        (
            "players=paper_fuor",
            "players=paper_fuor is not an option of players: did you mean players=paper_four? "
            "choose one of fake_local, frontier, local, local_cohort, local_tiny, paper_four, paper_six, simulated, "
            "simulated_four, subset_a, subset_b, subset_c, subset_d",
        ),
        (
            "game.roundz=3",
            "game.roundz is not a setting of COPConfig (did you mean game.rounds?); its settings: "
            "attempts, determinism_runs, fill_distractors, n_distractors, n_options, name, reasoning, require_value, rounds, self_check, "
            "topic_families, topics",
        ),
        (
            "players.simulated.0.skil=0.5",
            "players.simulated[0].skil is not a setting of SimPlayerConfig (did you mean "
            "players.simulated[0].skill?); its settings: name, noise, pitch, skill, slip, "
            "sloppiness, topic_skill",
        ),
        # the schemas an option extends are no options (they were stored beside them as <option>_schema)
        (
            "rating=elo_schema",
            "rating=elo_schema is not an option of rating: did you mean rating=elo? choose one of "
            "bradley_terry, elo, irt, trueskill, ttt, zerosumeval",
        ),
        (
            "aug=aug_schema",
            "aug=aug_schema is not an option of aug: choose one of full_context, full_personal, hist_perf, "
            "hist_tasks, no_info",
        ),
        ("game.rounds=abc", "game.rounds: Value 'abc' of type 'str' could not be converted to Integer"),
        (
            "game.rounds=[1",
            "cannot read an override: no viable alternative at input '[1' (write key=value; quote values with spaces)",
        ),
    ],
)
def test_each_refusal_is_one_line_saying_what_to_write(override, line):
    with pytest.raises((ConfigCompositionException, MissingConfigException, OverrideParseException)) as err:
        compose_config([override])
    assert describe_config_error(err.value) == line


def test_a_key_added_with_plus_that_no_schema_has_is_refused():
    cfg = compose_config(["+game.x=1"])  # Hydra lets it through: + lifts the schema's guard
    with pytest.raises(ConfigError, match=r"^game\.x is not a setting of COPConfig; its settings: attempts, "):
        build_settings(cfg)
    with pytest.raises(
        ConfigError,
        match=r"^players\.simulated\[1\]\.skil is not a setting of SimPlayerConfig "
        r"\(did you mean players\.simulated\[1\]\.skill\?\)",
    ):
        settings_from(["+players.simulated.1.skil=0.5"])
    settings_from(["game=scp", "game.rounds=2"])  # every key of a real config is known


# ------------------------------------------------------------------ python -m skate, through Hydra's public switches
def test_around_the_app_a_composing_error_is_one_line_and_hydra_s_switch_is_put_back(monkeypatch, capsys):
    from skate.cli.play import _one_line_config_errors

    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    with pytest.raises(SystemExit) as done, _one_line_config_errors():
        assert os.environ["HYDRA_FULL_ERROR"] == "1"  # Hydra lets the error through to skate
        compose_config(["game=copp"])
    assert done.value.code == 2 and "HYDRA_FULL_ERROR" not in os.environ
    assert capsys.readouterr().err == (
        f"skate: config error: game=copp is not an option of game: did you mean game=cop? choose one of {GAMES}\n"
    )
    with pytest.raises(RuntimeError, match="a game crashed"), _one_line_config_errors():
        raise RuntimeError("a game crashed")  # not a config error: its traceback goes on
    assert "HYDRA_FULL_ERROR" not in os.environ


def test_hydra_full_error_set_by_the_user_still_shows_hydra_s_whole_error(tmp_path):
    env = {**os.environ, "HYDRA_FULL_ERROR": "1"}
    res = subprocess.run(
        [sys.executable, "-m", "skate", "game=copp", f"hydra.run.dir={tmp_path / 'r'}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert res.returncode == 1
    assert (
        "Traceback" in res.stderr and "MissingConfigException" in res.stderr and "skate: config error" not in res.stderr
    )


def test_skate_uses_no_private_hydra_api():
    """Hydra's private modules change between releases without notice: skate composes, parses
    overrides and reports errors through Hydra's public API (skate/cli/compose.py, skate/__main__.py)."""
    root = Path(__file__).resolve().parents[2] / "skate"
    users = [str(p.relative_to(root.parent)) for p in sorted(root.rglob("*.py")) if "hydra._internal" in p.read_text()]
    assert not users, f"{users} use hydra._internal: use Hydra's public API (see skate/cli/compose.py)"


def test_a_setter_repair_that_is_not_one_of_the_choices_is_refused_naming_them():
    cfg = compose_config(["players=local_cohort", "players.llm.0.setter_repair=again"])
    with pytest.raises(ConfigError, match=r"players.llm\[0\].setter_repair.*'again'.*\['show', 'resample'\]"):
        build_settings(cfg)


def test_the_help_lists_each_group_s_options_but_not_the_schemas_they_extend():
    groups = dict(line.split(": ", 1) for line in user_groups().splitlines())
    assert (
        {"game", "rating", "players", "experiment"} <= set(groups) and "schema" not in groups and "hydra" not in groups
    )
    assert groups["game"].split(", ") == sorted(load_games())
    assert "trueskill" in groups["rating"].split(", ") and "elo_schema" not in groups["rating"]

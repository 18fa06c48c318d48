"""The optimiser's settings (skate/optimize/config.py): each player's override typed by
PlayerOptimizerConfig, set key by key on the command line (``+optimizer.players.ace.name=none``)
or from Python; a misspelt key or a wrong value refused in one line naming it; the plans merging
the run's, the role's and the player's settings; recorded runs' overrides loaded back."""

from __future__ import annotations

import pytest

import skate
from skate.cli.compose import settings_from
from skate.cli.play import main as play
from skate.errors import ConfigError, SettingError
from skate.optimize.config import OptimizerConfig, OptimizerName, Plan, PlayerOptimizerConfig, Role, plans
from skate.settings.config import record_of
from skate.settings.recorded import CONFIG_VERSION, run_settings

COHORT = ["players=fake_local", "optimizer=bootstrap_fewshot"]  # ace, mid and low; nothing is played
RUN = {"max_bootstrapped_demos": 4, "max_labeled_demos": 4, "max_rounds": 1, "num_threads": 4}  # the preset's
NOT_NAME = (
    "optimizer.players.ace.nme is not a setting of PlayerOptimizerConfig (did you mean "
    "optimizer.players.ace.name?); its settings: answerer, name, roles, setter, settings"
)


def optimizer(*overrides: str) -> OptimizerConfig:
    """The optimiser's settings of ``skate play`` with these overrides (after the cohort's)."""
    return settings_from([*COHORT, *overrides]).optimizer


# ------------------------------------------------------------------ one line naming the setting
@pytest.mark.parametrize("override", ["+optimizer.players.ace.nme=none", "+optimizer.players={ace: {nme: none}}"])
def test_a_misspelt_player_setting_on_the_command_line_is_one_line_naming_it(override, capsys):
    assert play([*COHORT, override, "--estimate"]) == 2
    assert capsys.readouterr().err == f"skate: config error: {NOT_NAME}\n"


@pytest.mark.parametrize(
    "override, line",
    [
        (
            "+optimizer.players.ace.name=bogus",
            "optimizer.players.ace.name: Invalid value 'bogus', expected one of "
            "[none, bootstrap_fewshot, bootstrap_fewshot_random_search, mipro_v2]",
        ),
        (
            "+optimizer.players.ace.roles=[answerer,judge]",
            "optimizer.players.ace.roles[1]: Invalid value 'judge', expected one of [setter, answerer]",
        ),
        (
            "+optimizer.players.ace=3",
            "optimizer.players.ace=3 is invalid: give the player's {name, roles, settings, setter, answerer} "
            "(each optional)",
        ),
    ],
)
def test_a_wrong_player_value_on_the_command_line_is_one_line_naming_it(override, line, capsys):
    assert play([*COHORT, override, "--estimate"]) == 2
    assert capsys.readouterr().err == f"skate: config error: {line}\n"


def test_a_misspelt_player_setting_from_python_is_one_line_naming_it():
    with pytest.raises(ConfigError) as exc:
        skate.config(players="fake_local", optimizer="bootstrap_fewshot", values={"optimizer.players.ace.nme": "none"})
    assert str(exc.value) == NOT_NAME
    with pytest.raises(ConfigError) as exc:
        OptimizerConfig(players={"ace": {"nme": "none"}})  # type: ignore[dict-item]
    assert str(exc.value) == NOT_NAME
    with pytest.raises(SettingError, match=r"^nme is not a setting of PlayerOptimizerConfig \(did you mean name\?\)"):
        PlayerOptimizerConfig(nme="none")  # type: ignore[call-arg]
    with pytest.raises(ConfigError, match=r"^optimizer\.players\.ace\.name: Invalid value 'bogus'"):
        OptimizerConfig(players={"ace": PlayerOptimizerConfig(name="bogus")})  # type: ignore[arg-type]


# ------------------------------------------------------------------ what the overrides do
def test_a_player_named_none_is_left_as_it_is_and_the_others_are_optimised():
    o = optimizer("+optimizer.players.ace.name=none")
    assert o.players == {"ace": PlayerOptimizerConfig(name=OptimizerName.none)}
    assert plans(o, "ace") == {}
    assert plans(o, "mid") == plans(o, "low") == {"answerer": Plan("bootstrap_fewshot", RUN)}


def test_players_names_only_the_cohorts_language_model_players():
    with pytest.raises(ConfigError) as exc:
        optimizer("+optimizer.players.zed.name=none")
    assert str(exc.value) == (
        "optimizer.players=['zed'] is invalid: names no language-model player of this cohort (['ace', 'mid', 'low'])"
    )
    with pytest.raises(ConfigError, match=r"names no language-model player of this cohort \(none\)"):
        skate.config(optimizer="bootstrap_fewshot", values={"optimizer.players.sim-ace.name": "none"})


def test_a_players_settings_go_over_its_roles_which_go_over_the_runs():
    o = optimizer(
        "optimizer.settings.max_rounds=3",
        "+optimizer.answerer.max_labeled_demos=2",
        "+optimizer.setter.max_labeled_demos=1",
        "+optimizer.players.ace.settings={max_rounds: 2, max_labeled_demos: 3, max_bootstrapped_demos: 3}",
        "+optimizer.players.ace.answerer.max_labeled_demos=1",
        "+optimizer.players.mid.roles=[answerer,setter]",
    )
    assert o.players["mid"].roles == [Role.answerer, Role.setter]
    run = {**RUN, "max_rounds": 3}
    assert plans(o, "ace") == {
        "answerer": Plan(
            "bootstrap_fewshot", {**run, "max_rounds": 2, "max_labeled_demos": 1, "max_bootstrapped_demos": 3}
        )
    }
    assert plans(o, "mid") == {
        "answerer": Plan("bootstrap_fewshot", {**run, "max_labeled_demos": 2}),
        "setter": Plan("bootstrap_fewshot", {**run, "max_labeled_demos": 1}),
    }
    assert plans(o, "low") == {"answerer": Plan("bootstrap_fewshot", {**run, "max_labeled_demos": 2})}


def test_a_player_naming_another_optimizer_takes_only_its_own_settings():
    o = optimizer("+optimizer.players.ace.name=mipro_v2", "+optimizer.players.ace.settings.auto=medium")
    assert plans(o, "ace") == {"answerer": Plan("mipro_v2", {"auto": "medium"})}  # none of bootstrap's
    assert plans(o, "mid") == {"answerer": Plan("bootstrap_fewshot", RUN)}
    o = optimizer("+optimizer.players.mid.name=bootstrap_fewshot", "+optimizer.players.mid.roles=[setter]")
    assert plans(o, "mid") == {"setter": Plan("bootstrap_fewshot", RUN)}  # the run's optimiser: its settings too


# ------------------------------------------------------------------ recorded runs
def recorded(players: object) -> OptimizerConfig:
    """The optimiser's settings of a recorded run of the cohort whose ``optimizer.players`` was ``players``."""
    config = record_of(settings_from(COHORT))
    config["optimizer"]["players"] = players
    return run_settings({"config": config, "config_version": CONFIG_VERSION}).optimizer


def test_a_run_records_each_players_override_whole_and_loads_it_back():
    settings = settings_from(
        [*COHORT, "+optimizer.players.ace.name=none", "+optimizer.players.mid.setter.max_rounds=2"]
    )
    config = record_of(settings)
    assert config["optimizer"]["players"] == {
        "ace": {"name": "none", "roles": None, "settings": {}, "setter": {}, "answerer": {}},
        "mid": {"name": None, "roles": None, "settings": {}, "setter": {"max_rounds": 2}, "answerer": {}},
    }
    assert run_settings({"config": config, "config_version": CONFIG_VERSION}) == settings


def test_a_recorded_run_whose_players_were_empty_or_partial_dicts_still_loads():
    assert recorded({}).players == {}
    o = recorded({"ace": {"name": "none"}, "mid": {"roles": ["setter"], "setter": {"max_rounds": 2}}})
    assert o.players == {
        "ace": PlayerOptimizerConfig(name=OptimizerName.none),
        "mid": PlayerOptimizerConfig(roles=[Role.setter], setter={"max_rounds": 2}),
    }
    assert plans(o, "ace") == {} and plans(o, "mid") == {"setter": Plan("bootstrap_fewshot", {**RUN, "max_rounds": 2})}

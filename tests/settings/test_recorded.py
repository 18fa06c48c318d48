"""A recorded run's settings, rebuilt one way (skate/settings/recorded.py): old records (keys missing),
records of a newer skate, unknown components, typing by the recorded group choices, edits,
overrides and the three levels of checking."""

from __future__ import annotations

import contextlib
import copy
import json

import pytest
from omegaconf import OmegaConf

import skate
from skate.errors import ConfigError
from skate.estimators.base import estimator
from skate.estimators.fixed_n import FixedN
from skate.loggers.base import NullLogger, logger
from skate.runlog.files import EventLog
from skate.runner import run_game
from skate.settings.build import assemble
from skate.settings.config import record_of
from skate.settings.recorded import CONFIG_VERSION, RecordError, migrate, run_settings

GAME = {"game.rounds": 2, "report": False}
CHOICES = {"players": "simulated_four", "logger": "none", "sandbox": "subprocess"}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("recorded") / "run"
    run_game(
        skate.config(
            values={**GAME, "rating.bootstrap": 20, "estimator.n": 4},
            **CHOICES,
            rating="bradley_terry",
            estimator="fixed_n",
        ),
        folder,
        made_from={"choices": {"rating": "bradley_terry"}, "overrides": ["estimator.n=4"]},
    )
    return folder


def test_a_run_records_how_its_settings_were_made_and_loads_back_to_them(run):
    start = json.loads((run / "events.jsonl").read_text().splitlines()[0])
    assert start["config_version"] == CONFIG_VERSION
    assert start["choices"] == {"rating": "bradley_terry"} and start["overrides"] == ["estimator.n=4"]
    settings = run_settings(run)
    assert type(settings.rating).__name__ == "BradleyTerryConfig" and settings.rating.bootstrap == 20
    assert type(settings.estimator).__name__ == "FixedNConfig" and settings.estimator.n == 4
    assert record_of(settings) == start["config"]  # the record, read back, is the settings it recorded


def test_an_old_record_missing_later_keys_takes_their_defaults(run):
    config = json.loads((run / "events.jsonl").read_text().splitlines()[0])["config"]
    for section in ("stop", "events", "schedule"):  # sections added after the first runs
        del config[section]
    del config["llm"]["structured"]
    for p in config["players"]["simulated"]:
        del p["slip"]
    settings = run_settings({"config": config})  # no version: an unversioned (version 1) record
    assert settings.stop.settled is None and settings.events.rating_updates == "task"
    assert settings.llm.structured == "auto" and all(p.slip == 0.0 for p in settings.players.simulated)
    assert settings.estimator.n == 4  # what it did record is kept


def test_a_record_of_a_newer_skate_or_an_unknown_part_is_refused_in_one_line(run):
    config = json.loads((run / "events.jsonl").read_text().splitlines()[0])["config"]
    with pytest.raises(RecordError, match=f"newer skate .*version {CONFIG_VERSION + 1}.*upgrade skate"):
        migrate(config, CONFIG_VERSION + 1)
    bad = {**config, "rating": {**config["rating"], "_target_": "somewhere.GoneRating"}}
    with pytest.raises(RecordError, match="rating 'somewhere.GoneRating' is not one this skate has .*trueskill"):
        run_settings({"config": bad})
    gone = {**config, "rating": {**config["rating"], "retired_key": 1}}
    with pytest.raises(RecordError, match="rating.retired_key"):
        run_settings({"config": gone})


def test_overrides_change_values_and_whole_groups(run):
    settings = run_settings(run, {"game.rounds": 5, "logger": "console", "llm.budget_usd": 2})
    assert settings.game.rounds == 5 and type(settings.logger).__name__ == "ConsoleLoggerConfig"
    assert settings.llm.budget_usd == 2
    with pytest.raises(ConfigError, match="game.roundz"):
        run_settings(run, {"game.roundz": 5})
    with pytest.raises(ConfigError, match="game.rounds=0 is invalid"):
        run_settings(run, {"game.rounds": 0})  # checked as a new run's settings are


def test_a_version_1_record_names_the_old_modules_and_loads(run):
    """Runs before version 2 recorded skate.scoring, skate.tracking and skate.novelty targets."""
    config = json.loads((run / "events.jsonl").read_text().splitlines()[0])["config"]
    config["estimator"]["_target_"] = "skate.scoring.FixedN"
    config["logger"]["_target_"] = "skate.tracking.NullLogger"
    config["embedder"]["_target_"] = "skate.novelty.HashingEmbedder"
    settings = run_settings({"config": config, "config_version": 1})
    assert type(settings.estimator).__name__ == "FixedNConfig" and settings.estimator.n == 4
    assert type(settings.logger).__name__ == "NoLoggerConfig"
    assert settings.embedder._target_ == "skate.embedders.HashingEmbedder"
    with pytest.raises(RecordError, match="estimator 'skate.scoring.FixedN' is not one this skate has"):
        run_settings(
            {"config": config, "config_version": CONFIG_VERSION}
        )  # the same names in a current record are not migrated


def test_a_version_2_record_names_the_estimators_and_loggers_by_their_groups_one_module_and_loads(run, tmp_path):
    """Runs before version 3 recorded skate.estimators.<Class> and skate.loggers.<Class> targets;
    they are typed (by choice or by target) and build the same components from their new modules."""
    start = _start(run)
    config = copy.deepcopy(start["config"])
    config["estimator"]["_target_"] = "skate.estimators.FixedN"
    config["logger"]["_target_"] = "skate.loggers.NullLogger"
    for choices in ({"rating": "bradley_terry", "estimator": "fixed_n", "logger": "none"}, None):
        settings = run_settings({"config": config, "config_version": 2, "choices": choices})
        assert type(settings.estimator).__name__ == "FixedNConfig" and settings.estimator.n == 4
        assert settings.estimator._target_ == "skate.estimators.fixed_n.FixedN"
        assert settings.logger._target_ == "skate.loggers.base.NullLogger"
        with contextlib.ExitStack() as cleanup:  # the game's own builder makes them from their targets
            parts = assemble(settings, cleanup, EventLog(tmp_path / "events.jsonl"))
            assert type(parts.estimator) is FixedN and type(parts.logger) is NullLogger
    with pytest.raises(RecordError, match="estimator 'skate.estimators.FixedN' is not one this skate has"):
        run_settings({"config": config, "config_version": CONFIG_VERSION})  # a current record is not migrated


@pytest.mark.parametrize("registry", [estimator, logger], ids=lambda r: r.group)
def test_every_estimator_and_logger_a_version_2_record_named_is_migrated_to_its_registered_target(registry):
    """Each registered component, named as version 2 named it (``skate.<package>.<Class>``)."""
    for entry in registry:
        record = {registry.group: {"_target_": f"{registry.package}.{entry.target.rsplit('.', 1)[1]}"}}
        moved = migrate(record, 2)[registry.group]["_target_"]
        assert moved == entry.target and registry.of_target(moved) is entry, (entry.name, moved)


def _start(run):
    return json.loads((run / "events.jsonl").read_text().splitlines()[0])


def test_a_record_is_typed_by_its_recorded_group_choices_and_without_them_by_its_targets(run):
    start = _start(run)
    # The recorded choice types the section, whatever its _target_ says: an option that is a YAML
    # over a schema (rating=zerosumeval, over bradley_terry's) takes the composed option's schema.
    odd = {
        **start,
        "config": {**start["config"], "rating": {**start["config"]["rating"], "_target_": "gone.Rating"}},
        "choices": {"rating": "zerosumeval"},
    }
    settings = run_settings(odd, check=False)
    assert type(settings.rating).__name__ == "BradleyTerryConfig" and settings.rating.bootstrap == 20
    # No choices (a run before they were recorded): the _target_ types it, and a gone one is refused.
    with pytest.raises(RecordError, match="rating 'gone.Rating' is not one this skate has"):
        run_settings({**odd, "choices": None}, check=False)
    assert type(run_settings({**start, "choices": None}).rating).__name__ == "BradleyTerryConfig"
    # A choice this skate has no option for is refused in one line, naming the group's options.
    with pytest.raises(RecordError, match="rating=glicko is not an option this skate has .*trueskill"):
        run_settings({**start, "choices": {"rating": "glicko"}})
    # A group the record chose by a registered name (estimator=fixed_n) and one it did not record.
    typed = run_settings({**start, "choices": {"estimator": "fixed_n", "players": "simulated_four"}})
    assert type(typed.estimator).__name__ == "FixedNConfig" and typed.estimator.n == 4


def test_an_edit_sets_one_entry_of_a_list_by_its_index(run):
    settings = run_settings(run, {"players.simulated.0.pitch": 0.25})
    assert settings.players.simulated[0].pitch == 0.25


def test_edits_set_settings_typed_as_theirs_before_the_overrides_and_the_checks(run):
    settings = run_settings(
        run,
        edits={
            "players.simulated": [{"name": "a", "skill": 0.9}, {"name": "b", "skill": 0.1}],
            "players.roles": {},
            "stop.settled": 0.9,
            "stop.min_rounds": 4,
            "report": False,
        },
    )
    assert [(p.name, p.skill, p.slip) for p in settings.players.simulated] == [("a", 0.9, 0.0), ("b", 0.1, 0.0)]
    assert settings.stop.settled == 0.9 and settings.stop.min_rounds == 4 and settings.report is False
    with pytest.raises(
        ConfigError,
        match=r"^players.simulated.skil is not a setting of SimPlayerConfig \(did you mean players.simulated.skill\?\)",
    ):
        run_settings(run, edits={"players.simulated": [{"name": "a", "skil": 0.9}]})
    with pytest.raises(ConfigError, match="game.roundz is not a setting"):
        run_settings(run, edits={"game.roundz": 3})
    with pytest.raises(ConfigError, match="at least 2 players"):  # edited settings are checked
        run_settings(run, edits={"players.simulated": [{"name": "a", "skill": 0.9}]})


def test_settings_today_s_checks_refuse_still_load_unchecked_and_the_report_reads_them(run):
    from skate.report.data import run_settings_or_none

    start = _start(run)
    old = {
        **start,
        "config": {
            **start["config"],
            "game": {**start["config"]["game"], "rounds": 0},
            "rating": {**start["config"]["rating"], "p_thresh": 1.5},
        },
    }
    with pytest.raises(ConfigError, match="rounds=0 is invalid"):
        run_settings(old)
    unchecked = run_settings(old, check=False)
    assert unchecked.game.rounds == 0 and unchecked.rating.p_thresh == 1.5
    assert run_settings_or_none(old).rating.p_thresh == 1.5  # the report renders with the run's own pass mark
    # check="rating": re-rating checks the rating alone (the rest was checked when the run played)
    with pytest.raises(ConfigError, match="rating.p_thresh=1.5 is invalid"):
        run_settings(old, check="rating")
    assert run_settings(old, {"rating.p_thresh": 0.6}, check="rating").game.rounds == 0


def test_the_game_and_the_checks_take_settings_and_say_how_to_make_them_from_a_composed_config(tmp_path):
    from skate.settings.config import validate

    cfg = OmegaConf.structured(skate.SkateConfig())  # the settings as a composed config (a DictConfig), not settings
    with pytest.raises(TypeError, match=r"run_game takes settings, not a DictConfig: .*build_settings\(cfg\)"):
        run_game(cfg, tmp_path / "run")
    with pytest.raises(TypeError, match=r"validate takes settings, not a DictConfig: .*build_settings\(cfg\)"):
        validate(cfg)
    assert not (tmp_path / "run").exists()

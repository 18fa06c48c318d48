"""A recorded run's settings, rebuilt one way (skate/recorded.py): old records (keys missing),
records of a newer skate, unknown components, and overrides."""

from __future__ import annotations

import json

import pytest

from skate.config import ConfigError, compose_config, record_of
from skate.recorded import CONFIG_VERSION, RecordError, migrate, run_settings
from skate.runner import run_game

GAME = ["game.rounds=2", "players=simulated_four", "logger=none", "report=false", "sandbox=subprocess"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("recorded") / "run"
    run_game(compose_config([*GAME, "rating=bradley_terry", "rating.bootstrap=20", "estimator=fixed_n",
                             "estimator.n=4"]), folder, made_from={"choices": {"rating": "bradley_terry"},
                                                                   "overrides": ["estimator.n=4"]})
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
    settings = run_settings(run, ["game.rounds=5", "logger=console", "llm.budget_usd=2"])
    assert settings.game.rounds == 5 and type(settings.logger).__name__ == "ConsoleLoggerConfig"
    assert settings.llm.budget_usd == 2
    with pytest.raises(ConfigError, match="game.roundz"):
        run_settings(run, ["game.roundz=5"])
    with pytest.raises(ConfigError, match="game.rounds=0 is invalid"):
        run_settings(run, ["game.rounds=0"])  # checked as a new run's settings are


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
        run_settings({"config": config, "config_version": CONFIG_VERSION})  # the same names in a version 2 record are not migrated

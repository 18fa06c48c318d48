"""record_of reads the typed settings straight into the plain data a run records: the same data,
key for key and in the same order, as OmegaConf's own conversion of the settings gives."""

from __future__ import annotations

import json

import pytest
from omegaconf import OmegaConf

from skate.games import load_games
from skate.settings.compose import yaml_options
from skate.settings.config import build_settings, compose_config, record_of

pytestmark = pytest.mark.xdist_group("every_option")  # with tests/settings/test_config.py: see there

OPTIONS = [[]] + [[f"game={g}"] for g in sorted(load_games())] + [
    [f"{group}={o}"] for group in ("rating", "estimator", "embedder", "logger", "sandbox", "aug")
    for o in sorted(yaml_options(group))]


@pytest.mark.parametrize("overrides", OPTIONS, ids=lambda o: o[0] if o else "defaults")
def test_the_record_is_omegaconfs_conversion_of_the_settings(overrides):
    settings = build_settings(compose_config(overrides))
    theirs = OmegaConf.to_container(OmegaConf.structured(settings), resolve=True, enum_to_str=True)
    assert json.dumps(record_of(settings)) == json.dumps(theirs)  # same keys, order and values

"""record_of reads the typed settings straight into the plain data a run records: the same data,
key for key and in the same order, as OmegaConf's own conversion of the settings gives."""

from __future__ import annotations

import json

import pytest
from omegaconf import OmegaConf

import skate
from skate.games import load_games
from skate.settings.config import record_of
from skate.settings.options import yaml_options

pytestmark = pytest.mark.xdist_group("every_option")  # with tests/settings/test_config.py: see there

OPTIONS = (
    [{}]
    + [{"game": g} for g in sorted(load_games())]
    + [
        {group: o}
        for group in ("rating", "estimator", "embedder", "logger", "sandbox", "aug")
        for o in sorted(yaml_options(group))
    ]
)


@pytest.mark.parametrize("choices", OPTIONS, ids=lambda c: "".join(f"{k}={v}" for k, v in c.items()) or "defaults")
def test_the_record_is_omegaconfs_conversion_of_the_settings(choices):
    settings = skate.config(**choices)
    theirs = OmegaConf.to_container(OmegaConf.structured(settings), resolve=True, enum_to_str=True)
    assert json.dumps(record_of(settings)) == json.dumps(theirs)  # same keys, order and values

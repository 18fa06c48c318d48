"""``compose_config`` (tools, benchmarks and tests compose outside the Hydra app): each set of
group choices is composed once per process and value overrides go to a copy, so the result and
every error must be what Hydra's own compose gives."""

from __future__ import annotations

import os
import shutil

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from skate import compose as skate_compose
from skate import config as skate_config
from skate.config import CONF_DIR, compose_config


def hydra_compose(overrides):
    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        return compose("config", overrides=overrides)


SAME_AS_HYDRA = [
    [], ["game=mathquiz", "game.rounds=2", "seed=3"], ["seed=4", "game=pyjail", "rating=elo"],
    ["players.simulated.0.skill=0.3"], ["experiment=zerosumeval", "game=mathquiz"],
    ["game.rounds=2", "rating=irt", "estimator=adaptive"], ["~rerate"], ["+foo.bar=3"], ["++game.rounds=4"],
    ["players.simulated=[{name: a, skill: 0.5}]"], ["game.rounds=2", "game.rounds=3"],
]


@pytest.mark.parametrize("overrides", SAME_AS_HYDRA, ids=" ".join)
def test_compose_config_gives_what_hydra_composes(overrides):
    first, again = compose_config(overrides), compose_config(overrides)
    assert OmegaConf.to_yaml(first) == OmegaConf.to_yaml(hydra_compose(overrides))
    assert OmegaConf.is_struct(first) and OmegaConf.to_yaml(again) == OmegaConf.to_yaml(first)
    first.seed = 99  # a caller's change does not leak into the next compose
    assert compose_config(overrides).seed != 99


@pytest.mark.parametrize("overrides", [["sed=3"], ["game.roundz=2"], ["players.simulated.0.skill=abc"],
                                       ["game=nope"], ["+seed=3"], ["~nokey"]], ids=" ".join)
def test_compose_config_fails_as_hydra_does(overrides):
    with pytest.raises(Exception) as ours:
        compose_config(overrides)
    with pytest.raises(Exception) as hydras:
        hydra_compose(overrides)
    assert type(ours.value) is type(hydras.value) and str(ours.value) == str(hydras.value)


def test_compose_config_reads_an_edited_config_file_again(tmp_path, monkeypatch):
    conf = tmp_path / "conf"
    shutil.copytree(CONF_DIR, conf)
    monkeypatch.setattr(skate_compose, "CONF_DIR", str(conf))
    assert skate_config.compose_config(["game=cop"]).seed == 0
    path = conf / "config.yaml"
    path.write_text(path.read_text().replace("\nseed: 0\n", "\nseed: 7\n"))
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    assert skate_config.compose_config(["game=cop"]).seed == 7

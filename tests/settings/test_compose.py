"""``compose_config`` (tools, benchmarks and tests compose outside the Hydra app): each set of
group choices is composed once per process and value overrides go to a copy, so the result and
every error must be what Hydra's own compose gives."""

from __future__ import annotations

import os
import shutil

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from skate.paths import CONF_DIR
from skate.settings import compose as skate_compose
from skate.settings import config as skate_config
from skate.settings.config import compose_config


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


def _nodes(tree: dict, prefix: str = "") -> dict[str, str]:
    """Every node of a ConfigStore repository, as YAML, by path."""
    out = {}
    for name, value in tree.items():
        if isinstance(value, dict):
            out.update(_nodes(value, f"{prefix}{name}/"))
        else:
            out[prefix + name] = OmegaConf.to_yaml(value.node)
    return out


def test_hydra_shares_the_config_store_and_composing_leaves_it_as_it_was():
    """skate.settings.compose lets Hydra's copies of its ConfigStore be the store itself (Hydra deep-copies
    the whole store each time it opens a repository); composing, with Hydra or compose_config,
    and listing every group's options must then leave every stored node as it was."""
    import copy

    from hydra.core.config_store import ConfigStore
    from hydra.core.global_hydra import GlobalHydra

    skate_config.register_configs()
    store = ConfigStore.instance()
    assert copy.deepcopy(store) is store
    before = _nodes(store.repo)
    assert len(before) > 20 and "schema/rating/trueskill.yaml" in before
    for overrides in (["game=mathquiz", "rating=elo"], ["game=scp", "estimator=greedy"], ["players=simulated_four"]):
        compose_config(overrides)
        hydra_compose(overrides)
    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        loader = GlobalHydra.instance().config_loader()
        assert "trueskill" in loader.get_group_options("rating")
        assert "cop" in loader.get_group_options("game")
    assert _nodes(store.repo) == before

"""Config composition: every group option composes; typos and bad values fail with the key named."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.errors import ConfigCompositionException, MissingConfigException

from skate.config import ConfigError, register_configs, validate

CONF = str(Path(__file__).resolve().parents[1] / "conf")
GROUPS = ["game", "rating", "aug", "estimator", "players", "sandbox", "embedder", "logger"]


@pytest.fixture(scope="module", autouse=True)
def hydra_ctx():
    register_configs()
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        yield


def test_default_config_composes_and_validates():
    cfg = compose("config")
    validate(cfg)
    assert cfg.game.rounds == 50 and cfg.aug.strategy == "hist_perf"
    assert len(cfg.players.simulated) == 6
    assert cfg.rating.mu == 25.0 and cfg.rating.sigma == pytest.approx(25 / 3)


@pytest.mark.parametrize("group", GROUPS)
def test_every_option_of_every_group_composes(group):
    options = sorted(p.stem for p in (Path(CONF) / group).glob("*.yaml"))
    assert options, f"config group {group} has no options"
    for opt in options:
        validate(compose("config", overrides=[f"{group}={opt}"]))


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ("rating.mue=3", "rating.mue"),
        ("sed=3", "sed"),
        ("game.roundz=3", "game.roundz"),
        ("players.simulated.0.skil=0.3", "players.simulated.0.skil"),
    ],
)
def test_misspelt_key_fails_at_compose_naming_it(override, named):
    with pytest.raises(ConfigCompositionException, match=named.replace(".", r"\.")):
        compose("config", overrides=[override])


@pytest.mark.parametrize(
    "override", ["game.rounds=abc", "rating.outcome=relatve", "aug.strategy=everything", "seed=x"]
)
def test_bad_value_fails_at_compose(override):
    with pytest.raises(ConfigCompositionException) as err:
        compose("config", overrides=[override])
    key = override.split("=")[0]
    assert key in str(err.value) or key in str(err.value.__cause__)


def test_unknown_option_names_the_group():
    with pytest.raises(MissingConfigException, match="aug/hist_pref"):
        compose("config", overrides=["aug=hist_pref"])


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ("game.rounds=0", "game.rounds"),
        ("game.n_distractors=2", "game.n_distractors"),
        ("rating.p_thresh=1.5", "rating.p_thresh"),
        ("estimator.sigma_star=0", "estimator.sigma_star"),
        ("embedder.threshold=-1", "embedder.threshold"),
        ("players.simulated.0.skill=1.7", "players.simulated[0].skill"),
        ("players.simulated.1.name=sim-ace", "unique"),
        ("sandbox.limits.timeout_s=-1", "sandbox.limits.timeout_s"),
        ("sandbox.workers=-2", "sandbox.workers"),
        ("sandbox.tmp_mb=0", "sandbox.tmp_mb"),
    ],
)
def test_out_of_range_values_name_the_key(override, named):
    cfg = compose("config", overrides=[override])
    with pytest.raises(ConfigError, match=named.replace(".", r"\.").replace("[", r"\[")):
        validate(cfg)

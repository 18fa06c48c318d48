"""Config composition: every group option composes; typos and bad values fail with the key named."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose as hydra_compose
from hydra import initialize_config_dir
from hydra.errors import ConfigCompositionException, MissingConfigException

from skate.cli.compose import compose_config, register_configs
from skate.errors import ConfigError
from skate.paths import CONF_DIR as CONF
from skate.settings.options import build_settings

# This file, tests/test_registry.py and tests/settings/test_config_record.py compose every option of every
# group: on one xdist worker, so that each is composed once (compose_config's cache).
pytestmark = pytest.mark.xdist_group("every_option")

# game's options are the registered games' schemas, not YAML files (see the registered-game test below)
GROUPS = ["rating", "aug", "estimator", "players", "sandbox", "embedder", "logger"]


@pytest.fixture(scope="module", autouse=True)
def _registered():
    register_configs()


def compose(name: str, overrides: list[str] = ()):
    """Hydra's own compose (compose_config's errors and results are checked against it in
    tests/settings/test_compose.py)."""
    with initialize_config_dir(config_dir=CONF, version_base="1.3"):
        return hydra_compose(name, overrides=list(overrides))


def test_default_config_composes_and_validates():
    cfg = compose("config")
    build_settings(cfg)
    assert cfg.game.rounds == 50 and cfg.aug.strategy == "hist_perf"
    assert len(cfg.players.simulated) == 6
    assert cfg.rating.mu == 25.0 and cfg.rating.sigma == pytest.approx(25 / 3)


@pytest.mark.parametrize("group", GROUPS)
def test_every_option_of_every_group_composes(group, monkeypatch):
    for key in (
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "OPENAI_API_KEY",
        "DEEPSEEK_API_KEY",
        "XAI_API_KEY",
    ):  # hosted cohorts need keys
        monkeypatch.setenv(key, "test-key")
    options = sorted(p.stem for p in (Path(CONF) / group).glob("*.yaml"))
    assert options, f"config group {group} has no options"
    for opt in options:  # compose_config: Hydra's compose, once per process for the group checks below
        build_settings(compose_config([f"{group}={opt}"]))


def test_a_hosted_cohort_without_its_keys_says_which_variable_to_set(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ConfigError, match=r"players\.llm\[0\]='claude-3-haiku' is invalid: .*ANTHROPIC_API_KEY"):
        build_settings(compose("config", overrides=["players=paper_six"]))


def test_the_paper_cohort_has_the_six_models_at_temperature_0_7():
    cfg = compose("config", overrides=["players=paper_six"])
    models = [p.model for p in cfg.players.llm]
    assert len(models) == 6 and "openai/gpt-4o-2024-11-20" in models and "gemini/gemini-2.0-flash" in models
    assert all(p.temperature == 0.7 for p in cfg.players.llm)
    assert all(m in cfg.llm.prices for m in models)


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
    "override",
    [
        "game.rounds=abc",
        "rating.outcome=relatve",
        "aug.strategy=everything",
        "seed=x",
        "+llm.prices.x={input_per_mtok: cheap}",
        "+llm.prices.x.output_per_mtok=cheap",
    ],
)
def test_bad_value_fails_at_compose(override):
    with pytest.raises(ConfigCompositionException) as err:
        compose("config", overrides=[override])
    key = override.split("=")[0].lstrip("+")
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
        ("llm.budget_usd=-1", "llm.budget_usd"),
        ("llm.concurrency=0", "llm.concurrency"),
        ("+llm.prices.x={input_per_mtok: -1}", "llm.prices.x"),
        ("+llm.prices.x={input_per_mtk: 2}", "llm.prices.x"),
        ("sandbox.limits.timeout_s=-1", "sandbox.limits.timeout_s"),
        ("sandbox.workers=-2", "sandbox.workers"),
        ("sandbox.tmp_mb=0", "sandbox.tmp_mb"),
        (
            "players.simulated=[{name: a, skill: 0.5}, {name: b, skill: 0.4, topic_skill: {astrology: 0.1}}]",
            "players.simulated[1].topic_skill",
        ),
    ],
)
def test_out_of_range_values_name_the_key(override, named):
    cfg = compose_config([override])
    with pytest.raises(ConfigError, match=named.replace(".", r"\.").replace("[", r"\[")):
        build_settings(cfg)


def test_every_registered_game_has_a_config_option_and_a_schema():
    from skate.games import load_games

    for name, game in load_games().items():
        cfg = compose("config", overrides=[f"game={name}"])
        assert cfg.game.name == name and set(game.config_schema.__dataclass_fields__) <= set(cfg.game) | {"_target_"}
        build_settings(cfg)


def test_a_key_of_another_game_fails_at_compose():
    with pytest.raises(ConfigCompositionException, match="game.n_distractors"):
        compose("config", overrides=["game=mathquiz", "game.n_distractors=9"])


def test_topic_skill_of_another_game_s_kinds_is_accepted_and_left_out():
    # the default cohort's offsets name COP kinds; under another game they are simply unused
    cfg = compose("config", overrides=["game=mathquiz"])
    assert any(p.topic_skill for p in cfg.players.simulated)
    build_settings(cfg)


def test_a_price_is_added_key_by_key_and_typed_as_a_float():
    """``llm.prices`` is a mapping of floats: ``+llm.prices.<model>.<key>=`` adds a model's price a
    key at a time on the command line, and the value is a number whichever way it was written."""
    cfg = compose_config(["+llm.prices.acme-m1.input_per_mtok=2", "+llm.prices.acme-m1.output_per_mtok=8"])
    price = build_settings(cfg).llm.prices["acme-m1"]
    assert price == {"input_per_mtok": 2.0, "output_per_mtok": 8.0} and all(type(v) is float for v in price.values())

"""The YAML presets read without Hydra (skate/settings/options.py) give what Hydra composes: every
option of every config group, every experiment, the local cohort with each game, value overrides;
each the same settings, or the same one-line error."""

from __future__ import annotations

import pytest

from skate.cli.compose import compose_config, describe_config_error
from skate.errors import ConfigError
from skate.games import load_games
from skate.players.config import PlayersConfig
from skate.settings.config import REGISTRIES, record_of
from skate.settings.options import build_settings, preset, settings, yaml_options

HOSTED_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY")


@pytest.fixture(autouse=True)
def _keys(monkeypatch):
    for key in HOSTED_KEYS:  # the hosted cohorts' checks ask for their keys
        monkeypatch.setenv(key, "k")


def options(group: str) -> list[str]:
    if group == "game":
        return sorted(load_games())
    registry = next((r for r in REGISTRIES if r.group == group), None)
    return sorted(yaml_options(group) | (set(registry.names()) if registry is not None else set()))


def both(choices: dict[str, str], values: dict | None = None):
    """What Hydra composes and what the presets read without it give: settings, or the error."""
    overrides = [f"{k}={v}" for k, v in choices.items()] + [f"{k}={v}" for k, v in (values or {}).items()]
    out = []
    for make in (lambda: build_settings(compose_config(overrides)), lambda: settings(values, **choices)):
        try:
            out.append(record_of(make()))
        except ConfigError as exc:
            out.append(f"ConfigError: {exc}")
    return out


CASES = [
    {g: o}
    for g in ("game", "rating", "aug", "estimator", "players", "sandbox", "embedder", "logger", "optimizer")
    for o in options(g)
]
CASES += [{"experiment": e} for e in sorted(yaml_options("experiment"))]
CASES += [{"players": "local_cohort", "game": g} for g in sorted(load_games())]
CASES += [
    {"players": "local_cohort", "aug": "hist_perf"},
    {"experiment": "zerosumeval", "game": "pyjail"},
    {"experiment": "fewer_calls", "estimator": "fixed_n"},
]


@pytest.mark.parametrize("choices", CASES, ids=lambda c: " ".join(f"{k}={v}" for k, v in c.items()))
def test_the_presets_read_without_hydra_are_what_hydra_composes(choices):
    hydra, ours = both(choices)
    assert ours == hydra


def test_values_go_over_the_options_as_on_the_command_line():
    hydra, ours = both({"game": "mathquiz"}, {"game.rounds": 6, "seed": 4, "rating.beta": 3.0})
    assert ours == hydra and ours["game"]["rounds"] == 6 and ours["seed"] == 4


def test_a_list_of_plain_entries_and_one_entry_by_its_index_are_set_as_on_the_command_line():
    roster = [{"name": "c1", "skill": 0.66}, {"name": "c2", "skill": 0.2}]
    hydra = record_of(
        build_settings(
            compose_config(
                ["players.simulated=[{name: c1, skill: 0.66}, {name: c2, skill: 0.2}]", "players.simulated.1.pitch=0.3"]
            )
        )
    )
    ours = settings({"players.simulated": roster, "players.simulated.1.pitch": 0.3})
    assert record_of(ours) == hydra and [(p.name, p.pitch) for p in ours.players.simulated] == [
        ("c1", 0.0),
        ("c2", 0.3),
    ]


@pytest.mark.parametrize(
    "key, value",
    [("game.roundz", 2), ("game.no_such_key", 1), ("game.rounds", "ten"), ("players.simulated.0.skil", 0.5)],
)
def test_a_bad_value_is_the_command_line_s_one_line(key, value):
    with pytest.raises(Exception) as cli:
        compose_config([f"{key}={value}"])
    with pytest.raises(ConfigError) as ours:
        settings({key: value})
    assert str(ours.value) == describe_config_error(cli.value)


def test_a_preset_is_a_typed_section():
    cohort = preset("local_cohort")
    assert isinstance(cohort, PlayersConfig) and [p.name for p in cohort.llm][0] == "qwen2.5-coder-1.5b"
    assert preset("no_info", "aug").strategy.value == "no_info"


def test_bad_choices_are_one_line():
    with pytest.raises(ConfigError, match=r"^players=nobody is not an option of players: choose one of "):
        settings(players="nobody")
    with pytest.raises(ConfigError, match=r"^gaem is not a config group"):
        settings(gaem="cop")
    with pytest.raises(ConfigError, match=r"^experiment=nothing is not an option of experiment"):
        settings(experiment="nothing")
    with pytest.raises(ConfigError, match=r"game\.roundz"):
        settings(values={"game.roundz": 3})

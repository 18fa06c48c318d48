"""The package's bottom: plain settings typed by their schema (``typed``, ``read_mapping``), with
the command line's one-line errors."""

from __future__ import annotations

import pytest

from skate.errors import ConfigError, read_mapping, typed
from skate.optimize.config import PlayerOptimizerConfig
from skate.players.config import PlayersConfig, preset_players
from skate.sandbox.config import Limits


def test_plain_data_becomes_the_schema_over_its_defaults():
    limits = typed(Limits, {"timeout_s": "3"}, "sandbox.limits")
    assert isinstance(limits, Limits) and limits.timeout_s == 3 and limits.memory_mb == Limits().memory_mb


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (
            {"timout_s": 3},
            r"sandbox\.limits\.timout_s is not a setting of Limits \(did you mean sandbox\.limits\.timeout_s\?\)",
        ),
        ({"timeout_s": "soon"}, r"sandbox\.limits\.timeout_s: "),
    ],
)
def test_a_wrong_key_or_value_is_one_line_naming_it(data, said):
    with pytest.raises(ConfigError, match=said) as err:
        typed(Limits, data, "sandbox.limits")
    assert "\n" not in str(err.value)


def test_a_yaml_that_holds_no_mapping_is_refused(tmp_path):
    (tmp_path / "list.yaml").write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match=r"list\.yaml holds no cohort"):
        read_mapping(tmp_path / "list.yaml", "cohort")
    with pytest.raises(ConfigError, match="cannot read"):
        read_mapping(tmp_path / "absent.yaml", "cohort")
    (tmp_path / "sci.yaml").write_text("x: 1e-3\n")
    assert read_mapping(tmp_path / "sci.yaml", "value")["x"] == pytest.approx(0.001)  # as Hydra reads it


def test_a_preset_cohort_is_typed_and_an_unknown_one_named():
    cohort = preset_players("simulated")
    assert isinstance(cohort, PlayersConfig) and cohort.simulated and not cohort.llm
    with pytest.raises(ConfigError, match="players=simulatd is not a cohort: choose one of .*simulated"):
        preset_players("simulatd")


def test_an_instance_made_in_python_is_kept():
    made = PlayerOptimizerConfig(settings={"max_rounds": 2})
    assert typed(PlayerOptimizerConfig, made) == made

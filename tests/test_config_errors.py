"""A config that cannot be composed gets one line naming the key or option and what to write
instead (skate.__main__.describe_config_error), for every way Hydra refuses one; a key added with
``+`` that no schema has is refused by validate before anything is built."""

from __future__ import annotations

import pytest
from hydra.errors import ConfigCompositionException, MissingConfigException, OverrideParseException

from skate.__main__ import describe_config_error
from skate.config import ConfigError, compose_config, validate


@pytest.mark.parametrize("override, line", [
    ("game=nope", "game=nope is not an option of game: choose one of cop, mathquiz, pyjail, scp"),
    ("players=paper_fuor", "players=paper_fuor is not an option of players: did you mean players=paper_four? "
                           "choose one of fake_local, local, local_cohort, local_tiny, paper_four, paper_six, simulated, "
                           "simulated_four, subset_a, subset_b, subset_c, subset_d"),
    ("game.roundz=3", "game.roundz is not a setting of COPConfig (did you mean game.rounds?); its settings: "
                      "attempts, determinism_runs, n_distractors, n_options, name, reasoning, require_value, rounds"),
    ("players.simulated.0.skil=0.5", "players.simulated[0].skil is not a setting of SimPlayerConfig (did you mean "
                                     "players.simulated[0].skill?); its settings: name, noise, pitch, skill, slip, "
                                     "sloppiness, topic_skill"),
    ("game.rounds=abc", "game.rounds: Value 'abc' of type 'str' could not be converted to Integer"),
    ("game.rounds=[1", "cannot read an override: no viable alternative at input '[1' (write key=value; quote "
                       "values with spaces)"),
])
def test_each_refusal_is_one_line_saying_what_to_write(override, line):
    with pytest.raises((ConfigCompositionException, MissingConfigException, OverrideParseException)) as err:
        compose_config([override])
    assert describe_config_error(err.value) == line


def test_a_key_added_with_plus_that_no_schema_has_is_refused():
    cfg = compose_config(["+game.x=1"])  # Hydra lets it through: + lifts the schema's guard
    with pytest.raises(ConfigError, match=r"^game\.x is not a setting of COPConfig; its settings: attempts, "):
        validate(cfg)
    with pytest.raises(ConfigError, match=r"^players\.simulated\[1\]\.skil is not a setting of SimPlayerConfig "
                                          r"\(did you mean players\.simulated\[1\]\.skill\?\)"):
        validate(compose_config(["+players.simulated.1.skil=0.5"]))
    validate(compose_config(["game=scp", "game.rounds=2"]))  # every key of a real config is known

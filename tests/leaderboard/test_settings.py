"""The settings of skate leaderboard add and refresh, made from a command's options by name."""

from __future__ import annotations

from pathlib import Path

from skate.leaderboard.settings import AddSettings, RefreshSettings, settings_of


def test_settings_take_the_options_named_like_their_fields_and_keep_the_other_defaults():
    options = {"budget": 10, "game": "cop", "runs_dir": Path("r"), "model": "openai/m", "store": "b.db"}
    assert settings_of(AddSettings, options) == AddSettings(budget=10, game="cop", runs_dir=Path("r"))
    refresh = settings_of(RefreshSettings, {"players": 3, "max_age_days": 30.0, "overrides": []})
    assert refresh == RefreshSettings(players=3, max_age_days=30.0)
    assert refresh.max_placed == AddSettings.max_placed  # no option of refresh's: its default
    assert settings_of(RefreshSettings, {}) == RefreshSettings()

"""The errors every layer may raise: the bottom of the package (imports nothing of skate)."""

from __future__ import annotations


class ConfigError(ValueError):
    """A config value is out of range or inconsistent; the message names the key."""

"""The errors every layer may raise: the bottom of the package (imports nothing of skate)."""

from __future__ import annotations


class ConfigError(ValueError):
    """A config value is out of range or inconsistent; the message names the key."""


def check(ok: bool, key: str, value: object, need: str) -> None:
    """Raise :class:`ConfigError` ``"<key>=<value> is invalid: <need>"`` unless ``ok``."""
    if not ok:
        raise ConfigError(f"{key}={value!r} is invalid: {need}")

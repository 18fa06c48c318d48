"""The errors every layer may raise, and the shape of a settings check: the bottom of the package
(imports nothing of skate).

Every section's schema checks itself the same way: ``check()`` returns the :class:`Problem` s it
finds (a key relative to the section, the value, what is needed), a subclass adding its own to
``super().check()``'s; a game's ``check_config`` returns them too. Whoever checks the whole
(:func:`skate.settings.config.validate`) raises the first with :func:`raise_first`, naming the section.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple


class ConfigError(ValueError):
    """A config value is out of range or inconsistent; the message names the key."""


def check(ok: bool, key: str, value: object, need: str) -> None:
    """Raise :class:`ConfigError` ``"<key>=<value> is invalid: <need>"`` unless ``ok``."""
    if not ok:
        raise ConfigError(f"{key}={value!r} is invalid: {need}")


class Problem(NamedTuple):
    """One thing wrong with a section's settings: its key within the section (``k``,
    ``limits.cpu_s``, ``simulated[0].skill``), the value, and what is needed instead."""

    key: str
    value: object
    need: str


def require(ok: bool, key: str, value: object, need: str) -> list[Problem]:
    """``[]`` if ``ok``, else the one problem: ``problems += require(x > 0, "x", x, "must be > 0")``."""
    return [] if ok else [Problem(key, value, need)]


def raise_first(problems: Iterable[tuple[str, object, str]], section: str) -> None:
    """Raise the first problem as :class:`ConfigError`, its key under ``section`` (``rating.k``)."""
    for key, value, need in problems:
        check(False, f"{section}.{key}" if key else section, value, need)

"""The errors every layer may raise, and the shape of a settings check: the bottom of the package
(imports nothing of skate; OmegaConf's error types only).

Every section's schema checks itself the same way: ``check()`` returns the :class:`Problem` s it
finds (a key relative to the section, the value, what is needed), a subclass adding its own to
``super().check()``'s; a game's ``check_config`` returns them too. Whoever checks the whole
(:func:`skate.settings.config.validate`) raises the first with :func:`raise_first`, naming the section.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable
from typing import Any, NamedTuple

from omegaconf.errors import ConfigAttributeError, ConfigKeyError


class ConfigError(ValueError):
    """A config value is out of range or inconsistent; the message names the key."""


class SettingError(ConfigError, TypeError):
    """A settings schema was given a keyword it has no setting for (a typo, from Python)."""


def not_a_setting(path: str, kind: type) -> str:
    """What to say of ``path``, a key that the schema ``kind`` (a dataclass) does not have: the
    nearest of its settings, and all of them."""
    names = sorted(f.name for f in dataclasses.fields(kind) if not f.name.startswith("_"))
    parent, _, last = path.rpartition(".")
    near = difflib.get_close_matches(last, names, n=1)
    hint = f" (did you mean {parent + '.' if parent else ''}{near[0]}?)" if near else ""
    return f"{path} is not a setting of {kind.__name__}{hint}; its settings: {', '.join(names)}"


class Settings(type):
    """The metaclass of every settings schema (``class GameConfig(metaclass=Settings)``, and so
    every schema that extends one): a keyword the schema has no setting for raises
    :class:`SettingError` naming it, the nearest setting and the schema's settings, where a
    dataclass would say only ``unexpected keyword argument``."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if kwargs and dataclasses.is_dataclass(cls):
            names = {f.name for f in dataclasses.fields(cls)}
            unknown = next((k for k in kwargs if k not in names), None)
            if unknown is not None:
                raise SettingError(not_a_setting(unknown, cls))
        return super().__call__(*args, **kwargs)


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


def one_line(exc: Exception, prefix: str = "") -> str:
    """OmegaConf's error (``exc``) as the command line's one line (:func:`skate.cli.compose.describe_config_error`):
    a key no schema has names the nearest setting and the schema's settings; any other, the key
    (after ``prefix``, the section's ``game.``) and the first line of what is wrong."""
    key = getattr(exc, "full_key", None)
    full = f"{prefix}{key}" if key else prefix.rstrip(".")
    kind = getattr(exc, "object_type", None)
    if (
        isinstance(exc, (ConfigKeyError, ConfigAttributeError))
        and key
        and isinstance(kind, type)
        and dataclasses.is_dataclass(kind)
    ):
        return not_a_setting(full, kind)
    return f"{full + ': ' if full else ''}{str(exc).splitlines()[0]}"

"""The errors every layer may raise, the shape of a settings check, and plain data typed by its
schema (:func:`typed`, :func:`read_mapping`): the bottom of the package (imports nothing of skate;
OmegaConf only, to type data and to read its errors).

Every section's schema checks itself the same way: ``check()`` returns the :class:`Problem` s it
finds (a key relative to the section, the value, what is needed), a subclass adding its own to
``super().check()``'s; a game's ``check_config`` returns them too. Whoever checks the whole
(:func:`skate.settings.config.validate`) raises the first with :func:`raise_first`, naming the section.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from omegaconf import OmegaConf
from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException

T = TypeVar("T")


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


def typed(schema: type[T], data: Any, where: str = "") -> T:
    """``data`` (plain data, or an instance of ``schema`` made in Python) over ``schema``'s
    defaults, as an instance of ``schema``: the one way below the command line that plain settings
    become a schema's (a preset's YAML, a player's optimiser overrides). A key the schema lacks or a
    value of the wrong type raises :class:`ConfigError`, one line naming the key under ``where``
    (``optimizer.players.ace``)."""
    try:
        out = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(schema), data))
    except OmegaConfBaseException as exc:
        raise ConfigError(one_line(exc, f"{where}." if where else "")) from None
    assert isinstance(out, schema)
    return out


def read_mapping(path: Path, what: str) -> Mapping[str, Any]:
    """The YAML mapping in ``path`` (``what`` it should hold, for the error when it holds none),
    read as the command line's composition reads the same file (``1e-3`` a float, interpolations
    left unresolved): a preset cohort's, an option's (:mod:`skate.settings.options`)."""
    try:
        body = OmegaConf.load(path)
    except (OSError, OmegaConfBaseException) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    if not isinstance(body, Mapping):
        raise ConfigError(f"{path} holds no {what}: it must be a mapping of settings")
    return body

"""Composing the project's config outside the Hydra app, fast, through Hydra's public APIs only.

:func:`compose` is what :func:`skate.settings.config.compose_config` does once the schemas are in Hydra's
ConfigStore (:func:`store`). Composing takes Hydra about a quarter of a second, and tools, benchmarks
and tests compose hundreds of configs, so within one process the config made from the same group
choices (``game=mathquiz``, ``+experiment=...``) is composed once, while the files under ``conf/``
and the stored schemas stay the same; value overrides (``game.rounds=2``, ``seed=3``, ``+x=1``,
``~rerate``) are then applied to a deep copy of it by :func:`apply_values`, as Hydra applies them
after composing (same order, same errors: tests/settings/test_compose.py compares both with Hydra's own).

Hydra deep-copies its whole ConfigStore (every stored schema, skate's and Hydra's own) each time it
opens a config repository: twice per ``python -m skate`` and once for each of the ~100 group options
``skate play --help`` lists (1.6 s of CPU; 0.6 s without the copies). Nothing reads the store through
the copy but to load a node, which the store copies itself, so :func:`share_the_store` lets the
copy be the store itself.
"""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from textwrap import dedent
from typing import Any

from hydra import compose as hydra_compose
from hydra import initialize_config_dir
from hydra.core.config_store import ConfigStore
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import ConfigCompositionException
from omegaconf import DictConfig, OmegaConf, open_dict
from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException

from skate.paths import CONF_DIR
from skate.registry import SCHEMA_GROUP

_COMPOSED: dict[tuple, DictConfig] = {}
# What has been put in Hydra's ConfigStore through store(): (group, name) -> schema.
_STORED: dict[tuple[str | None, str], type] = {}


def share_the_store() -> None:
    """Let a deep copy of Hydra's ConfigStore be the store itself (see the module's docstring);
    tests/settings/test_compose.py checks that composing then leaves the store as it was."""
    ConfigStore.__deepcopy__ = _the_store  # type: ignore[attr-defined]


def _the_store(store: ConfigStore, memo: dict[int, Any]) -> ConfigStore:
    return store


share_the_store()


def store(group: str | None, name: str, node: type) -> None:
    """Put ``node`` in Hydra's ConfigStore as ``group/name`` (once: a schema stored is not stored again)."""
    if _STORED.get((group, name)) is not node:
        ConfigStore.instance().store(group=group, name=name, node=node)
        _STORED[(group, name)] = node


def forget(group: str | None, name: str) -> None:
    """Take ``group/name`` out of Hydra's ConfigStore again (a test's game leaving with its folder)."""
    if _STORED.pop((group, name), None) is not None:
        node = ConfigStore.instance().repo
        for part in (group or "").split("/") if group else []:
            node = node.get(part, {})
        node.pop(f"{name}.yaml", None)


def compose(overrides: Sequence[str] = (), return_hydra_config: bool = False) -> DictConfig:
    """The config ``python -m skate`` composes with these overrides (a fresh copy each call)."""
    overrides = list(overrides)
    parsed = OverridesParser.create().parse_overrides(overrides)
    groups, values = [], []
    if return_hydra_config or any(not _plain(o) for o in parsed):
        groups = overrides
    else:
        for o in parsed:
            if _is_group(o.key_or_group):
                groups.append(o.input_line)
            else:
                values.append(o)
    cfg = copy.deepcopy(_composed(tuple(groups), return_hydra_config))
    apply_values(values, cfg)
    return cfg


def apply_values(overrides: Sequence[Override], cfg: DictConfig) -> None:
    """Apply value overrides (parsed by Hydra's public override parser) to a composed config, as
    Hydra's config loader applies them after composing: ``key=v`` sets an existing key (merging a
    dict or list value), ``+key=v`` adds a new one, ``++key=v`` adds or sets, ``~key[=v]`` deletes;
    an error is the ``ConfigCompositionException`` Hydra raises, with its message."""
    for o in overrides:
        key, value = o.key_or_group, o.value()
        try:
            if o.is_delete():
                found = OmegaConf.select(cfg, key, throw_on_missing=False)
                if found is None:
                    raise ConfigCompositionException(f"Could not delete from config. '{key}' does not exist.")
                if value is not None and value != found:
                    raise ConfigCompositionException(
                        f"Could not delete from config. The value of '{key}' is {found} and not {value}.")
                parent, _, last = key.rpartition(".")
                with open_dict(cfg):
                    del (OmegaConf.select(cfg, parent) if parent else cfg)[last]
            elif o.is_add():
                if OmegaConf.select(cfg, key, throw_on_missing=False) is not None and not isinstance(value, (dict, list)):
                    raise ConfigCompositionException(dedent(f"""\
                        Could not append to config. An item is already at '{key}'.
                        Either remove + prefix: '{o.input_line[1:]}'
                        Or add a second + to add or override '{key}': '+{o.input_line}'
                        """))
                OmegaConf.update(cfg, key, value, merge=True, force_add=True)
            elif o.is_force_add():
                OmegaConf.update(cfg, key, value, merge=True, force_add=True)
            else:
                try:
                    OmegaConf.update(cfg, key, value, merge=True)
                except (ConfigAttributeError, ConfigKeyError) as ex:
                    raise ConfigCompositionException(
                        f"Could not override '{key}'.\nTo append to your config use +{o.input_line}") from ex
        except OmegaConfBaseException as ex:
            raise ConfigCompositionException(f"Error merging override {o.input_line}").with_traceback(
                sys.exc_info()[2]) from ex


def yaml_options(group: str) -> set[str]:
    """The options of ``group`` that are YAML files under ``conf/<group>/``."""
    return {p.stem for p in Path(CONF_DIR, group).glob("*.yaml")}


def user_groups() -> str:
    """The config groups users choose from, one line each with its options (``rating: elo, irt,
    ...``), as Hydra's help lists them but without the schemas the options extend (the
    ``schema`` group) or Hydra's own groups: ``skate play --help`` shows this (conf/config.yaml,
    ``hydra.help.template``, through the ``skate_user_groups`` resolver)."""
    repo = ConfigStore.instance().repo
    groups = {p.name for p in Path(CONF_DIR).iterdir() if p.is_dir()} | {k for k, v in repo.items() if isinstance(v, dict)}
    lines = []
    for group in sorted(groups - {"hydra", SCHEMA_GROUP}):
        stored = {name.removesuffix(".yaml") for name, node in repo.get(group, {}).items() if not isinstance(node, dict)}
        lines.append(f"{group}: {', '.join(sorted(yaml_options(group) | stored))}")
    return "\n".join(lines)


OmegaConf.register_new_resolver("skate_user_groups", user_groups, replace=True)


def _plain(o: Override) -> bool:
    """An override the fast path may take: no sweep, no package, not Hydra's own settings."""
    return not o.is_sweep_override() and o.package is None and not o.key_or_group.startswith("hydra")


def _is_group(key: str) -> bool:
    if "/" in key:
        return True
    if "." in key:
        return False
    return os.path.isdir(os.path.join(CONF_DIR, key)) or isinstance(ConfigStore.instance().repo.get(key), dict)


def _composed(overrides: tuple[str, ...], return_hydra_config: bool) -> DictConfig:
    key = (overrides, return_hydra_config, CONF_DIR, _conf_stamp(), tuple(_STORED.items()),
           os.getcwd() if return_hydra_config else None)
    if key not in _COMPOSED:
        with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
            cfg = hydra_compose(config_name="config", overrides=list(overrides),
                                return_hydra_config=return_hydra_config)
        if len(_COMPOSED) >= 256:
            _COMPOSED.pop(next(iter(_COMPOSED)))
        _COMPOSED[key] = cfg
    return _COMPOSED[key]


def _conf_stamp() -> tuple[tuple[str, int], ...]:
    """Each config file under conf/ with its modification time, so an edited file is read again."""
    return tuple(sorted((str(p), p.stat().st_mtime_ns) for p in Path(CONF_DIR).rglob("*.yaml")))

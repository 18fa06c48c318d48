"""Hydra's side of the settings, the command line's alone: the schemas put in Hydra's ConfigStore
for the YAML presets to extend (``defaults: [/schema/<group>/<name>@_here_, _self_]``), and the
presets composed with command-line overrides as ``skate`` (a Hydra app) composes them. Below the
command line settings are typed (:mod:`skate.settings`); Python callers make them with
``skate.config``/``skate.SkateConfig`` (docs/python.md), which reads the same YAML without Hydra.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hydra import compose, initialize_config_dir
from hydra.core.config_store import ConfigStore
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import ConfigCompositionException, MissingConfigException, OverrideParseException
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from skate.errors import ConfigError, one_line
from skate.games import load_games
from skate.paths import CONF_DIR
from skate.registry import SCHEMA_GROUP, schema_node
from skate.settings.config import _SCHEMAS, REGISTRIES, SkateConfig
from skate.settings.options import build_settings, settings_node, yaml_options

# What has been put in Hydra's ConfigStore here: (group, name) -> schema, so that a schema is stored once.
_STORED: dict[tuple[str | None, str], object] = {}


def store(group: str | None, name: str, node: object) -> None:
    """Put ``node`` in Hydra's ConfigStore as ``group/name`` (once: a schema stored is not stored again)."""
    if _STORED.get((group, name)) is not node:
        ConfigStore.instance().store(group=group, name=name, node=node)
        _STORED[(group, name)] = node


def register_configs() -> None:
    """Put every schema in Hydra's ConfigStore (idempotent; a game or component registered since the
    last call is added). A game or component with no YAML under ``conf/<group>/`` is the option
    ``<group>=<name>`` as its schema stands; one with a YAML (which sets values of its own) gets
    its schema as ``schema/<group>/<name>``, out of the options users choose, for the YAML's
    defaults list (:func:`skate.registry.schema_default`)."""
    store(None, "skate_schema", settings_node())
    for group, entries in (
        ("game", [(n, g.config_schema) for n, g in load_games().items()]),
        *((r.group, [(e.name, e.schema) for e in r]) for r in REGISTRIES),
    ):
        with_yaml = yaml_options(group)
        for name, schema in entries:
            store(*(schema_node(group, name) if name in with_yaml else (group, name)), schema)
    for group, node in _SCHEMAS:
        store(*schema_node(group), node)


def compose_config(overrides: Sequence[str] = (), return_hydra_config: bool = False) -> DictConfig:
    """The config ``skate`` composes with these command-line overrides (Hydra's own compose: every
    error is Hydra's); :func:`settings_from` makes it the settings a game is played with."""
    register_configs()
    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides), return_hydra_config=return_hydra_config)


def settings_from(overrides: Sequence[str] = ()) -> SkateConfig:
    """The settings ``skate <overrides>`` plays: composed, typed, settled and checked."""
    return build_settings(compose_config(overrides))


def edits_of(overrides: Sequence[str]) -> dict[str, Any]:
    """Command-line overrides of a recorded run's settings (``skate rate RUN rating=elo``, ``skate
    resume=RUN game.rounds=60``) as the edits :func:`skate.settings.recorded.run_settings` makes,
    ``{key: value}`` in their order, each value read by Hydra's override parser as on any command
    line (``60`` a number, ``null`` None, ``[a, b]`` a list). A sweep, a deletion or a bad
    override is a :class:`ConfigError` saying what to write."""
    try:
        parsed = OverridesParser.create().parse_overrides(list(overrides))
    except OverrideParseException as exc:
        raise ConfigError(describe_config_error(exc)) from None
    edits: dict[str, Any] = {}
    for o in parsed:
        if o.is_sweep_override() or o.is_delete() or o.package is not None:
            raise ConfigError(f"cannot apply {o.input_line!r} to a recorded run: write key=value (no sweep, ~ or @)")
        edits.pop(o.key_or_group, None)  # a key given again: the last value, in the last place
        edits[o.key_or_group] = o.value()
    return edits


def user_groups() -> str:
    """The config groups users choose from, one line each with its options (``rating: elo, irt,
    ...``), as Hydra's help lists them but without the schemas the options extend (the ``schema``
    group) or Hydra's own groups: ``skate play --help`` shows this (conf/config.yaml,
    ``hydra.help.template``, through the ``skate_user_groups`` resolver)."""
    register_configs()
    stored = {group for group, _ in _STORED if group and "/" not in group}
    lines = []
    for group in sorted(({p.name for p in Path(CONF_DIR).iterdir() if p.is_dir()} | stored) - {"hydra", SCHEMA_GROUP}):
        names = (
            {n.removesuffix(".yaml") for n in ConfigStore.instance().list(group) if n.endswith(".yaml")}
            if group in stored
            else set()
        )
        lines.append(f"{group}: {', '.join(sorted(yaml_options(group) | names))}")
    return "\n".join(lines)


def describe_config_error(exc: BaseException) -> str:
    """One line for a config Hydra could not compose: the key or option, and what to write
    instead (Hydra's own report runs to several lines and suggests ``+key=`` for a misspelt key,
    which a typed config refuses as well)."""
    if isinstance(exc, MissingConfigException) and exc.missing_cfg_file and "/" in exc.missing_cfg_file:
        group, _, name = exc.missing_cfg_file.rpartition("/")
        options = sorted(exc.options or [])
        # <option>_schema named the schema an option extends before the schemas left the groups
        near = (
            [name.removesuffix("_schema")]
            if name.removesuffix("_schema") in options
            else difflib.get_close_matches(name, options, n=1)
        )
        hint = f"did you mean {group}={near[0]}? " if near else ""
        return f"{group}={name} is not an option of {group}: {hint}choose one of {', '.join(options)}"
    if isinstance(exc, OverrideParseException):
        return f"cannot read an override: {str(exc).splitlines()[0]} (write key=value; quote values with spaces)"
    cause = exc.__cause__ if isinstance(exc, ConfigCompositionException) else exc
    if isinstance(cause, OmegaConfBaseException) and getattr(cause, "full_key", None):
        return one_line(cause)  # as skate.config says it: a misspelt key names the nearest setting
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


OmegaConf.register_new_resolver("skate_user_groups", user_groups, replace=True)

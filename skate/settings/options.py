"""The YAML presets under ``conf/`` as typed settings, without Hydra: what ``skate.preset`` and
``skate.settings`` give a Python caller (docs/python.md).

A group's option is its YAML, ``conf/<group>/<name>.yaml``, over the schema its defaults list
names (``/schema/<group>/<schema>@_here_``), or, for an option with no YAML, the registered
schema of that name (``game=mathquiz``, ``rating=trueskill_schema``). :func:`settings` puts a
whole game together as ``skate`` composes it from ``conf/config.yaml``: each group's option (the
choices given, else the defaults list's), the choices an experiment or a chosen option makes for
other groups (``override /aug@_global_.aug: no_info``; a choice given here wins over them), the
experiment's keys, the ``preset_game`` and ``players_game`` presets of the choices made
(``${experiment}_${game}``, ``${players}_${game}``), the primary config's own keys, then the
values given. tests/settings/test_options.py checks that it gives what Hydra composes, for every
option of every group, every experiment and every cohort with each game.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from omegaconf import MISSING, DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from skate.errors import ConfigError, one_line, read_mapping
from skate.estimators.adaptive import UNSURE_BELOW
from skate.estimators.base import estimator
from skate.games import get_game, load_games
from skate.paths import CONF_DIR
from skate.ratings.base import rating_name
from skate.ratings.config import RatingConfig, draw_margin_of, sigma_star_factor, validate_rating
from skate.registry import spoken
from skate.settings.config import _SCHEMAS, REGISTRIES, SECTIONS, SkateConfig, unknown_setting, validate

# Settings composed, not yet typed as SkateConfig: OmegaConf's typed tree, which only this module
# (and the command line's Hydra) makes and changes; the rest of skate passes it along.
Composed = DictConfig

# The groups of conf/config.yaml's defaults list that hold sections, and the optional global presets.
GLOBAL = ("experiment", "preset_game", "players_game")


def _yaml(path: Path) -> tuple[list[Any], DictConfig]:
    """A YAML option's defaults list and its keys."""
    body = cast(DictConfig, read_mapping(path, "option"))  # OmegaConf's node, as read_mapping reads it
    listed = body.pop("defaults", None)
    defaults = OmegaConf.to_container(listed, resolve=False) if listed is not None else []
    if not isinstance(defaults, list):
        raise ConfigError(f"{path}: its defaults are a list")
    return defaults, body


def yaml_options(group: str) -> set[str]:
    """The options of ``group`` that are YAML files under ``conf/<group>/``."""
    return {p.stem for p in Path(CONF_DIR, group).glob("*.yaml")}


def _options(group: str) -> list[str]:
    names = yaml_options(group)
    if group == "game":
        names |= set(load_games())
    for registry in REGISTRIES:
        if registry.group == group:
            names |= {e.name for e in registry} | {f"{e.name}_schema" for e in registry}
    return sorted(names)


def _schema(group: str, name: str) -> type:
    """The schema an option extends: ``/schema/<group>/<name>`` (a registered component's) or
    ``/schema/<group>`` (the group's one schema)."""
    if group == "game":
        return get_game(name).config_schema
    for g, schema in _SCHEMAS:
        if g == group:
            return schema
    for registry in REGISTRIES:
        if registry.group == group:
            return registry.get(name.removesuffix("_schema")).schema
    raise ConfigError(f"{group} is not a config group: choose one of {', '.join(SECTIONS)}")


def option(group: str, name: str) -> tuple[DictConfig, dict[str, str]]:
    """The option ``<group>=<name>`` as a typed node, and the choices it makes for other groups."""
    path = Path(CONF_DIR, group, f"{name}.yaml")
    if not path.is_file():
        if name not in _options(group):
            raise ConfigError(f"{group}={name} is not an option of {group}: choose one of {', '.join(_options(group))}")
        return OmegaConf.structured(_schema(group, name.removesuffix("_schema") if group != "game" else name)), {}
    defaults, body = _yaml(path)
    schema, choices = None, {}
    for entry in defaults:
        if entry == "_self_":
            continue
        if isinstance(entry, str) and entry.startswith("/schema/"):
            parts = entry.split("@")[0].split("/")[2:]  # schema, group[, name]
            schema = _schema(group, parts[1] if len(parts) > 1 else group)
        elif isinstance(entry, Mapping) and len(entry) == 1:
            ((key, value),) = entry.items()
            choices[str(key).removeprefix("override ").strip("/").split("@")[0]] = str(value)
        else:
            raise ConfigError(f"{path}: its defaults list holds {entry!r}, which skate's presets do not use")
    if schema is None:
        raise ConfigError(f"{path}: its defaults list names no schema (/schema/{group}...@_here_)")
    return cast(Composed, OmegaConf.merge(OmegaConf.structured(schema), body)), choices


def preset(name: str, group: str = "players", values: Mapping[str, Any] | None = None) -> Any:
    """The option ``<group>=<name>`` typed, as a section of :class:`SkateConfig` takes it
    (``SkateConfig(players=preset("local_cohort"))``), with ``values`` (keys within the section,
    dotted) set over it; unchecked (its section's checks run with the whole settings'). Its choices
    for other groups (the local cohort's ``aug=no_info``) and its presets for each game are
    :func:`settings`' to make."""
    node, _ = option(group, name)
    try:
        for key, value in (values or {}).items():
            OmegaConf.update(node, key, value, merge=True, force_add=False)  # as Hydra sets key=value
        return OmegaConf.to_object(node)
    except OmegaConfBaseException as exc:
        raise ConfigError(f"{group}={name}: {one_line(exc, group + '.')}") from None


def _primary() -> tuple[dict[str, str], DictConfig]:
    """conf/config.yaml's choices (its defaults list's groups) and its own keys."""
    defaults, body = _yaml(Path(CONF_DIR, "config.yaml"))
    body.pop("hydra", None)
    choices = {}
    for entry in defaults:
        if isinstance(entry, Mapping) and len(entry) == 1:
            ((key, value),) = entry.items()
            key = str(key)
            if key.startswith("override ") or key.startswith("optional "):
                continue
            choices[key] = str(value)
    return choices, body


def settings(values: Mapping[str, Any] | None = None, **choices: str) -> SkateConfig:
    """A whole game's settings, as ``skate <group>=<option>... <key>=<value>...`` composes them:
    ``settings(players="local_cohort", game="cop", values={"game.rounds": 6})``. ``choices``: an
    option for any config group (and ``experiment``); ``values``: dotted keys and their values,
    set last. Settled and checked (:func:`build_settings`); bad input is one line."""
    return build_settings(composed(values, **choices))


def composed(values: Mapping[str, Any] | None = None, **choices: str) -> DictConfig:
    """What :func:`settings` settles and checks: the options merged, every section typed by its
    option's schema, interpolations unresolved (the form a recorded run's settings are read into)."""
    defaults, own = _primary()
    unknown = sorted(set(choices) - set(SECTIONS) - {"experiment"})
    if unknown:
        raise ConfigError(f"{unknown[0]} is not a config group: choose among {', '.join((*SECTIONS, 'experiment'))}")
    chosen = {**defaults, **{k: v for k, v in choices.items() if k in SECTIONS}}
    experiment = choices.get("experiment")
    extra: list[DictConfig] = []
    if experiment is not None:
        path = Path(CONF_DIR, "experiment", f"{experiment}.yaml")
        if not path.is_file():
            raise ConfigError(
                f"experiment={experiment} is not an option of experiment: choose one of "
                f"{', '.join(sorted(p.stem for p in path.parent.glob('*.yaml')))}"
            )
        exp_defaults, exp_body = _yaml(path)
        for entry in exp_defaults:
            if isinstance(entry, Mapping) and len(entry) == 1:
                ((key, value),) = entry.items()
                group = str(key).removeprefix("override ").strip("/").split("@")[0]
                if group not in choices:
                    chosen[group] = str(value)
        extra.append(exp_body)
    fixed = set(choices) | (_experiment_groups(experiment) if experiment is not None else set())
    read: dict[tuple[str, str], tuple[DictConfig, dict[str, str]]] = {}  # each option read once

    def read_option(group: str) -> tuple[DictConfig, dict[str, str]]:
        key = (group, chosen[group])
        if key not in read:
            read[key] = option(*key)
        return read[key]

    for _ in range(len(SECTIONS)):  # an option's choices for other groups (a choice made above wins)
        made = {
            other: value for group in SECTIONS for other, value in read_option(group)[1].items() if other not in fixed
        }
        if all(chosen.get(k) == v for k, v in made.items()):
            break
        chosen.update(made)
    cfg = copy.deepcopy(settings_node())
    for group in SECTIONS:
        cfg[group] = read_option(group)[0]
    for preset_group, key in (
        ("preset_game", f"{experiment}_{chosen['game']}"),
        ("players_game", f"{chosen['players']}_{chosen['game']}"),
    ):
        path = Path(CONF_DIR, preset_group, f"{key}.yaml")
        if path.is_file():
            extra.append(_yaml(path)[1])
    for body in extra:
        body.pop("hydra", None)  # a sweep's own settings (an experiment's grid): Hydra's, not the game's
    try:
        for body in [*extra, own]:
            cfg = cast(Composed, OmegaConf.merge(cfg, body))
        for key, value in (values or {}).items():
            OmegaConf.update(cfg, key, value, merge=True, force_add=False)  # as Hydra sets key=value
    except OmegaConfBaseException as exc:
        raise ConfigError(one_line(exc)) from None
    return cfg


def _experiment_groups(experiment: str) -> set[str]:
    defaults, _ = _yaml(Path(CONF_DIR, "experiment", f"{experiment}.yaml"))
    return {
        str(k).removeprefix("override ").strip("/").split("@")[0] for e in defaults if isinstance(e, Mapping) for k in e
    }


def rating_option(name: str) -> Any:
    """The rating option ``rating=<name>``, typed: what a ``rerate`` entry's ``rating: <name>``
    starts from (:func:`rerate_settings`)."""
    names = _options("rating")
    if name not in names:
        raise ConfigError(f"rating={name!r} is invalid: give one of the rating options: {', '.join(names)}")
    return preset(name, "rating")


def section(group: str, values: Mapping[str, Any] | None = None, **choices: str) -> Any:
    """One section of the settings :func:`settings` composes, typed but unchecked: a setting of it
    that refers to another section's (an embedder's ``cache_dir: ${llm.cache_dir}``) is read from
    the whole; ``values`` are keys within the section."""
    cfg = composed({f"{group}.{k}": v for k, v in (values or {}).items()}, **choices)
    try:
        return OmegaConf.to_object(cfg[group])
    except OmegaConfBaseException as exc:
        raise ConfigError(one_line(exc)) from None


def typed(schema: type) -> Composed:
    """A section at its schema's defaults, typed by it."""
    return OmegaConf.structured(schema)


def option_schema(group: str, name: str) -> type:
    """The schema the option ``<group>=<name>`` is typed by (a YAML option's: the schema it extends)."""
    schema = OmegaConf.get_type(option(group, name)[0])
    if not isinstance(schema, type):
        raise ConfigError(f"{group}={name} is typed by no schema")
    return schema


def merged(cfg: Composed, data: Mapping[str, Any]) -> Composed:
    """``data`` (plain, as a run records its settings) over ``cfg``: a dict-typed setting
    (``llm.prices``) takes its keys, a schema's section still refuses a key it lacks (one line)."""
    OmegaConf.set_struct(cfg, False)
    try:
        out = OmegaConf.merge(cfg, data)
    except OmegaConfBaseException as exc:
        raise ConfigError(one_line(exc)) from None
    OmegaConf.set_struct(out, True)
    return cast(Composed, out)


def edited(cfg: Composed, key: str, value: Any) -> Composed:
    """``cfg`` with ``key`` (dotted) set to ``value``, typed as the setting is."""
    node = OmegaConf.select(cfg, key, default=_ABSENT)
    if node is _ABSENT:
        raise ConfigError(f"{key} is not a setting this skate has")
    if isinstance(value, (list, tuple)) or (
        isinstance(value, Mapping) and isinstance(node, DictConfig) and OmegaConf.get_type(node) is dict
    ):
        OmegaConf.update(cfg, key, [] if isinstance(value, (list, tuple)) else {}, merge=False)  # replaced whole
    try:
        OmegaConf.update(cfg, key, value, merge=True)  # a list item by its index: players.simulated.0.pitch
    except OmegaConfBaseException as exc:
        where = str(getattr(exc, "full_key", None) or "")  # the key in full, or within the value (an entry's own)
        raise ConfigError(one_line(exc, "" if where.startswith(key) else f"{key}.")) from None
    return cfg


_ABSENT = object()


# ------------------------------------------------------------- settings from a composed config
_NODE: list[Composed] = []


def settings_node() -> Composed:
    """SkateConfig as Hydra composes it: each section that a group's option fills in left missing
    (typed by its base schema), for the option chosen to fill; made once."""
    if not _NODE:
        node = OmegaConf.structured(SkateConfig)
        for name in SECTIONS:
            node[name] = MISSING
        _NODE.append(node)
    return _NODE[0]


def check_links(e: Composed, r: Composed) -> None:
    """What only the composed config can say (before it is typed): an estimator that decides the
    rating's pairwise outcomes, whose outcome rule follows the rating's (``${rating.outcome}``),
    needs a rating that has one."""
    kind = estimator.of(OmegaConf.get_type(e))
    if kind.component.decides_outcomes and OmegaConf.is_interpolation(e, "outcome") and "outcome" not in r:
        others = estimator.names(lambda entry: not entry.component.decides_outcomes)
        raise ConfigError(
            f"{kind.option} settles the pairwise outcomes of the rating's outcome rule, and "
            f"{rating_name(OmegaConf.get_type(r))} has none (it rates the answers themselves): use estimator={spoken(others)}, "
            "or give estimator.outcome, estimator.draw_margin and estimator.p_thresh"
        )


def prepare(cfg: Composed) -> None:
    """Settle what the config leaves to the cohort and the estimator, in place, so that the run
    records (and a resume replays) plain values: a draw margin tied to sigma* becomes its number
    (stages are settled to name players, not roles, by :func:`validate`, which resolves them once). Also what can only be checked before the config is typed:
    an estimator's settings that refer to a rating key the rating does not have."""
    check_links(cfg.estimator, cfg.rating)
    if isinstance(cfg.rating.get("draw_margin"), str):
        cfg.rating.draw_margin = draw_margin_of(cfg.rating.draw_margin, cfg.estimator)
    if "confidence" in cfg.estimator and cfg.estimator.confidence is None:
        # Adaptive: unsure = below the confidence at which the game stops, so it samples until then.
        cfg.estimator.confidence = float(cfg.stop.settled) if cfg.stop.settled is not None else UNSURE_BELOW


def build_settings(cfg: Composed) -> SkateConfig:
    """The run's settings from a composed config: settled (:func:`prepare`, in place), typed once
    (``OmegaConf.to_object``: every section an instance of its schema), its stages settled
    (:func:`settle_stages`), then checked (:func:`validate`). Everything that plays or prepares a
    game takes these; only the command-line layer sees the composed config."""
    prepare(cfg)  # a draw margin tied to sigma* becomes its number (validate settles the stages)
    settings = to_settings(cfg)
    unknown = unknown_setting(settings)
    if unknown is not None:
        raise ConfigError(unknown)
    return validate(settings)


def settle(settings: SkateConfig) -> SkateConfig:
    """Settings made in Python (``SkateConfig(...)``, its sections built as dataclasses) settled and
    checked as a composed config is (:func:`build_settings`): the cache folders' environment
    variables read, the draw margin settled, every check run; a copy."""
    if not isinstance(settings, SkateConfig):
        raise TypeError(f"settle takes a SkateConfig, not a {type(settings).__name__}")
    try:
        cfg = OmegaConf.structured(settings)
    except OmegaConfBaseException as exc:
        raise ConfigError(_typing_error(settings, exc)) from None
    return build_settings(cfg)


def _typing_error(settings: SkateConfig, exc: OmegaConfBaseException) -> str:
    """A value of the wrong type in settings made in Python, in one line naming its key: OmegaConf
    names the key within the section it typed, so the section that fails on its own names it."""
    for f in dataclasses.fields(settings):
        section = getattr(settings, f.name)
        if dataclasses.is_dataclass(section) and not isinstance(section, type):
            try:
                OmegaConf.structured(section)
            except OmegaConfBaseException as inner:
                return one_line(inner, f"{f.name}.")
    return one_line(exc)


def to_settings(cfg: Composed) -> SkateConfig:
    """``cfg`` typed (every section an instance of its schema), unchecked."""
    try:
        settings = OmegaConf.to_object(cfg)
    except OmegaConfBaseException as exc:
        raise ConfigError(one_line(exc)) from None
    if not isinstance(settings, SkateConfig):
        raise TypeError(f"to_settings takes the whole settings composed, not a {type(settings).__name__}")
    return settings


# ------------------------------------------------------------- the rerate list's rating settings
RERATE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def rerate_settings(
    entries: Sequence[Any], rating: RatingConfig, estimator: Mapping[str, Any] | None = None
) -> list[tuple[str, RatingConfig]]:
    """``(name, rating settings)`` for each entry of the config's ``rerate`` list.

    An entry is ``{name: <name>, rating: <option>?, <rating key>: <value>, ...}``: the game's own
    rating settings (``rating``), or with ``rating:`` that option's (:func:`rating_option`), with the entry's keys
    over them. A draw margin tied to sigma* takes the estimator's (``estimator``: its settings as
    plain data). Bad entries raise :class:`ConfigError` naming ``rerate[i]``."""
    out: list[tuple[str, RatingConfig]] = []
    for i, entry in enumerate(entries):
        key = f"rerate[{i}]"
        if not isinstance(entry, Mapping):
            raise ConfigError(
                f"{key}={entry!r} is invalid: give {{name: <name>, <rating key>: <value>, ...}}, "
                "e.g. {name: absolute, outcome: absolute}"
            )
        fields = {str(k): v for k, v in entry.items()}
        name = str(fields.pop("name", "") or "")
        if not RERATE_NAME.fullmatch(name):
            raise ConfigError(
                f"{key}.name={name!r} is invalid: give each entry a name of letters, digits, _ . - "
                "(it names ratings.<name>.json)"
            )
        if name in {n for n, _ in out}:
            raise ConfigError(f"{key}.name={name!r} is invalid: another rerate entry has this name")
        key = f"rerate[{i}] ({name})"
        chosen = fields.pop("rating", None)
        try:
            base = OmegaConf.structured(rating if chosen is None else rating_option(str(chosen)))
        except ConfigError as exc:
            raise ConfigError(f"{key}: {exc}") from None
        try:
            cfg: Any = OmegaConf.to_object(OmegaConf.merge(base, fields))
        except OmegaConfBaseException as exc:
            msg = str(exc).splitlines()[0]
            raise ConfigError(
                f"{key}: {msg} (an entry's keys are the rating's: {sorted(k for k in base if k != '_target_')})"
            ) from None
        if sigma_star_factor(getattr(cfg, "draw_margin", None)) is not None:
            cfg.draw_margin = draw_margin_of(cfg.draw_margin, estimator, f"{key}.draw_margin")
        try:
            validate_rating(cfg)
        except ConfigError as exc:
            raise ConfigError(f"{key}: {exc}") from None
        out.append((name, cfg))
    return out

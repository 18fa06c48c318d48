"""A registry per config group: which component each option builds, and what that component can do.

Every config group whose options build different components (``rating``, ``estimator``,
``logger``, ``embedder``, ``sandbox``; games have their own registry in :mod:`skate.games`) has one
:class:`Registry`, named like the group and defined in the group's package. A component joins it
with a class decorator in its own module, beside its settings schema::

    @rating.register("trueskill", TrueSkillConfig)
    class TrueSkillRating(RatingBackend):
        says_order = True      # a capability: a class attribute, declared here, read by the checks

The registry imports every module of its package the first time it is asked, so adding a
component is one module plus, where it sets values of its own, its YAML
(``conf/<group>/<option>.yaml``, ``defaults: [/schema/<group>/<name>@_here_, _self_]``): the
composition stores each registered schema in Hydra's config store out of the options users choose,
as ``schema/<group>/<name>`` (:func:`schema_node`; a component with no YAML is the option
``<group>=<name>`` as its schema stands), and the checks find the component (and its capabilities)
from the schema of a config section, never from its ``_target_`` string.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar, cast

from skate.errors import ConfigError

T = TypeVar("T", bound=type)
S = TypeVar("S")

# The ConfigStore group holding the schemas the YAML options extend: not an option users choose
# (``skate play --help`` lists none of it).
SCHEMA_GROUP = "schema"


def schema_node(group: str, name: str | None = None) -> tuple[str, str]:
    """Where the schema of option ``name`` of ``group`` is stored in Hydra's ConfigStore, as
    (group, name): ``schema/<group>/<name>``, or ``schema/<group>`` for a group with one schema
    (``aug``, ``players``, ``optimizer``)."""
    return (f"{SCHEMA_GROUP}/{group}", name) if name else (SCHEMA_GROUP, group)


def schema_default(group: str, name: str | None = None) -> str:
    """The entry of a YAML option's defaults list that extends that schema:
    ``/schema/<group>/<name>@_here_`` (its keys land in the option's own package)."""
    where, what = schema_node(group, name)
    return f"/{where}/{what}@_here_"


class Component(Generic[S]):
    """A part built from its settings, each default written once, in its schema: an instance of
    :attr:`schema` (``EloRating(EloConfig(k=32))``, what :meth:`Registry.build` passes), or the
    schema's keys as keywords (``EloRating(k=32)``: the schema built from them, a misspelt key a
    :class:`~skate.errors.SettingError`). ``settings`` holds them; a part's own options that are no
    setting (``record_pairs``) are keywords of its ``__init__`` beside them."""

    # The settings schema: set by the registry's decorator (``@rating.register("elo", EloConfig)``);
    # a part registered by import path declares its own (the registry checks they agree).
    schema: ClassVar[type]
    settings: S

    def __init__(self, settings: S | None = None, /, **values: Any) -> None:
        if settings is None:
            settings = self.schema(**values)
        elif values:
            settings = dataclasses.replace(cast(Any, settings), **values)
        self.settings = settings


@dataclass(frozen=True)
class Entry(Generic[T]):
    """One registered component: the option name users give (``rating=<name>``), its settings
    schema (a dataclass), and the class built from those settings (whose class attributes are its
    capabilities). A component with heavy imports (an embedder's model, a jail) may be registered
    beside its schema by import path, ``"package.module:Class"``, and is imported on first use."""

    group: str
    name: str
    schema: type
    ref: Any  # the class, or "package.module:Class"

    @property
    def component(self) -> T:
        if isinstance(self.ref, str):
            module, _, qualname = self.ref.partition(":")
            obj: Any = importlib.import_module(module)
            for part in qualname.split("."):
                obj = getattr(obj, part)
            return obj
        return self.ref

    @property
    def option(self) -> str:
        """How a user selects it: ``<group>=<name>``."""
        return f"{self.group}={self.name}"

    @property
    def target(self) -> str:
        """The component's import path (what its schema's ``_target_`` holds)."""
        if isinstance(self.ref, str):
            return self.ref.replace(":", ".")
        return f"{self.ref.__module__}.{self.ref.__qualname__}"


class Registry(Generic[T]):
    """The components of one config group (see the module's docstring)."""

    def __init__(self, group: str, package: str) -> None:
        self.group = group
        self.package = package  # its modules are imported (once) before the first lookup
        self._entries: dict[str, Entry[T]] = {}
        self._loaded = False

    def register(self, name: str, schema: type, component: str | None = None) -> Callable[[T], T]:
        """A class decorator: the class is built from settings of type ``schema``. Or, with
        ``component="package.module:Class"``, a call that registers a class imported on first use."""
        if not dataclasses.is_dataclass(schema):
            raise TypeError(f"{self.group}={name}: its schema {schema!r} is not a dataclass")

        def add(ref: Any) -> Any:
            if isinstance(ref, type) and issubclass(ref, Component) and "schema" not in vars(ref):
                ref.schema = schema  # the schema its settings are (Component)
            entry: Entry[T] = Entry(self.group, name, schema, ref)
            old = self._entries.get(name)
            if old is not None and old.target != entry.target:  # (the same module imported again is fine)
                raise ValueError(f"{self.group}={name} is registered twice: {old.target} and {entry.target}")
            self._entries[name] = entry
            return ref

        if component is not None:
            add(component)
        return add

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        pkg = importlib.import_module(self.package)
        for mod in pkgutil.iter_modules(getattr(pkg, "__path__", []), self.package + "."):
            if not mod.name.rsplit(".", 1)[-1].startswith("_"):
                importlib.import_module(mod.name)

    def entries(self) -> list[Entry[T]]:
        self._load()
        return list(self._entries.values())

    def __iter__(self) -> Iterator[Entry[T]]:
        return iter(self.entries())

    def names(self, where: Callable[[Entry[T]], bool] | None = None) -> list[str]:
        """The options' names, sorted; with ``where``, only the entries it accepts (by capability:
        ``rating.names(lambda e: e.component.says_order)``), for messages that list what to use."""
        return sorted(e.name for e in self.entries() if where is None or where(e))

    def get(self, name: str) -> Entry[T]:
        self._load()
        try:
            return self._entries[name]
        except KeyError:
            raise ConfigError(
                f"{self.group}={name!r} is not a registered {self.group}: choose one of {', '.join(self.names())}"
            ) from None

    def of(self, section: Any) -> Entry[T]:
        """The entry whose schema ``section`` has: a schema instance, or a schema class. A section
        of no registered schema raises :class:`ConfigError`."""
        self._load()
        kind = _schema_of(section)
        for entry in self._entries.values():
            if entry.schema is kind:
                return entry
        for entry in self._entries.values():  # a subclass of a registered schema (a user's own)
            if isinstance(kind, type) and issubclass(kind, entry.schema):
                return entry
        name = getattr(kind, "__name__", repr(kind))
        raise ConfigError(
            f"{self.group}: settings of type {name} belong to no registered {self.group} "
            f"(registered: {', '.join(self.names())})"
        )

    def build(self, section: Any, **extra: Any) -> Any:
        """The component ``section`` (a schema instance) names, built from it; ``extra``: the
        component's own options that are no setting (``record_pairs=True``)."""
        entry = self.of(section)
        cls: Any = entry.component
        if not (isinstance(cls, type) and issubclass(cls, Component)):
            raise TypeError(
                f"{entry.option}: {cls!r} is not built from its settings (make it a skate.registry.Component)"
            )
        if not issubclass(entry.schema, cls.schema):
            raise TypeError(
                f"{entry.option}: {cls.__name__} is built from {cls.schema.__name__}, "
                f"but it is registered with {entry.schema.__name__}"
            )
        return cls(section, **extra)

    def of_target(self, target: str) -> Entry[T] | None:
        """The entry a recorded ``_target_`` names (for records of runs made before group choices
        were recorded: :mod:`skate.settings` migrates them), or None."""
        self._load()
        for entry in self._entries.values():
            if entry.target == target or _default_target(entry.schema) == target:
                return entry
        return None


def spoken(names: Iterable[str], last: str = "or") -> str:
    """Names as a message lists them: ``a, b or c`` (``none`` when there are none)."""
    names = list(names)
    if len(names) < 2:
        return names[0] if names else "none"
    return f"{', '.join(names[:-1])} {last} {names[-1]}"


def _schema_of(section: Any) -> Any:
    return section if isinstance(section, type) else type(section)


def _default_target(schema: type) -> str | None:
    for f in dataclasses.fields(schema):
        if f.name == "_target_" and isinstance(f.default, str):
            return f.default
    return None

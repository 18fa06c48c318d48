"""The game registry: every package under ``skate/games/`` is a game, and so is every module an
installed distribution names in the ``skate.games`` entry point group.

A game package registers its :class:`~skate.games.base.Game` subclass with :func:`register` when
it is imported, together with how its players are made (:class:`~skate.games.base.GameParts`),
its own commands and how ``skate export`` reads its tasks; :func:`load_games` imports every
package in this folder and every entry point's module, so adding a game means adding its package
(here, or in a distribution of its own: ``[project.entry-points."skate.games"] name = "pkg.module"``),
with no edit anywhere else: its config schema is the option ``game=<name>``
(:func:`skate.cli.compose.register_configs`), its commands are ``skate <command>`` (:mod:`skate.cli`),
and the import contracts' game lists come from here (``tests/game_contracts.py``).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import pkgutil
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any

from skate.games.base import (
    AnswerFormat,
    Checks,
    FakePlayer,
    FakeRequest,
    Game,
    GameConfig,
    GameEnv,
    GameExport,
    GameParts,
    GameSpec,
    seeded_random,
)

__all__ = [
    "AnswerFormat",
    "Checks",
    "FakePlayer",
    "FakeRequest",
    "Game",
    "GameConfig",
    "GameEnv",
    "GameExport",
    "GameParts",
    "GameSpec",
    "get_game",
    "load_games",
    "register",
    "seeded_random",
]

_GAMES: dict[str, type[Game]] = {}
_LOCK = threading.Lock()
ENTRY_POINTS = "skate.games"  # the entry point group of games installed from elsewhere
_installed: list[str] = []  # the entry points loaded (once per process)


def register(
    cls: type[Game],
    *,
    simulation: Callable[..., Any] | None = None,
    modules: str | None = None,
    fake_player: Callable[[], FakePlayer] | None = None,
    practice: Callable[..., Any] | None = None,
    commands: Mapping[str, tuple[str, str]] | None = None,
    export: GameExport | None = None,
) -> type[Game]:
    """Make a game known under ``cls.spec.name`` (usable as a class decorator).

    Its package passes how its players are made (:class:`~skate.games.base.GameParts`):
    ``simulation(game, env)``, ``modules`` as ``"package.module:function"`` (imported on first
    use), ``fake_player()`` and, if it has practice tasks, ``practice(game, n, rng)``. A game
    class that defines those methods itself passes none of them. ``commands`` are the game's own
    tools, ``{"name": ("package.module:function", "what it does, in one line")}``, run as
    ``skate <name> ...`` (the function takes the arguments and returns an exit status; imported
    when the command runs); ``export`` says how ``skate export`` reads its tasks
    (:class:`~skate.games.base.GameExport`).
    """
    if simulation is not None or modules is not None or fake_player is not None or practice is not None:
        if simulation is None or modules is None or fake_player is None:
            raise ValueError(f"{cls.__name__}: register simulation, modules and fake_player together")
        cls.parts = GameParts(simulation=simulation, modules=modules, fake_player=fake_player, practice=practice)
    if commands is not None:
        for command, entry in commands.items():
            word = bool(command) and not command.startswith("-") and "=" not in command
            if not (word and isinstance(entry, tuple) and len(entry) == 2 and ":" in str(entry[0]) and entry[1]):
                raise ValueError(
                    f"{cls.__name__}: command {command!r} must be a word mapped to "
                    f'("package.module:function", "one line of help"), not {entry!r}'
                )
        cls.commands = dict(commands)
    if export is not None:
        cls.export = export
    name = cls.spec.name
    known = _GAMES.get(name)
    if known is not None and known is not cls:
        raise ValueError(f"two games are called {name!r}: {known.__module__} and {cls.__module__}")
    _GAMES[name] = cls
    return cls


def load_games() -> dict[str, type[Game]]:
    """Import every game package not imported yet, and (once) every module of the ``skate.games``
    entry points; return the registry (name -> game class)."""
    with _LOCK:
        for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
            if mod.ispkg and f"{__name__}.{mod.name}" not in sys.modules:
                importlib.import_module(f"{__name__}.{mod.name}")
        if not _installed:
            _installed.append(ENTRY_POINTS)
            for ep in sorted(importlib.metadata.entry_points(group=ENTRY_POINTS), key=lambda e: e.name):
                try:
                    ep.load()  # the module registers its game when imported
                except Exception as exc:
                    raise ImportError(
                        f"the game {ep.name!r} ({ep.value}, a {ENTRY_POINTS} entry point of "
                        f"{ep.dist.name if ep.dist else 'an installed distribution'}) cannot be "
                        f"imported: {exc}; fix or uninstall it"
                    ) from exc
                _installed.append(ep.value)
    return dict(_GAMES)


def get_game(name: str) -> type[Game]:
    """The game class registered under ``name``; a clear error naming the known games."""
    games = load_games()
    if name not in games:
        raise KeyError(f"no game called {name!r}; known games: {sorted(games)}")
    return games[name]

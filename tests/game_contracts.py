"""Import-linter contracts over every registered game, named in ``.importlinter``.

``.importlinter`` names no game: its ``games-independent`` and ``game-internals`` contracts are of
these types, whose game packages are read from the game registry (``skate.games.load_games()``)
when the check runs, so a new package under ``skate/games/`` is held to both contracts the moment
it registers a game, with no edit to ``.importlinter``. ``lint-imports`` finds this module because
it runs from the repository's root (it puts that folder on the import path).
"""

from __future__ import annotations

from grimp import ImportGraph
from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.contracts.independence import IndependenceContract
from importlinter.domain import fields
from importlinter.domain.contract import ContractCheck
from importlinter.domain.imports import ModuleExpression


def game_packages() -> list[str]:
    """The package of every registered game (``skate.games.<package>``), sorted."""
    from skate.games import __name__ as root
    from skate.games import load_games

    found = {".".join(cls.__module__.split(".")[:3]) for cls in load_games().values()}
    return sorted(m for m in found if m.startswith(root + "."))


def _named(name: str, games: list[str]) -> str:
    return f"{name} (the registered games: {', '.join(g.rpartition('.')[2] for g in games)})"


class GamesIndependent(IndependenceContract):
    """``independence`` among the registered games' packages (no ``modules`` option)."""

    type_name = "games_independent"
    modules = fields.SetField(subfield=fields.ModuleExpressionField(), required=False)

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        games = game_packages()
        self.modules = {ModuleExpression(m) for m in games}
        self.name = _named(self.name, games)
        return super().check(graph, verbose)


class GamesForbidden(ForbiddenContract):
    """``forbidden``: ``source_modules`` do not import the registered games' packages (no
    ``forbidden_modules`` option)."""

    type_name = "games_forbidden"
    forbidden_modules = fields.SetField(subfield=fields.ModuleExpressionField(), required=False)

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        games = game_packages()
        self.forbidden_modules = {ModuleExpression(m) for m in games}
        self.name = _named(self.name, games)
        return super().check(graph, verbose)

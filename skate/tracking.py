"""Run loggers (the ``logger`` config group): where progress and results are reported."""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("skate")


class RunLogger:
    """Hooks the engine calls; the base class does nothing."""

    def start(self, info: dict[str, Any]) -> None: ...

    def round_end(self, round: int, rounds: int, summary: dict[str, Any],
                  table: list[dict[str, Any]]) -> None: ...

    def finish(self, table: list[dict[str, Any]], summary: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


class NullLogger(RunLogger):
    """``logger=none``."""


class ConsoleLogger(RunLogger):
    """Progress lines through Python logging (Hydra sends them to the console and the run log)."""

    def __init__(self, every: int = 10) -> None:
        self.every = max(1, every)

    def start(self, info: dict[str, Any]) -> None:
        log.info("game %s: %d players, %d rounds, rating=%s, aug=%s, sandbox=%s, seed=%s",
                 info["game"], len(info["players"]), info["rounds"], info["rating"], info["aug"],
                 info["sandbox"], info["seed"])

    def round_end(self, round: int, rounds: int, summary: dict[str, Any],
                  table: list[dict[str, Any]]) -> None:
        if round % self.every and round != rounds:
            return
        leader = table[0]["player"] if table else "-"
        log.info("round %d/%d: %d valid tasks so far, %d attempts, %d answer samples; leader %s",
                 round, rounds, summary["tasks"], summary["attempts"], summary["samples"], leader)

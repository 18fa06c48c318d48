"""The run logger interface: the hooks the runner and engine call, the ``logger`` registry, and
``logger=none``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skate.errors import Settings
from skate.registry import Component, Registry


# The logger group's schemas (conf/logger/*.yaml) extend LoggerConfig, each in its logger's module.
@dataclass
class LoggerConfig(metaclass=Settings):
    """What every logger's settings are (the ``logger`` section's type); each logger's schema
    extends it (see :data:`logger`, the group's registry)."""


class RunLogger(Component[LoggerConfig]):
    """Hooks the runner and engine call; the base class does nothing. A logger is built from its
    settings (:class:`~skate.registry.Component`: an instance of its schema, or the schema's keys
    as keywords); the base class's are :class:`LoggerConfig`, which has none."""

    schema = LoggerConfig  # each registered logger's: its own (the registry's decorator sets it)
    logs_to_wandb = False  # a capability: True for a logger whose figures can go to a W&B run of their own

    def bind(self, out_dir: Path, config: dict[str, Any], events: Path) -> None:
        """Where the run writes, its whole config, and its event log (before ``start``)."""

    def start(self, info: dict[str, Any]) -> None: ...

    def round_end(self, round: int, rounds: int, summary: dict[str, Any], table: list[dict[str, Any]]) -> None: ...

    def finish(self, table: list[dict[str, Any]], summary: dict[str, Any]) -> None: ...

    def optimized(self, records: list[dict[str, Any]]) -> None:
        """Prompt optimisation before the game: one record per player and role (event ``optimize``)."""

    def outage(self, info: dict[str, Any]) -> None:
        """A model stopped answering and its calls wait (``info["state"]``: down; waiting, as each
        probe goes out; up; gave_up), with its ``model``, seconds ``down_s`` and ``wait_s``."""

    def close(self, failed: bool = False) -> None: ...


# The logger group's registry (conf/logger/<name>.yaml extends /schema/logger/<name>); each logger
# registers in its own module of this package.
logger: Registry[type[RunLogger]] = Registry("logger", "skate.loggers")


@dataclass
class NoLoggerConfig(LoggerConfig):
    _target_: str = "skate.loggers.base.NullLogger"


@logger.register("none", NoLoggerConfig)
class NullLogger(RunLogger):
    """``logger=none``."""


def logs_to_wandb(settings: LoggerConfig) -> bool:
    """Whether the logger these settings build logs to W&B (its class's ``logs_to_wandb``, found
    from the settings' schema in the ``logger`` registry)."""
    return bool(logger.of(settings).component.logs_to_wandb)

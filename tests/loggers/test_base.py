"""The logger registry: each logger found from its settings' schema, and which of them log to W&B."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from skate.errors import ConfigError
from skate.loggers.base import LoggerConfig, NoLoggerConfig, logger, logs_to_wandb
from skate.loggers.console import ConsoleLoggerConfig
from skate.loggers.wandb_logger import WandbLoggerConfig


def test_each_logger_registers_from_its_own_module_and_only_wandb_logs_to_wandb():
    assert logger.names() == ["console", "none", "wandb"]
    assert [logs_to_wandb(s) for s in (WandbLoggerConfig(), ConsoleLoggerConfig(), NoLoggerConfig())] == [
        True,
        False,
        False,
    ]
    for entry in logger:  # the schema's _target_ is the class's own module (what a new run records)
        assert entry.schema._target_ == entry.target == f"{entry.component.__module__}.{entry.component.__qualname__}"


def test_settings_of_no_registered_logger_are_refused_naming_the_loggers():
    @dataclass
    class Mine(LoggerConfig):
        _target_: str = "mine.Logger"

    with pytest.raises(ConfigError, match="Mine belong to no registered logger .*console, none, wandb"):
        logs_to_wandb(Mine())

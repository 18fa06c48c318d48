"""A Hydra callback that writes the sweep's comparison page when a sweep ends."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from skate import report
from skate.loggers.base import LoggerConfig
from skate.loggers.wandb_logger import log_sweep

log = logging.getLogger("skate")


class SweepReport(Callback):
    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        if not config.get("report", True):
            return
        try:
            page = report.build_sweep_report(Path(config.hydra.sweep.dir))
            log.info("sweep report: %s", page)
        except (report.ReportError, OSError, ValueError) as exc:  # a report must never fail the sweep
            log.warning("no sweep report: %s", exc)
            return
        try:
            settings = OmegaConf.to_object(config.logger)
            if not isinstance(settings, LoggerConfig):
                raise TypeError(f"the sweep's logger settings are a {type(settings).__name__}")
            log_sweep(Path(config.hydra.sweep.dir), settings)
        except Exception as exc:  # noqa: BLE001 - W&B must never fail the sweep either
            log.warning("sweep figures not sent to W&B: %s", exc)

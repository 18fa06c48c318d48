"""Hydra's callbacks for ``skate``'s app (conf/config.yaml, ``hydra.callbacks``): the command line's,
as Hydra is. A single run into a folder that holds one is refused before Hydra writes there
(:class:`OneRunPerFolder`); a sweep's comparison page is written when the sweep ends (:class:`SweepReport`)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

from skate import report
from skate.loggers.base import LoggerConfig
from skate.loggers.wandb_logger import log_sweep
from skate.runner import held_refusal

log = logging.getLogger("skate")


class OneRunPerFolder(Callback):
    """Hydra callback (conf/config.yaml): a single run (not a sweep) into a folder that already
    holds one is refused before Hydra writes its ``.hydra/`` files and its log there, so that the
    folder is left exactly as it was (:func:`run_game` refuses it too, for every other caller)."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        try:
            folder = Path(str(config.hydra.run.dir)).absolute()
        except Exception:  # noqa: BLE001  (resolved only inside the job: run_game checks it there)
            return
        refusal = held_refusal(folder)
        if refusal:
            print(f"skate: {refusal}", file=sys.stderr)
            sys.exit(2)


class SweepReport(Callback):
    """One page comparing the jobs when a sweep ends (``report=false``: none), and its figures to W&B."""

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

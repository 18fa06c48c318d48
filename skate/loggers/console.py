"""``logger=console``: a rich progress bar when the output is a terminal, plain log lines
otherwise (CI, pipes, log files)."""

from __future__ import annotations

import logging
import os
import sys
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skate.loggers.base import LoggerConfig, RunLogger, logger

if TYPE_CHECKING:  # pragma: no cover
    from rich.progress import Progress


@dataclass
class ConsoleLoggerConfig(LoggerConfig):
    _target_: str = "skate.loggers.console.ConsoleLogger"
    every: int = 10  # plain progress: a line every this many rounds
    progress: str = "auto"  # auto (a rich bar on a terminal, plain lines otherwise), rich, plain


log = logging.getLogger("skate")


@logger.register("console", ConsoleLoggerConfig)
class ConsoleLogger(RunLogger):
    """Progress: a rich bar on a terminal, plain lines (every ``every`` rounds) otherwise."""

    settings: ConsoleLoggerConfig

    def __init__(self, settings: ConsoleLoggerConfig | None = None, /, **values: Any) -> None:
        super().__init__(settings, **values)
        progress = self.settings.progress
        if progress not in ("auto", "rich", "plain"):
            raise ValueError(f"logger.progress={progress!r}: choose auto, rich or plain")
        self.every = max(1, self.settings.every)
        self.rich = progress == "rich" or (progress == "auto" and sys.stderr.isatty() and not os.environ.get("CI"))
        self._bar: Progress | None = None
        self._status = ""  # the bar's status after the last round
        self._waiting: dict[str, str] = {}  # model -> what the progress says of its outage
        self._lock = threading.Lock()

    def start(self, info: dict[str, Any]) -> None:
        log.info(
            "game %s: %d players, %d rounds, rating=%s, aug=%s, sandbox=%s, seed=%s",
            info["game"],
            len(info["players"]),
            info["rounds"],
            info["rating"],
            info["aug"],
            info["sandbox"],
            info["seed"],
        )
        if self.rich:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._bar = bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[status]}"),
                TimeRemainingColumn(),
                transient=True,
            )
            bar.start()
            self._task = bar.add_task(f"{info['game']} rounds", total=info["rounds"], status="")

    def round_end(self, round: int, rounds: int, summary: dict[str, Any], table: list[dict[str, Any]]) -> None:
        rated = [r for r in table if not r.get("no_data")]  # a player with no rated game yet leads nothing
        leader = f"leader {rated[0]['player']}" if rated else "no one rated yet"
        if self._bar is not None:
            self._status = f"{summary['tasks']} tasks, {summary['samples']} samples, {leader}"
            self._bar.update(self._task, completed=round, status=self._status)
            return
        if round % self.every and round != rounds:
            return
        log.info(
            "round %d/%d: %d valid tasks so far, %d attempts, %d answer samples; %s",
            round,
            rounds,
            summary["tasks"],
            summary["attempts"],
            summary["samples"],
            leader,
        )

    def optimized(self, records: list[dict[str, Any]]) -> None:
        for r in records:
            what = "reused" if r.get("reused") else f"{r.get('calls', 0)} calls"
            log.info(
                "optimised %s's %s with %s: metric %s -> %s on %d held-out items (%s)%s",
                r["player"],
                r["role"],
                r["optimizer"],
                r.get("metric_before"),
                r.get("metric_after"),
                r.get("val", 0),
                what,
                f"; stopped: {r['stopped']}" if r.get("stopped") else "",
            )

    def outage(self, info: dict[str, Any]) -> None:
        """While a model is down the bar's status (or, in plain lines, a line at each probe) says
        "waiting for <model> (down 40 s, gives up at 600 s)"; once it answers, the status is back."""
        model = info["model"]
        with self._lock:  # told from the threads whose calls wait
            if info["state"] in ("up", "gave_up"):
                self._waiting.pop(model, None)
            else:
                self._waiting[model] = waiting_line(info)
                if self._bar is None and info["state"] == "waiting":
                    log.info("%s", self._waiting[model])
            if self._bar is not None:
                self._bar.update(self._task, status="; ".join(self._waiting.values()) or self._status)

    def close(self, failed: bool = False) -> None:
        with self._lock:
            if self._bar is not None:
                self._bar.stop()
                self._bar = None


def waiting_line(info: dict[str, Any]) -> str:
    """``waiting for <model> (down 40 s, gives up at 600 s)``."""

    def secs(s: float) -> str:
        return f"{s:.0f} s" if s >= 10 else f"{s:.1f} s"

    return f"waiting for {info['model']} (down {secs(info['down_s'])}, gives up at {secs(info['wait_s'])})"

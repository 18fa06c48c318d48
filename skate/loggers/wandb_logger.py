"""``logger=wandb`` (the default): the console progress, plus one W&B run per game, offline unless
configured otherwise, written inside the run folder and grouped by sweep.

It follows the event log (the run's source of truth) rather than the engine: each round it logs
the new rating updates (μ/σ of both players at each update), and at the end the ratings table
(with each ``unbounded`` note), every task with each player's p(correct), the counts, the model
cost, the report's plots and its question-cluster table (SKATE Fig. 8, ``question_clusters``). The
run is finished in the runner's ``finally``, so a crashed game still leaves a closed run (with a
non-zero exit code). :func:`log_figures` and :func:`log_sweep` put an analysis's figures in a W&B
run of their own.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

from skate.loggers.base import LoggerConfig, logger, logs_to_wandb
from skate.loggers.console import ConsoleLogger, ConsoleLoggerConfig
from skate.runlog import events as ev

if TYPE_CHECKING:  # pragma: no cover
    import wandb

Mode = Literal["offline", "online", "disabled"]


def wandb_mode(mode: str) -> Mode:
    """``logger.mode`` as W&B takes it, or ValueError naming the choices."""
    if mode not in get_args(Mode):
        raise ValueError(f"logger.mode={mode!r}: choose offline, online or disabled")
    return cast(Mode, mode)


@dataclass
class WandbLoggerConfig(ConsoleLoggerConfig):
    _target_: str = "skate.loggers.wandb_logger.WandbLogger"
    project: str = "skate"
    entity: str = ""
    mode: str = "offline"  # offline (files in the run folder; `wandb sync` later), online, disabled
    group: str = ""  # "" = the sweep, when the game is a sweep job
    name: str = ""  # "" = the job's overrides in a sweep, else W&B's own name
    tags: list[str] = field(default_factory=list)
    # Rating curves: at most this many points per round (each with every player's μ/σ); a round
    # with fewer rating updates logs each one. 50 players give 61,250 updates a round.
    updates_per_round: int = 1000


_CHART = (("mu_", "mu/"), ("sigma_", "sigma/"), ("elo_", "elo/"))  # a rating line's keys, the chart's


@logger.register("wandb", WandbLoggerConfig)
class WandbLogger(ConsoleLogger):
    """W&B, offline by default, one run per game inside the run folder, grouped by sweep."""

    logs_to_wandb = True

    settings: WandbLoggerConfig

    def __init__(self, settings: WandbLoggerConfig | None = None, /, **values: Any) -> None:
        super().__init__(settings, **values)
        s = self.settings
        checked = wandb_mode(s.mode)
        if s.updates_per_round < 1:
            raise ValueError(f"logger.updates_per_round={s.updates_per_round}: give at least 1")
        self.project, self.entity, self.mode = s.project, s.entity or None, checked
        self.group, self.name, self.tags = s.group, s.name, list(s.tags or [])
        self.updates_per_round = s.updates_per_round
        self.run: wandb.Run | None = None
        self._out: Path | None = None
        self._config: dict[str, Any] = {}
        self._events: Path | None = None
        self._offset = 0
        # What the final tables need, gathered as the log is read (never the events themselves:
        # a long game logs millions of rating updates).
        self._players: list[str] = []
        self._tasks: list[tuple[str, int, str, str]] = []  # task_id, round, setter, answer
        self._p: dict[str, dict[str, float | None]] = {}  # task_id -> player -> p(correct)
        self._now: dict[str, float] = {}  # each player's latest mu/sigma/elo, keyed like the chart

    def bind(self, out_dir: Path, config: dict[str, Any], events: Path) -> None:
        self._out, self._config, self._events = Path(out_dir), config, events

    def start(self, info: dict[str, Any]) -> None:
        super().start(info)
        os.environ.setdefault("WANDB_SILENT", "true")
        if self.mode == "offline":
            os.environ["WANDB_MODE"] = "offline"
        import wandb

        labels = info.get("sweep") or {}  # a sweep's job: filed under the sweep (skate.cli.play)
        group, name = labels.get("group"), labels.get("name")
        folder = self._out or Path.cwd()
        self.run = run = wandb.init(
            project=self.project,
            entity=self.entity,
            mode=self.mode,
            dir=str(folder),
            group=self.group or group,
            name=self.name or name,
            tags=self.tags,
            config=self._config,
            job_type="game",
            reinit="finish_previous",
        )
        run.define_metric("update")
        for key in ("mu/*", "sigma/*", "elo/*"):
            run.define_metric(key, step_metric="update")
        run.define_metric("round")
        for key in ("tasks", "attempts", "samples", "leader_mu"):
            run.define_metric(key, step_metric="round")

    def _read_new(self) -> list[tuple[int, dict[str, float]]]:
        """Read the lines written since the last call (whole lines only: a line being written
        waits), keep what the final tables need, and return the new rating updates as (update,
        the chart values it set)."""
        updates: list[tuple[int, dict[str, float]]] = []
        if self._events is None or not self._events.exists():
            return updates
        with open(self._events, encoding="utf-8") as f:
            f.seek(self._offset)
            while (line := f.readline()).endswith("\n"):
                self._offset = f.tell()
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                kind = record.get("event") if isinstance(record, dict) else None
                if kind == ev.TaskRated.event:  # the ratings after a task: a point per task
                    state = record.get("state") or {}
                    values = {
                        f"{name}/{player}": value
                        for name, per in state.items()
                        if isinstance(per, dict)
                        for player, value in per.items()
                    }
                    if values:
                        updates.append((int(record.get("update", 0)), values))
                elif kind == ev.RatingUpdated.event:
                    values = {
                        prefix + str(record[side]): record[key + side]
                        for side in ("a", "b")
                        for key, prefix in _CHART
                        if key + side in record
                    }
                    updates.append((int(record.get("update", 0)), values))
                elif kind == ev.TaskSet.event:
                    self._tasks.append(
                        (
                            record.get("task_id", ""),
                            record.get("round", 0),
                            record.get("setter", ""),
                            record.get("answer", ""),
                        )
                    )
                elif kind == ev.Estimated.event:
                    self._p.setdefault(record.get("task_id", ""), {})[record.get("player", "")] = record.get("p")
                elif kind == ev.RunStarted.event and not self._players:
                    self._players = [p["name"] for p in record.get("players", [])]
        return updates

    def _log_updates(self, run: wandb.Run, updates: list[tuple[int, dict[str, float]]]) -> None:
        """Each update as a point of the rating curves, or, when a round has more than
        ``updates_per_round``, evenly spaced points (the round's last among them) each carrying
        every player's latest values."""
        stride = -(-len(updates) // self.updates_per_round)
        for i, (number, values) in enumerate(updates):
            self._now.update(values)
            if stride == 1:
                run.log({"update": number, **values})
            elif (len(updates) - 1 - i) % stride == 0:
                run.log({"update": number, **self._now})

    def round_end(self, round: int, rounds: int, summary: dict[str, Any], table: list[dict[str, Any]]) -> None:
        super().round_end(round, rounds, summary, table)
        if self.run is None:
            return
        self._log_updates(self.run, self._read_new())
        self.run.log(
            {
                "round": round,
                "tasks": summary["tasks"],
                "attempts": summary["attempts"],
                "samples": summary["samples"],
                "leader_mu": table[0].get("score") if table else None,
            }
        )

    def finish(self, table: list[dict[str, Any]], summary: dict[str, Any]) -> None:
        if self.run is None:
            return
        import wandb

        self._log_updates(self.run, self._read_new())
        self.run.log({"ratings": ratings_table(wandb, table), "tasks": self._tasks_table(wandb)})
        for key, value in summary.items():
            if key != "usage" and not isinstance(value, dict):
                self.run.summary[key] = value
        if "usage" in summary:
            total = summary["usage"]["total"]
            self.run.summary.update({f"cost/{k}": v for k, v in total.items()})
            per = summary["usage"]["players"]
            self.run.log(
                {
                    "cost_by_player": wandb.Table(
                        columns=["player", *total], data=[[p, *(u[k] for k in total)] for p, u in per.items()]
                    )
                }
            )
        for r in table:
            self.run.summary[f"final/{r['player']}"] = r.get("score")
        plots = sorted((self._out / "report").glob("*.png")) if self._out else []
        if plots:  # the report's figures (written just before, when report=true)
            self.run.log({f"plots/{p.stem}": wandb.Image(str(p)) for p in plots})
        clusters = self._out / "report" / "question_clusters.csv" if self._out else None
        if clusters is not None and clusters.exists():  # the report's Fig. 8 table (skate/report/clusters.py)
            import pandas as pd

            self.run.log({"question_clusters": wandb.Table(dataframe=pd.read_csv(clusters))})

    def optimized(self, records: list[dict[str, Any]]) -> None:
        super().optimized(records)
        if self.run is None or not records:
            return
        import wandb

        cols = [
            "player",
            "model",
            "role",
            "optimizer",
            "reused",
            "train",
            "val",
            "metric_before",
            "metric_after",
            "demos",
            "calls",
            "prompt_tokens",
            "completion_tokens",
            "cost_usd",
            "elapsed_s",
            "stopped",
        ]
        self.run.log({"optimization": wandb.Table(columns=[*cols], data=[[r.get(c) for c in cols] for r in records])})
        for r in records:
            for key in ("metric_before", "metric_after", "calls"):
                self.run.summary[f"optimize/{r['player']}/{r['role']}/{key}"] = r.get(key)

    def _tasks_table(self, wandb):
        players = self._players
        return wandb.Table(
            columns=["task_id", "round", "setter", "answer", *players],
            data=[[t, r, s, a, *(self._p.get(t, {}).get(n) for n in players)] for t, r, s, a in self._tasks],
        )

    def close(self, failed: bool = False) -> None:
        super().close(failed)
        if self.run is not None:
            self.run.finish(exit_code=1 if failed else 0)
            self.run = None


# The logger group's registry (conf/logger/<name>.yaml extends /schema/logger/<name>).


def ratings_table(wandb: Any, table: list[dict[str, Any]]) -> Any:
    """The final ratings as a ``wandb.Table``: ``player``, ``rank``, the other fields in name
    order, and last ``unbounded`` when any row carries that note (a player with no win or no
    loss, held by the prior alone), empty in the rows without one."""
    cols = sorted({k for r in table for k in r}, key=lambda k: (k != "player", k != "rank", k == "unbounded", k))
    return wandb.Table(
        columns=cols, data=[[r.get(c) if c != "unbounded" else (r.get(c) or "") for c in cols] for r in table]
    )


def log_figures(
    folder: Path,
    settings: LoggerConfig,
    *,
    prefix: str,
    name: str,
    job_type: str,
    group: str,
    figures: list[Path],
    tables: dict[str, Path] | None = None,
) -> bool:
    """Put figures (PNG) and CSV tables in one W&B run of their own inside ``folder``, when
    ``settings`` (a logger's) are W&B's and not disabled; return whether it did."""
    if not logs_to_wandb(settings):
        return False
    w = cast(WandbLoggerConfig, settings)  # the wandb logger's, as logs_to_wandb found
    if w.mode == "disabled":
        return False
    tables = {k: v for k, v in (tables or {}).items() if v.exists()}
    if not figures and not tables:
        return False
    os.environ.setdefault("WANDB_SILENT", "true")
    if w.mode == "offline":
        os.environ["WANDB_MODE"] = "offline"
    import pandas as pd
    import wandb

    run = wandb.init(
        project=w.project,
        entity=w.entity or None,
        mode=wandb_mode(w.mode),
        dir=str(folder),
        group=w.group or group,
        name=name,
        job_type=job_type,
        tags=list(w.tags),
        reinit="finish_previous",
    )
    try:
        record: dict[str, Any] = {f"{prefix}/{p.stem}": wandb.Image(str(p)) for p in figures}
        record.update({f"{prefix}/{k}": wandb.Table(dataframe=pd.read_csv(v)) for k, v in tables.items()})
        run.log(record)
    finally:
        run.finish()
    return True


def log_sweep(sweep_dir: Path, settings: LoggerConfig) -> None:
    """A finished sweep's figures, comparison table and Fig. 9's curves (``build_sweep_report``'s
    ``report/``) in one W&B run of ``job_type="sweep"``, in the jobs' group."""
    out = Path(sweep_dir) / "report"
    log_figures(
        Path(sweep_dir),
        settings,
        prefix="sweep",
        name="sweep report",
        job_type="sweep",
        group=str(sweep_dir).replace("/", "_").strip("_"),
        figures=sorted(out.glob("*.png")),
        tables={"jobs": out / "jobs.csv", "cumulative_p": out / "cumulative_p.csv"},
    )

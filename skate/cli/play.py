"""``python -m skate``: compose the Hydra config, play one game, print the ratings table.

``python -m skate resume=RUN_DIR [game.rounds=N] [llm.budget_usd=X] ...`` continues a run that
did not finish (stopped by a signal or its budget, crashed, killed) from its event log, with the
config it was started with (see :func:`resume`). A new run into a folder that already holds one
is refused (exit status 2). A sweep (``-m``) run again with the same ``hydra.sweep.dir`` keeps each
job's finished run, resumes each unfinished one and plays the jobs not yet begun
(:func:`skate.runner.run_sweep_job`).

SIGINT (Ctrl-C) and SIGTERM stop a game cleanly: in-flight work is abandoned, the run folder gets a
``run_stopped`` event, ``ratings.json`` and the report for everything rated so far, one line says
where it stopped and how to resume, and the exit status is 130 (SIGINT) or 143 (SIGTERM). A
second signal exits at once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import os
import signal
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.errors import ConfigCompositionException, MissingConfigException, OverrideParseException
from hydra.types import RunMode
from omegaconf import DictConfig
from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException

from skate.runlog import events as ev
from skate.settings.config import build_settings, register_configs, unknown_key
from skate.paths import CONF_DIR
from skate.errors import ConfigError
from skate.runlog.events import iter_records
from skate.optimize.config import format_results
from skate.settings.recorded import run_settings
from skate.engine import GameResult
from skate.runlog.records import Interrupted
from skate.runner import RunExists, run_game, run_sweep_job
from skate.runlog.files import format_table
from skate.sandbox import SandboxUnavailable
from skate.runlog.files import LogWriteError

register_configs()

# What may change when a run is resumed: nothing that changes the game already played.
RESUMABLE = ("game.rounds", "llm.budget_usd", "llm.max_retries", "llm.backoff_s", "llm.max_backoff_s",
             "llm.max_retry_after_s", "llm.concurrency", "llm.endpoint_concurrency", "llm.cache_dir",
             "llm.preflight", "llm.timeout_s", "logger", "report", "print_table", "sandbox.workers")


class _Signals:
    """The first SIGINT/SIGTERM raises :class:`~skate.runlog.records.Interrupted` in the main thread (the
    engine stops cleanly); a second one ends the process at once."""

    received: int | None = None

    @classmethod
    def handler(cls, signum: int, frame: Any) -> None:
        if cls.received is not None:
            os._exit(128 + signum)
        cls.received = signum
        raise Interrupted(signal.Signals(signum).name)


@contextlib.contextmanager
def _stoppable() -> Iterator[None]:
    old = {s: signal.signal(s, _Signals.handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _report(result: GameResult, out_dir: Path, print_table: bool) -> None:
    s = result.summary
    if print_table:
        print(format_table(result.table, s.tasks_by_setter))
        reads = f"{s.read_estimates} answers read from the models' probabilities, " if s.read_estimates else ""
        print(f"\n{s.tasks} valid tasks from {s.attempts} attempts, {reads}{s.samples} answer samples, "
              f"{s.updates} rating updates in {s.elapsed_s:.1f}s")
        if s.sandbox_executions:
            rate = s.sandbox_executions / max(s.elapsed_s, 1e-9)
            print(f"sandbox executions: {s.sandbox_executions} ({rate:.1f} per second)")
        if s.usage is not None:
            u = s.usage["total"]
            print(f"model calls: {u['calls']} for {u['samples']} samples ({u['cached']} from the cache, "
                  f"{u['void']} void, {u['retries']} retries); tokens {u['prompt_tokens']} in"
                  + (f" ({u['cached_prompt_tokens']} from the server's prompt cache)" if u.get("cached_prompt_tokens") else "")
                  + f", {u['completion_tokens']} out; cost ${u['cost_usd']:.4f}")
        if s.optimization:
            print("\nprompt optimisation before the game:")
            print(format_results([ev.Optimized(**dict(r)) for r in s.optimization]))
        if s.prompt_optimization:
            print("\nrating change from optimised prompts (optimised - default, 95% interval):")
            for r in s.prompt_optimization:
                print(f"  {r['model']:<20} {r['gain']:+8.2f}  [{r['lo']:+.2f}, {r['hi']:+.2f}]  "
                      f"(optimised {r['optimized']:.2f}, default {r['default']:.2f})")
        print(f"results: {out_dir}")
    if s.stopped:
        extra = " llm.budget_usd=<more>" if "Budget" in s.stopped else ""
        print(f"skate: {s.stopped.removeprefix('Interrupted: ')} in round {s.stopped_round or 0}; {s.tasks} tasks rated. "
              f"Resume with: python -m skate resume={out_dir}{extra}", file=sys.stderr)


def _finish(result: Any) -> None:
    """Exit 130/143 after a signal, without waiting for abandoned work (model calls, jails)."""
    if _Signals.received is not None:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(128 + _Signals.received)


def describe_config_error(exc: BaseException) -> str:
    """One line for a config Hydra could not compose: the key or option, and what to write
    instead (Hydra's own report runs to several lines and suggests ``+key=`` for a misspelt key,
    which a typed config refuses as well)."""
    if isinstance(exc, MissingConfigException) and exc.missing_cfg_file and "/" in exc.missing_cfg_file:
        group, _, name = exc.missing_cfg_file.rpartition("/")
        options = sorted(exc.options or [])
        # <option>_schema named the schema an option extends before the schemas left the groups
        near = [name.removesuffix("_schema")] if name.removesuffix("_schema") in options else \
            difflib.get_close_matches(name, options, n=1)
        hint = f"did you mean {group}={near[0]}? " if near else ""
        return f"{group}={name} is not an option of {group}: {hint}choose one of {', '.join(options)}"
    if isinstance(exc, OverrideParseException):
        return f"cannot read an override: {str(exc).splitlines()[0]} (write key=value; quote values with spaces)"
    cause = exc.__cause__ if isinstance(exc, ConfigCompositionException) else exc
    if isinstance(cause, (ConfigKeyError, ConfigAttributeError)) and getattr(cause, "full_key", None) \
            and dataclasses.is_dataclass(cause.object_type):
        return unknown_key(cause.full_key, cause.object_type)
    if isinstance(cause, OmegaConfBaseException) and getattr(cause, "full_key", None):
        return f"{cause.full_key}: {str(cause).splitlines()[0]}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


_COMPOSING_ERRORS = (ConfigCompositionException, MissingConfigException, OverrideParseException,
                    OmegaConfBaseException)


@contextlib.contextmanager
def _one_line_config_errors() -> Iterator[None]:
    """Around the Hydra app: a config that cannot be composed is reported in one ``skate: config
    error: ...`` line with exit status 2, as skate's own config checks are. Hydra prints its own
    report of an error unless ``HYDRA_FULL_ERROR=1`` (its documented switch), which lets the error
    through to here; anything raised once a game has started, or when the user set that switch,
    goes on with its traceback (exit status 1, as Hydra's report)."""
    full = os.environ.get("HYDRA_FULL_ERROR")
    os.environ["HYDRA_FULL_ERROR"] = "1"
    try:
        yield
    except _COMPOSING_ERRORS as exc:
        if full == "1" or _Started.game:
            raise
        print(f"skate: config error: {describe_config_error(exc)}", file=sys.stderr)
        sys.exit(2)
    except (ConfigError, SandboxUnavailable):
        # A sweep's job refused (it printed its one line; the other jobs went on): the sweep
        # fails with status 2, without a traceback of the job.
        if full == "1":
            raise
        sys.exit(2)
    finally:
        if full is None:
            os.environ.pop("HYDRA_FULL_ERROR", None)
        else:
            os.environ["HYDRA_FULL_ERROR"] = full


class _Started:
    game = False  # set once Hydra has composed the config and called the app


@hydra.main(version_base="1.3", config_path=CONF_DIR, config_name="config")
def _app(cfg: DictConfig) -> None:
    _Started.game = True
    hc = HydraConfig.get()
    out_dir = Path(hc.runtime.output_dir)
    sweep = hc.mode == RunMode.MULTIRUN
    try:
        with _stoppable():
            made_from = {"choices": {k: str(v) for k, v in hc.runtime.choices.items()
                                     if v is not None and not k.startswith("hydra")},
                         "overrides": list(hc.overrides.task)}
            # A sweep run again into its folder keeps its finished jobs and resumes the others.
            settings = build_settings(cfg)  # settled, typed and checked: what the game is played from
            result = (run_sweep_job(settings, out_dir, made_from) if sweep
                      else run_game(settings, out_dir, made_from=made_from))
    except LogWriteError as exc:
        print(f"skate: {exc}. What was written is kept: free space (or fix the folder) and resume with: "
              f"python -m skate resume={out_dir}", file=sys.stderr)
        sys.exit(2)
    except (ConfigError, SandboxUnavailable) as exc:
        what = "" if isinstance(exc, RunExists) else \
            "config error: " if isinstance(exc, ConfigError) else "no usable sandbox: "
        print(f"skate: {what}{exc}", file=sys.stderr)
        if sweep:
            # In a sweep, exiting would take the launcher (and the other jobs) down with it:
            # fail this job only; the sweep reports it once the others have finished.
            raise
        sys.exit(2)
    if result is None:  # a finished job of a sweep run again: kept as it was
        return
    _report(result, out_dir, cfg.print_table)
    _finish(result)


def resume(run_dir: str, overrides: list[str]) -> int:
    """Continue the run in ``run_dir`` with its own config plus ``overrides`` (only the keys in
    :data:`RESUMABLE`); return the exit status."""
    folder = Path(run_dir).expanduser()
    try:
        records = list(iter_records(folder)) if (folder / "events.jsonl").exists() else []
    except OSError as exc:
        print(f"skate: cannot read {folder}: {exc}", file=sys.stderr)
        return 2
    if not records or records[0].get("event") != "run_start" or "config" not in records[0]:
        print(f"skate: {folder} holds no run to resume (no events.jsonl starting with run_start)", file=sys.stderr)
        return 2
    kinds = [r.get("event") for r in records]
    if "run_end" in kinds and not {"run_stopped", "run_error"} & set(kinds) and not overrides:
        print(f"skate: the run in {folder} finished; nothing to resume (to play more rounds, add game.rounds=N)",
              file=sys.stderr)
        return 0
    for item in overrides:
        key, sep, value = item.partition("=")
        key = key.lstrip("+")
        if not sep or not any(key == k or key.startswith(k + ".") for k in RESUMABLE):
            print(f"skate: cannot change {key!r} when resuming: the resumed game must be the one already played "
                  f"(you may change: {', '.join(RESUMABLE)})", file=sys.stderr)
            return 2
    try:
        settings = run_settings(records[0], overrides)
        with _stoppable():
            result = run_game(settings, folder, resume=True)
    except LogWriteError as exc:
        print(f"skate: {exc}. What was written is kept: free space (or fix the folder) and resume again",
              file=sys.stderr)
        return 2
    except (ConfigError, SandboxUnavailable) as exc:
        print(f"skate: {'config error' if isinstance(exc, ConfigError) else 'no usable sandbox'}: {exc}",
              file=sys.stderr)
        return 2
    _report(result, folder, settings.print_table)
    _finish(result)
    return 0


@contextlib.contextmanager
def hydra_argv(prog: str, argv: Sequence[str]) -> Iterator[None]:
    """A Hydra app reads its arguments from ``sys.argv``: the command's own, for the app's time
    only (the process's are put back however the app ends: a return, ``--help``'s exit, an error)."""
    saved = sys.argv
    sys.argv = [prog, *argv]
    try:
        yield
    finally:
        sys.argv = saved


def main(argv: Sequence[str] | None = None) -> int:
    """``skate play [overrides...]`` (``skate [overrides...]``): play a game, a sweep (``-m``), or
    resume a run (``resume=RUN_DIR``); the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    wanted = [a for a in args if a.startswith("resume=")]
    if wanted:
        return resume(wanted[-1].split("=", 1)[1], [a for a in args if not a.startswith("resume=")])
    with hydra_argv("skate", args), _one_line_config_errors():
        _app()
    return 0

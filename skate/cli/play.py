"""``skate play`` (``skate [overrides...]``): compose the Hydra config, play one game, print the
ratings table.

``skate resume=RUN_DIR [game.rounds=N] [llm.budget_usd=X] ...`` continues a run that did not
finish (stopped by a signal or its budget, crashed, killed) from its event log, with the config it
was started with (what may change: :func:`skate.runner.resume_settings`). A new run into a folder
that already holds one is refused (exit status 2). A sweep (``-m``) run again with the same
``hydra.sweep.dir`` keeps each job's finished run, resumes each unfinished one and plays the jobs
not yet begun (:func:`skate.runner.run_sweep_job`).

``skate play [overrides...] --estimate`` prints what the configured game will cost, per model
(calls, prompt, completion and thinking tokens, dollars), calling no model
(:mod:`skate.tools.estimate`), and plays nothing.

SIGINT (Ctrl-C) and SIGTERM stop a game cleanly (:func:`skate.runner.stop_on_signals`): the run
folder gets a ``run_stopped`` event, ``ratings.json`` and the report for everything rated so far,
one line says where it stopped and how to resume, and the exit status is 130 (SIGINT) or 143
(SIGTERM); 75 when a model did not answer within ``llm.outage_wait_s``. A second signal exits at once.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.errors import ConfigCompositionException, MissingConfigException, OverrideParseException
from hydra.types import RunMode
from omegaconf import DictConfig
from omegaconf.errors import OmegaConfBaseException

from skate.cli import hydra_argv
from skate.cli.compose import describe_config_error, edits_of, register_configs, settings_from
from skate.errors import ConfigError
from skate.llm.preflight import PreflightError
from skate.paths import CONF_DIR
from skate.report.console import OUTAGE_STATUS, print_summary
from skate.runlog.files import LogWriteError
from skate.runner import CannotResume, RunExists, Signals, resume_settings, run_game, run_sweep_job, stop_on_signals
from skate.sandbox import SandboxUnavailable
from skate.settings.options import build_settings
from skate.tools.estimate import estimate as estimate_cost
from skate.tools.estimate import format_estimate, keys_not_needed

register_configs()
_COMPOSING_ERRORS = (ConfigCompositionException, MissingConfigException, OverrideParseException, OmegaConfBaseException)


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


def _refused(exc: ConfigError | SandboxUnavailable) -> str:
    """The one line of a game skate will not play: a config error, no usable sandbox, or a run
    already in its folder (whose message says it all)."""
    what = "config error: " if isinstance(exc, ConfigError) else "no usable sandbox: "
    return f"skate: {'' if isinstance(exc, RunExists) else what}{exc}"


class _Started:
    game = False  # set once Hydra has composed the config and called the app


@hydra.main(version_base="1.3", config_path=CONF_DIR, config_name="config")
def _app(cfg: DictConfig) -> None:
    _Started.game = True
    hc = HydraConfig.get()
    out_dir = Path(hc.runtime.output_dir)
    sweep = hc.mode == RunMode.MULTIRUN
    try:
        with stop_on_signals():
            made_from = {
                "choices": {
                    k: str(v) for k, v in hc.runtime.choices.items() if v is not None and not k.startswith("hydra")
                },
                "overrides": list(hc.overrides.task),
            }
            if sweep:  # the labels a logger files the job under: the sweep, and the job's overrides
                job = f"job{hc.job.num}" + (f": {hc.job.override_dirname}" if hc.job.override_dirname else "")
                made_from["sweep"] = {"group": str(hc.sweep.dir).replace("/", "_").strip("_"), "name": job}
            # A sweep run again into its folder keeps its finished jobs and resumes the others.
            settings = build_settings(cfg)  # settled, typed and checked: what the game is played from
            result = (
                run_sweep_job(settings, out_dir, made_from)
                if sweep
                else run_game(settings, out_dir, made_from=made_from)
            )
    except LogWriteError as exc:
        print(
            f"skate: {exc}. What was written is kept: free space (or fix the folder) and resume with: "
            f"skate resume={out_dir}",
            file=sys.stderr,
        )
        sys.exit(2)
    except (ConfigError, SandboxUnavailable) as exc:
        print(_refused(exc), file=sys.stderr)
        if sweep:
            # In a sweep, exiting would take the launcher (and the other jobs) down with it:
            # fail this job only; the sweep reports it once the others have finished.
            raise
        sys.exit(2)
    if result is None:  # a finished job of a sweep run again: kept as it was
        return
    status = print_summary(result, out_dir, cfg.print_table)
    Signals.exit_if_received()
    if status and not sweep:  # a model did not answer within llm.outage_wait_s (75): resume later
        sys.exit(status)


def resume(run_dir: str, overrides: list[str]) -> int:
    """Continue the run in ``run_dir`` with its own config plus ``overrides`` (only the keys in
    :data:`skate.runner.RESUMABLE`); return the exit status."""
    folder = Path(run_dir).expanduser()
    try:
        settings = resume_settings(folder, edits_of(overrides))
        with stop_on_signals():
            result = run_game(settings, folder, resume=True)
    except CannotResume as exc:
        print(f"skate: {exc}", file=sys.stderr)
        return exc.status
    except LogWriteError as exc:
        print(
            f"skate: {exc}. What was written is kept: free space (or fix the folder) and resume again", file=sys.stderr
        )
        return 2
    except (ConfigError, SandboxUnavailable) as exc:
        if isinstance(exc, PreflightError) and exc.down:  # a model still down: the outage the run stopped for
            print(f"skate: {exc}; resume with: skate resume={folder} once it answers", file=sys.stderr)
            return OUTAGE_STATUS
        print(_refused(exc), file=sys.stderr)
        return 2
    status = print_summary(result, folder, settings.print_table)
    Signals.exit_if_received()
    return status


def estimate(overrides: list[str]) -> int:
    """``skate play [overrides...] --estimate``: the configured game's cost, printed; no model is
    called, nothing is played (exit status 2 for a config that cannot be played)."""
    if any(a in ("-m", "--multirun") or a.startswith(("resume=", "-")) for a in overrides):
        print(
            "skate: --estimate takes the overrides of one game (no -m, resume= or other flags): estimate each "
            "job of a sweep on its own",
            file=sys.stderr,
        )
        return 2
    try:
        with keys_not_needed():  # an estimate calls no model: it needs no key
            settings = settings_from(overrides)
        found = estimate_cost(settings)
    except _COMPOSING_ERRORS as exc:
        print(f"skate: config error: {describe_config_error(exc)}", file=sys.stderr)
        return 2
    except ConfigError as exc:
        print(_refused(exc), file=sys.stderr)
        return 2
    if not settings.players.llm:
        print(
            "estimate: no language-model player in this cohort: the game calls no model and costs nothing "
            "(players=... names models)"
        )
        return 0
    print(format_estimate(found))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``skate play [overrides...]`` (``skate [overrides...]``): play a game, a sweep (``-m``), or
    resume a run (``resume=RUN_DIR``), or estimate what a game costs (``--estimate``); the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "--estimate" in args:
        return estimate([a for a in args if a != "--estimate"])
    wanted = [a for a in args if a.startswith("resume=")]
    if wanted:
        return resume(wanted[-1].split("=", 1)[1], [a for a in args if not a.startswith("resume=")])
    with hydra_argv("skate", args), _one_line_config_errors():
        _app()
    return 0

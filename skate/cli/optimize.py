"""``skate optimize``: DSPy prompt optimisation of a cohort's
language-model players, with no game played: the same Hydra overrides as a game; the programs go
to the program store (``optimizer.store``), the results to the run folder (``optimize.jsonl``,
``usage.json``). The library is :mod:`skate.optimize.standalone`."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from skate.cli import hydra_argv
from skate.cli.compose import register_configs
from skate.errors import ConfigError
from skate.llm import ModelUnreachable
from skate.optimize.config import OptimizeError, format_results
from skate.optimize.standalone import run_optimize
from skate.paths import CONF_DIR
from skate.sandbox import SandboxUnavailable
from skate.settings.options import build_settings


def main(argv: Sequence[str] | None = None) -> int:
    """``skate optimize [overrides...]``: the exit status."""
    register_configs()

    @hydra.main(version_base="1.3", config_path=CONF_DIR, config_name="config")
    def app(cfg: DictConfig) -> None:
        out_dir = Path(HydraConfig.get().runtime.output_dir)
        try:
            records = run_optimize(build_settings(cfg), out_dir)
        except (ConfigError, OptimizeError, SandboxUnavailable) as exc:
            print(f"skate.optimize: {exc}", file=sys.stderr)
            sys.exit(2)
        except ModelUnreachable as exc:  # llm.outage_wait_s spent: 75, try again later
            print(
                f"skate.optimize: {exc}; run it again once it answers (the programs stored and the calls "
                "answered so far are reused)",
                file=sys.stderr,
            )
            sys.exit(75)
        print(format_results(records))
        total = json.loads((out_dir / "usage.json").read_text())["total"]
        print(
            f"\nmodel calls: {total['calls']} ({total['cached']} from the cache); tokens "
            f"{total['prompt_tokens']} in, {total['completion_tokens']} out; cost ${total['cost_usd']:.4f}"
        )
        print(f"programs: {Path(str(cfg.optimizer.store)).expanduser()}; results: {out_dir}")

    with hydra_argv("skate optimize", list(sys.argv[1:] if argv is None else argv)):
        app()
    return 0

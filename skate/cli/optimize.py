"""``skate optimize`` (``python -m skate.optimize``): DSPy prompt optimisation of a cohort's
language-model players, with no game played: the same Hydra overrides as a game; the programs go
to the program store (``optimizer.store``), the results to the run folder (``optimize.jsonl``,
``usage.json``). The library is :mod:`skate.optimize`."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from skate.runlog import events as ev
from skate.cli.play import hydra_argv
from skate.settings.build import build_table, llm_players, open_client, prepare_models, usage_summary
from skate.settings.config import build_settings, record_of, register_configs
from skate.paths import CONF_DIR
from skate.errors import ConfigError
from skate.optimize.config import OptimizeError, format_results
from skate.optimize.programs import optimize_players
from skate.sandbox import SandboxUnavailable
from skate.runlog.files import EventLog


def run_optimize(cfg: Any, out_dir: Path) -> list[ev.Optimized]:
    """``python -m skate.optimize``: build the run's language-model players and optimise them,
    writing ``optimize.jsonl`` and ``usage.json`` into ``out_dir``; no game is played. ``cfg``: a
    composed config, or settings already made."""
    s = build_settings(cfg) if isinstance(cfg, DictConfig) else cfg
    if not s.players.llm:
        raise ConfigError("this cohort has no language-model players (players.llm is empty): only their prompts "
                          "can be optimised (simulated players have none)")
    if s.optimizer.name == "none" and not s.optimizer.players:
        raise ConfigError("optimizer=none: choose an optimizer, e.g. optimizer=bootstrap_fewshot")
    out_dir.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as cleanup:
        # The game's table, the client and the model players; no model is checked before.
        table = build_table(s, cleanup)
        client = open_client(s, table, cleanup)
        players = llm_players(s.players.llm, table, client)
        prepare_models(s, table, client)
        log_ = EventLog(out_dir / "optimize.jsonl")
        cleanup.callback(log_.close)
        config = record_of(s)
        log_.write(ev.RunStarted(game=table.game.name, rounds=0, players=[p.describe() for p in players],
                                 config=config))
        records = optimize_players(table.game, players, client, s.optimizer, table.env, table.embedder,
                                   game_config=config["game"], write=log_.write)
        (out_dir / "usage.json").write_text(json.dumps(usage_summary(client), indent=2) + "\n")
        return records


def main(argv: Sequence[str] | None = None) -> int:
    """``skate optimize [overrides...]``: the exit status."""
    register_configs()

    @hydra.main(version_base="1.3", config_path=CONF_DIR, config_name="config")
    def app(cfg: Any) -> None:
        out_dir = Path(HydraConfig.get().runtime.output_dir)
        try:
            records = run_optimize(cfg, out_dir)
        except (ConfigError, OptimizeError, SandboxUnavailable) as exc:
            print(f"skate.optimize: {exc}", file=sys.stderr)
            sys.exit(2)
        print(format_results(records))
        total = json.loads((out_dir / "usage.json").read_text())["total"]
        print(f"\nmodel calls: {total['calls']} ({total['cached']} from the cache); tokens "
              f"{total['prompt_tokens']} in, {total['completion_tokens']} out; cost ${total['cost_usd']:.4f}")
        print(f"programs: {Path(str(cfg.optimizer.store)).expanduser()}; results: {out_dir}")

    with hydra_argv("skate optimize", list(sys.argv[1:] if argv is None else argv)):
        app()
    return 0

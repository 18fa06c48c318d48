"""Prompt optimisation with no game played (``skate optimize``; the command line is
:mod:`skate.cli.optimize`): the run's language-model players built as a game builds them and
optimised, the programs going to the program store (``optimizer.store``), the results to the run
folder (``optimize.jsonl``, ``usage.json``)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from skate.errors import ConfigError
from skate.optimize.programs import optimize_players
from skate.runlog import events as ev
from skate.runlog.files import EventLog
from skate.settings.build import build_table, llm_players, open_client, prepare_models, usage_summary
from skate.settings.config import SkateConfig, record_of


def run_optimize(settings: SkateConfig, out_dir: Path) -> list[ev.Optimized]:
    """Build the run's language-model players and optimise them, writing ``optimize.jsonl`` and
    ``usage.json`` into ``out_dir``; no game is played. ``settings``: built, settled and checked
    (:func:`skate.settings.options.build_settings` of a composed config)."""
    s = settings
    if not isinstance(s, SkateConfig):
        raise TypeError(
            f"run_optimize takes settings, not a {type(s).__name__}: make a composed config into "
            "settings with skate.settings.options.build_settings(cfg), or make them with skate.config(...)"
        )
    if not s.players.llm:
        raise ConfigError(
            "this cohort has no language-model players (players.llm is empty): only their prompts "
            "can be optimised (simulated players have none)"
        )
    if s.optimizer.name == "none" and not s.optimizer.players:
        raise ConfigError("optimizer=none: choose an optimizer, e.g. optimizer=bootstrap_fewshot")
    out_dir.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as cleanup:
        # The game's table, the client and the model players; no model is checked before.
        table = build_table(s, cleanup)
        client = open_client(s, table, cleanup)
        if client is None:  # pragma: no cover - players.llm is not empty (checked above)
            raise ConfigError("this cohort has no language-model players to optimise")
        players = llm_players(s.players.llm, table, client, None, s.players.setter_repair)
        prepare_models(s, table, client)
        log_ = EventLog(out_dir / "optimize.jsonl")
        cleanup.callback(log_.close)
        config = record_of(s)
        log_.write(
            ev.RunStarted(game=table.game.name, rounds=0, players=[p.describe() for p in players], config=config)
        )
        records = optimize_players(
            table.game,
            players,
            client,
            s.optimizer,
            table.env,
            table.embedder,
            game_config=config["game"],
            write=log_.write,
        )
        (out_dir / "usage.json").write_text(json.dumps(usage_summary(client), indent=2) + "\n")
        return records

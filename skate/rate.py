"""``python -m skate.rate RUN_DIR [overrides...]``: rate a finished run again, with no model call.

Reads the run's ``events.jsonl`` (every task's setter and p(correct) per player, and every
setter's forfeit of a round, in the order the game rated them), feeds the same stream to the
chosen backend, prints the table and saves it as ``RUN_DIR/ratings.<backend>.json``. With no ``rating=...`` override the run's own rating
settings are used, so the live table is reproduced; ``rating=bradley_terry``, ``rating=elo`` or
any ``rating.*`` override (``rating.outcome=absolute``, ``rating.outcome=setter_vs_solver``,
``rating.orderings=20``, ...) rates the same games another way, whichever rule the run was played
with (forfeits count only under setter_vs_solver).

Exit status: 0 done; 2 bad usage or configuration; 3 the folder holds no usable event log.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from hydra.errors import HydraException
from hydra.utils import instantiate

from skate.config import ConfigError, OutcomeRule, compose_config, validate_rating
from skate.events import Forfeit, RatedTask, RunLogError, read_run
from skate.records import BENCHMARK


def load_stream(run_dir: Path) -> tuple[list[str], list[RatedTask | Forfeit], dict[str, Any]]:
    """Players (roster order), what the ratings were updated from (each rated task with its
    setter and p(correct) by player, and each forfeit, in live order), the run's config."""
    run = read_run(run_dir, keep_updates=0)  # re-rating needs which tasks were rated, not the updates
    return run.players, run.rating_stream(), run.start.config


BACKEND_OPTIONS = {"TrueSkillRating": "trueskill", "BradleyTerryRating": "bradley_terry", "EloRating": "elo"}


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"


def run_rating_overrides(rating: dict[str, Any]) -> list[str]:
    """Hydra overrides that rebuild a run's rating settings."""
    option = BACKEND_OPTIONS.get(str(rating.get("_target_", "")).rsplit(".", 1)[-1])
    if option is None:
        return []
    return [f"rating={option}", *(f"rating.{k}={_fmt(v)}" for k, v in rating.items() if k != "_target_")]


def rate_run(run_dir: Path, overrides: list[str]) -> tuple[str, list[dict[str, Any]]]:
    """The table a backend gives for a stored run; returns (backend name, rows)."""
    players, stream, run_config = load_stream(run_dir)
    if not any(o.split("=")[0].lstrip("+~") == "rating" for o in overrides) and run_config.get("rating"):
        # No backend named: the run's own rating settings first, then the overrides.
        overrides = [*run_rating_overrides(run_config["rating"]), *overrides]
    cfg = compose_config(overrides)
    validate_rating(cfg.rating)
    if str(cfg.rating.get("outcome", "")) == OutcomeRule.setter_vs_solver and any(
            getattr(item, "setter", None) == BENCHMARK for item in stream):
        raise ConfigError("rating.outcome=setter_vs_solver rates setters against solvers, but this run's tasks "
                          f"were built by the game itself (setter {BENCHMARK}): use rating.outcome=relative "
                          "or absolute")
    backend = instantiate(cfg.rating, _convert_="all")
    backend.add_players(players)
    for item in stream:
        item.apply(backend)
    name = cfg.rating._target_.rsplit(".", 1)[-1]
    return name, [r.as_dict() for r in backend.table()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m skate.rate", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("overrides", nargs="*", help="e.g. rating=bradley_terry rating.bootstrap=200")
    ap.add_argument("--json", action="store_true", help="print the table as JSON")
    args = ap.parse_args(argv)
    try:
        name, rows = rate_run(args.run_dir, args.overrides)
    except RunLogError as exc:
        print(f"skate.rate: {exc}", file=sys.stderr)
        return 3
    except (HydraException, ConfigError, ValueError) as exc:
        cause = f": {str(exc.__cause__).splitlines()[0]}" if isinstance(exc, HydraException) and exc.__cause__ else ""
        print(f"skate.rate: config error: {exc}{cause}", file=sys.stderr)
        return 2
    out = args.run_dir / f"ratings.{name}.json"
    out.write_text(json.dumps(rows, indent=2) + "\n")
    if args.json:
        print(json.dumps(rows))
    else:
        from skate.runner import format_table

        print(format_table(rows))
        print(f"\n{name} over {args.run_dir}; saved {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

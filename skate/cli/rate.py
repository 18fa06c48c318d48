"""``python -m skate.rate RUN_DIR [overrides...]``: rate a finished run again, with no model call.

Reads the run's ``events.jsonl`` (every task's setter and p(correct) per player, and every
setter's forfeit of a round, in the order the game rated them), feeds the same stream to the
chosen backend, prints the table and saves it as ``RUN_DIR/ratings.<backend>.json``. With no ``rating=...`` override the run's own rating
settings are used, so the live table is reproduced; ``rating=bradley_terry``, ``rating=elo`` or
any ``rating.*`` override (``rating.outcome=absolute``, ``rating.outcome=setter_vs_solver``,
``rating.orderings=20``, ...) rates the same games another way, whichever rule the run was played
with (forfeits count only under setter_vs_solver).

A game can also be rated other ways as it ends: the config's top-level ``rerate`` list (see
:func:`rerate_configs`) makes the runner write ``ratings.<name>.json`` for each entry and put the
tables in ``run_end`` as ``rerated``.

Exit status: 0 done; 2 bad usage or configuration; 3 the folder holds no usable event log.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from hydra.errors import HydraException

from skate.errors import ConfigError
from skate.events import RunLogError, read_start
from skate.ratings.base import rating_class
from skate.ratings.config import draw_margin_of, sigma_star_factor, validate_rating
# The library this tool is a front for (importable from here, as before it moved).
from skate.ratings.rerate import (RERATE_NAME, load_stream, rate_stream, rating_options,  # noqa: F401
                                  rerate_configs, rerate_run)
from skate.recorded import apply_overrides, recorded_config
from skate.store import format_table


def rate_run(run_dir: Path, overrides: list[str]) -> tuple[str, list[dict[str, Any]]]:
    """The table a backend gives for a stored run; returns (backend name, rows)."""
    players, stream, _ = load_stream(run_dir)
    start = read_start(run_dir)
    # The run's own settings (its rating, unless a rating=<option> names another), then the overrides.
    cfg = recorded_config(start.config, start.get("config_version"))
    apply_overrides(cfg, overrides)
    if sigma_star_factor(cfg.rating.get("draw_margin")) is not None:  # tied to the run's estimator's sigma*
        cfg.rating.draw_margin = draw_margin_of(cfg.rating.draw_margin, cfg.estimator)
    validate_rating(cfg.rating)
    name = rating_class(cfg.rating).__name__
    return name, rate_stream(cfg.rating, players, stream)


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
        print(format_table(rows))
        print(f"\n{name} over {args.run_dir}; saved {out}")
    return 0

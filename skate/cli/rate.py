"""``skate rate RUN_DIR [overrides...]``: rate a finished run again, with no model call.

Reads the run's ``events.jsonl`` (every task's setter and p(correct) per player, and every
setter's forfeit of a round, in the order the game rated them), feeds the same stream to the
chosen backend, prints the table and saves it as ``RUN_DIR/ratings.<backend>.json``. With no ``rating=...`` override the run's own rating
settings are used, so the live table is reproduced; ``rating=bradley_terry``, ``rating=elo`` or
any ``rating.*`` override (``rating.outcome=absolute``, ``rating.outcome=setter_vs_solver``,
``rating.orderings=20``, ...) rates the same games another way, whichever rule the run was played
with (forfeits count only under setter_vs_solver).

The library is :func:`skate.settings.recorded.rate_run` (this module reads the command line only). A game
can also be rated other ways as it ends: the config's top-level ``rerate`` list (see
:func:`skate.settings.options.rerate_settings`) makes the runner write ``ratings.<name>.json`` for each entry and put the
tables in ``run_end`` as ``rerated``.

Exit status: 0 done; 2 bad usage or configuration; 3 the folder holds no usable event log.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from hydra.errors import HydraException

from skate.cli import parse_with_overrides
from skate.cli.compose import edits_of
from skate.errors import ConfigError
from skate.runlog.events import RunLogError
from skate.runlog.files import format_table
from skate.settings.recorded import rate_run


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="skate rate", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("overrides", nargs="*", help="e.g. rating=bradley_terry rating.bootstrap=200")
    ap.add_argument("--json", action="store_true", help="print the table as JSON")
    args = parse_with_overrides(ap, argv)
    try:
        name, rows = rate_run(args.run_dir, edits_of(args.overrides))
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

"""``python -m skate.embedders calibrate [options]``: see :mod:`skate.cli.calibrate`."""

from __future__ import annotations

import sys

from skate.cli.calibrate import main as calibrate


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] != "calibrate":
        print("usage: python -m skate.embedders calibrate [--embedders hashing minilm openai] [--frr 0.05] "
              "[--runs RUN_DIR ...] [--out DIR]  (calibrate --help for every option)", file=sys.stderr)
        return 2
    return calibrate(args[1:] if argv is not None else None)

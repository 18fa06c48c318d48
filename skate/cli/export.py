"""``skate export RUN_DIR|BENCH.jsonl --to jsonl|lm-eval|inspect --out DIR``."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from skate.export import FORMATS, UsageError, export


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        print(f"skate export: {message}; see --help", file=sys.stderr)
        sys.exit(2)


def main(argv: list[str] | None = None) -> int:
    ap = _Parser(
        prog="skate export",
        description="Export a finished game's tasks, or a built SCP benchmark, for other harnesses.",
    )
    ap.add_argument("source", help="a finished run folder (with events.jsonl) or a built SCP benchmark (.jsonl)")
    ap.add_argument("--to", required=True, help=f"the format: {', '.join(FORMATS)}")
    ap.add_argument("--out", required=True, help="a new folder to write (it must not exist)")
    args = ap.parse_args(argv)
    try:
        print(export(args.source, args.to, args.out))
    except UsageError as exc:
        print(f"skate export: {exc}", file=sys.stderr)
        return 2
    return 0

"""``python -m skate.scp``: the SCP game's command line, kept under its old name; it lives in its
game's package, :mod:`skate.games.scp.cli`."""

import sys

from skate.games.scp.cli import PROG, UsageError, build_benchmark, format_stability, main, stability

__all__ = ["PROG", "UsageError", "build_benchmark", "format_stability", "main", "stability"]

if __name__ == "__main__":
    sys.exit(main())

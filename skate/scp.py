"""``python -m skate.scp``: a thin alias of ``skate scp`` (:mod:`skate.games.scp.cli`, the SCP game's
command line)."""

import sys

from skate.games.scp.cli import main

if __name__ == "__main__":
    sys.exit(main())

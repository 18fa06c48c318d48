"""``python -m skate.rugged``: a thin alias of ``skate rugged`` (:mod:`skate.games.scp.rugged`, the SCP
game's Rugged Scores)."""

import sys

from skate.games.scp.rugged import main

if __name__ == "__main__":
    sys.exit(main())

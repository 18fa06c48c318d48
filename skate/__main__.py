"""``python -m skate``: ``skate`` (:mod:`skate.cli`): with Hydra overrides (or none), play a game;
``python -m skate <command> ...`` runs one of skate's tools (``--help`` lists them)."""

import sys

from skate.cli import main

if __name__ == "__main__":
    sys.exit(main())

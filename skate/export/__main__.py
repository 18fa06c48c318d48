"""``python -m skate.export``: a thin alias of ``skate export`` (:mod:`skate.cli.export`)."""

import sys

from skate.cli.export import main

if __name__ == "__main__":
    sys.exit(main())

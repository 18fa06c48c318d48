"""``python -m skate.report``: a thin alias of ``skate report`` (:mod:`skate.cli.report`)."""

import sys

from skate.cli.report import main

if __name__ == "__main__":
    sys.exit(main())

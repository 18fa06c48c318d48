"""``python -m skate.embedders calibrate``: a thin alias of ``skate calibrate`` (:mod:`skate.cli.calibrate`)."""

import sys

from skate.cli.embedders import main

if __name__ == "__main__":
    sys.exit(main())

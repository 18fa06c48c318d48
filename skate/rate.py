"""``python -m skate.rate``: a thin alias of ``skate rate`` (:mod:`skate.cli.rate`)."""

import sys

from skate.cli.rate import main

if __name__ == "__main__":
    sys.exit(main())

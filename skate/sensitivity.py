"""``python -m skate.sensitivity``: a thin alias of ``skate sensitivity`` (:mod:`skate.cli.sensitivity`)."""

import sys

from skate.cli.sensitivity import main

if __name__ == "__main__":
    sys.exit(main())

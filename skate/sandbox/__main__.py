"""``python -m skate.sandbox``: a thin alias of ``skate sandbox`` (:mod:`skate.cli.sandbox`)."""

import sys

from skate.cli.sandbox import main

if __name__ == "__main__":
    sys.exit(main())

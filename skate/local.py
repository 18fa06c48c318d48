"""``python -m skate.local``: a thin alias of ``skate local`` (:mod:`skate.cli.local`)."""

import sys

from skate.cli.local import main

if __name__ == "__main__":
    sys.exit(main())

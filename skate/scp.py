"""``python -m skate.scp``: the old name of ``skate scp`` (:mod:`skate.tools.scp.cli`); it runs the
same command and warns once that ``skate scp`` replaces it."""

import sys
import warnings

from skate.tools.scp.cli import main

if __name__ == "__main__":
    warnings.warn("python -m skate.scp is deprecated and will be removed: type skate scp instead",
                  DeprecationWarning, stacklevel=1)
    sys.exit(main())

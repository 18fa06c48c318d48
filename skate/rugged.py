"""``python -m skate.rugged``: the old name of ``skate rugged`` (:mod:`skate.tools.scp.rugged`); it runs
the same command and warns once that ``skate rugged`` replaces it."""

import sys
import warnings

from skate.tools.scp.rugged import main

if __name__ == "__main__":
    warnings.warn("python -m skate.rugged is deprecated and will be removed: type skate rugged instead",
                  DeprecationWarning, stacklevel=1)
    sys.exit(main())

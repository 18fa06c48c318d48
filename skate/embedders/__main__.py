"""``python -m skate.embedders calibrate``: the earlier form of ``skate calibrate``
(:mod:`skate.cli.calibrate`), for one more release."""

import sys

from skate.cli import alias

if __name__ == "__main__":
    if sys.argv[1:2] == ["calibrate"]:
        del sys.argv[1]
    alias("skate.embedders calibrate", "calibrate")

"""``python -m skate.report``: the earlier form of ``skate report`` (:mod:`skate.cli.report`), for one
more release."""

from skate.cli import alias

if __name__ == "__main__":
    alias("skate.report", "report")

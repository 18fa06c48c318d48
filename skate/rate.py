"""``python -m skate.rate``: the earlier form of ``skate rate`` (:mod:`skate.cli.rate`), for one
more release."""

from skate.cli import alias

if __name__ == "__main__":
    alias("skate.rate", "rate")

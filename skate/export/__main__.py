"""``python -m skate.export``: the earlier form of ``skate export`` (:mod:`skate.cli.export`), for one
more release."""

from skate.cli import alias

if __name__ == "__main__":
    alias("skate.export", "export")

"""``python -m skate.local``: the earlier form of ``skate local`` (:mod:`skate.cli.local`), for one
more release."""

from skate.cli import alias

if __name__ == "__main__":
    alias("skate.local", "local")

"""``python -m skate.sandbox``: the earlier form of ``skate sandbox`` (:mod:`skate.cli.sandbox`), for one
more release."""

from skate.cli import alias

if __name__ == "__main__":
    alias("skate.sandbox", "sandbox")

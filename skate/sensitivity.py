"""``python -m skate.sensitivity``: the earlier form of ``skate sensitivity`` (:mod:`skate.cli.sensitivity`;
the probe is :mod:`skate.tools.sensitivity`), for one more release."""

from skate.cli import alias

if __name__ == "__main__":
    alias("skate.sensitivity", "sensitivity")

"""``python -m skate.optimize``: the earlier form of ``skate optimize`` (:mod:`skate.cli.optimize`),
for one more release."""

from skate.cli import alias

if __name__ == "__main__":
    alias("skate.optimize", "optimize")

"""``python -m skate.rugged``: the earlier form of ``skate rugged`` (a command of the SCP game, in
:mod:`skate.tools.scp`), for one more release."""

from skate.cli import alias

if __name__ == "__main__":
    alias("skate.rugged", "rugged")

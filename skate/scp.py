"""``python -m skate.scp``: the earlier form of ``skate scp`` (a command of the SCP game, in
:mod:`skate.tools.scp`), for one more release."""

from skate.cli import alias

if __name__ == "__main__":
    alias("skate.scp", "scp")

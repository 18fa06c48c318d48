"""The ``game=pyjail`` config schema: every key and its default, the one place they live (the
option ``game=pyjail`` is this schema as registered; override any key on the command line, e.g.
``game.tries=3 game.limits.timeout_s=1``).

PyJail (ZeroSumEval's capture the flag): each round every setter writes a jail, Python source
defining ``def jail(user_input: str) -> str``. A fresh random flag exists only in the environment
variable FLAG of each sandboxed execution. The setter must capture its own flag in a fresh
context within ``tries`` inputs; then every player attacks every valid jail in sessions of up to
``tries`` tries, and p(correct) is the fraction of sessions that capture the flag. Jails run in
the configured sandbox; ``sandbox=subprocess`` is refused unless ``allow_unsafe_sandbox=true``
(trusted simulated players only).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from skate.games.base import GameConfig
from skate.sandbox.config import Limits


@dataclass
class JailLimits(Limits):
    """The sandbox's limits on one execution of a jail with one input, lower than its defaults
    (a jail runs once per try, thousands of times a game)."""

    timeout_s: float = 2.0
    cpu_s: int = 2
    memory_mb: int = 256
    max_output_bytes: int = 16384
    max_processes: int = 4


@dataclass
class PyJailConfig(GameConfig):
    _target_: str = "skate.games.pyjail.PyJailGame"
    name: str = "pyjail"
    rounds: int = 10  # a round takes about 4 s on 2 cores with the simulated cohort (warm jails; 20 rounds: 80-90 s)
    tries: int = 5  # k: inputs per session, for the setter's proof and for every attack session
    show_source: bool = True  # attackers see the jail's source (ZeroSumEval's setting)
    max_jail_chars: int = 4000  # longer jails are rejected
    max_input_chars: int = 1000  # a longer input is cut to this length before it runs
    shown_chars: int = 600  # how much of a try's output the next try sees
    allow_unsafe_sandbox: bool = False  # true: play even with sandbox=subprocess (NOT isolated)
    reasoning: bool = False  # language-model attackers write their working before each input
    limits: JailLimits = field(default_factory=JailLimits)  # one execution of the jail with one input

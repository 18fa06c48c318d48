"""PyJail jails of known strength, and attacks that really break them.

A *jail* is Python source defining ``jail(user_input: str) -> str``; at run time the flag sits in
the environment variable ``FLAG`` of the sandboxed process, and an input *captures* when the flag
appears on stdout, on stderr or in the returned text. This module writes jails for simulated
setters and the inputs simulated attackers send, and everything it claims is checked against the
real sandbox by the tests.

The model
---------
Every jail this module writes is described by :class:`Rules`: what the input may contain (banned
words, banned characters, a length cap or a truncation, ASCII only, banned syntax-tree nodes,
banned names, no string literals), how it is run (``eval`` or ``exec``; all builtins, a few, or
none; which names of the jail's own scope it sees) and how the output is *censored* (``censor``,
0 to 4: nothing; the flag is cut out of the returned text; stdout is also captured and censored;
exceptions are also caught and censored; stderr is also captured and every exception, SystemExit
included, caught). The jail's source states these rules in module-level constants (``BANNED =
(...)``, ``MAX_LEN = 40``, ...) and in the plain shape of its code; :func:`read_jail` reads them
back with :mod:`ast`.

Jails with the same rules differ widely on the surface, since a setter's jails only count when
they are unique to an embedder that compares their tokens: the checks sit inline, in predicate or
reason functions, in a validator that returns or raises, in a guard class or in one condition;
every check, the run block and the censoring helper have several equivalent spellings; names,
messages and flavour text (docstring, themed refusals, a banner and a ``__main__`` block the
sandbox never runs) are drawn from pools. None of it changes what the jail does.

Attacks are built from :data:`TECHNIQUES`, an ordered repertoire of tricks, each with a
*sophistication* in [0, 1]. An input is assembled from a *style* (how strings are spelled, how
names and attributes are written, how ``os`` is reached, which part of the environment is taken,
which channel carries it out, and an optional wrapper: a nested eval of a built string, a second
stage past a truncation, a chain of class decorators); the tricks it ends up using give its
*level*, the sophistication of its most sophisticated trick. For a jail's rules the module
enumerates every style, keeps the inputs that pass the jail's filters (the same checks the jail's
code makes, mirrored here) and that can work at run time (the builtins, names and output channel
they need are there), and calls the least level among them the jail's **difficulty**. So the
difficulty is exactly the skill an attacker needs: an attacker who knows every technique up to
sophistication ``s`` (see :func:`probe`) breaks the jail if and only if ``s >= difficulty``.

Difficulty scale (technique → sophistication): direct 0, print 0.10, error_leak 0.15, short 0.20,
concat 0.25, getattr 0.35, chr 0.45, eval_string 0.50, stderr 0.55, unicode 0.60,
second_stage 0.70, subclasses 0.75, raw_fd 0.85, decorators 0.95. Each kind's five levels
(strength rounded to quarters) land at:

========== ===== ===== ===== ===== =====
kind        0     .25   .5    .75   1
========== ===== ===== ===== ===== =====
names       0     .25   .35   .60   .85
characters  0     .35   .45   .50   .75
length      0     .20   .55   .70   .85
ast         0     .35   .45   .75   .95
rewrite     .10   .15   .55   .85   .85
========== ===== ===== ===== ===== =====

Only source this module wrote is read (anything else gives ``None``); :func:`difficulty` falls
back to a visible-defence heuristic for other jails (see :func:`guess_difficulty`).

The code lives in the :mod:`skate.games.pyjail.jails` package (its docstring lists the modules);
this module re-exports the public names.
"""

from __future__ import annotations

from skate.games.pyjail.jails.attacks import attack_inputs, breaker, probe
from skate.games.pyjail.jails.maker import flawed_jail, make_jail
from skate.games.pyjail.jails.model import FLAWS, KINDS, TECHNIQUES, JailInfo, Rules, Technique
from skate.games.pyjail.jails.reader import difficulty, guess_difficulty, kind_of, read_jail

__all__ = [
    "FLAWS",
    "KINDS",
    "TECHNIQUES",
    "JailInfo",
    "Rules",
    "Technique",
    "attack_inputs",
    "breaker",
    "difficulty",
    "flawed_jail",
    "guess_difficulty",
    "kind_of",
    "make_jail",
    "probe",
    "read_jail",
]

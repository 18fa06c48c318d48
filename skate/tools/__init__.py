"""Tools a game brings with it, above the runner: they compose settings, play games as a run plays
them and read finished runs as the report does, so they sit in the top layer beside
:mod:`skate.cli` (``.importlinter``), never inside a game's package.

A game names its commands when it registers (:func:`skate.games.register`, ``commands=``), each
as ``"module:function"`` imported when the command runs: ``skate --help`` lists them beside
skate's own (:func:`skate.cli.commands`). One package per game:

| package | what it holds |
|---|---|
| ``scp`` | ``skate scp`` (build a benchmark, its stability over seeds, arXiv sources) and ``skate rugged`` (Rugged Scores) |
"""

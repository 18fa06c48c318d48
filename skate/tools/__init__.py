"""The libraries behind skate's analysis commands and the tools a game brings with it, above the
runner: they compose settings, play games as a run plays them and read finished runs as the report
does; the command line (:mod:`skate.cli`) holds only argument handling.

A game names its commands when it registers (:func:`skate.games.register`, ``commands=``), each
as ``"module:function"`` imported when the command runs: ``skate --help`` lists them beside
skate's own (:func:`skate.cli.commands`).

| module | what it holds |
|---|---|
| ``calibrate`` | ``skate calibrate``: an embedder's uniqueness threshold from labelled pairs |
| ``sensitivity`` | ``skate sensitivity``: a multiple-choice game's tasks asked again over option sets and orders (SKATE Fig. 6) |
| ``scp`` | the SCP game's: ``skate scp`` (build a benchmark, its stability over seeds, arXiv sources) and ``skate rugged`` (Rugged Scores) |
"""

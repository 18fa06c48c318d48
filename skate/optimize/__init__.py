"""Prompt optimisation with DSPy (ZeroSumEval §3.4): the ``optimizer`` section's schema, its plans
and the results' table (:mod:`skate.optimize.config`), compiling each language-model player's
programs on the game's own verifiable items (:mod:`skate.optimize.programs`), and optimising a
cohort with no game played (``skate optimize``: :mod:`skate.optimize.standalone`)."""

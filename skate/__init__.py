"""skate: LLMs evaluate one another by setting verifiable tasks for each other.

From Python (docs/python.md): ``skate.play(skate.SkateConfig(...))`` plays a game,
``skate.load_run(path)`` reads a run folder back, ``skate.rate(run, rating)`` rates its games again;
``skate.config(players="local_cohort", game="cop")`` is a game's settings as the command line
composes them, ``skate.preset("local_cohort")`` one option's section. They are loaded when first
used, so ``import skate`` stays cheap.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["Played", "Run", "SkateConfig", "config", "load_run", "play", "preset", "rate"]


def __getattr__(name: str) -> Any:
    if name == "SkateConfig":
        from skate.settings.config import SkateConfig

        return SkateConfig
    if name in ("config", "preset"):
        from skate.settings import options

        return options.settings if name == "config" else options.preset
    if name in __all__:
        from skate import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

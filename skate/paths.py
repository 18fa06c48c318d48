"""Where skate's own files are: the bottom of the package (imports nothing of skate)."""

from __future__ import annotations

from pathlib import Path

# The Hydra config folder (conf/ beside the package).
CONF_DIR = str(Path(__file__).resolve().parent.parent / "conf")

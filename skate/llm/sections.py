"""DSPy's ``[[ ## field ## ]]`` markers: splitting a chat message into its fields.

Kept apart from :mod:`skate.llm.modules` so that readers that need no DSPy (the fake server)
use the same split without importing it.
"""

from __future__ import annotations

import re

MARKER = re.compile(r"\[\[\s*##\s*(\w+)\s*##\s*\]\]")


def sections(text: str) -> dict[str, str]:
    """Field name -> its text, for every ``[[ ## name ## ]]`` marker followed by text."""
    parts = MARKER.split(text)
    return {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}

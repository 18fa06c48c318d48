"""What the pinned LiteLLM's model map knows about a model: whether it reasons, its prices and
how much it may write.

The map is the JSON file LiteLLM ships (``model_prices_and_context_window_backup.json``), read
here as data: importing LiteLLM itself costs seconds of CPU, and only a model that reasons needs
its code (:mod:`skate.llm.shaping`). A model is looked up by ``provider/model`` and by its bare
name, as LiteLLM keys it (``gpt-5-mini``, ``gemini/gemini-2.5-pro``, ``claude-sonnet-4-5``); a
model it does not know (a local server's, a new release) has no facts, and skate learns what it
refuses from its own replies.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAP_FILE = "model_prices_and_context_window_backup.json"
_lock = threading.Lock()


@dataclass(frozen=True)
class ModelFacts:
    """One model's entry in LiteLLM's map, in the terms skate uses."""

    key: str  # the map's key for it
    provider: str  # the map's litellm_provider
    reasoning: bool  # supports_reasoning: it thinks before it answers
    input_per_mtok: float | None  # USD per million prompt tokens (None: the map gives no price)
    output_per_mtok: float | None  # USD per million completion tokens, thinking included
    max_output_tokens: int | None
    efforts: frozenset[str] = frozenset()  # reasoning_effort levels the map says it takes beyond low/medium/high
    no_efforts: frozenset[str] = frozenset()  # levels the map says it does not take


@functools.cache
def _model_map() -> dict[str, Any]:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return {}
    path = Path(next(iter(spec.submodule_search_locations))) / MAP_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _price(entry: dict[str, Any], key: str) -> float | None:
    value = entry.get(key)
    return float(value) * 1e6 if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@functools.lru_cache(maxsize=1024)
def facts(model: str) -> ModelFacts | None:
    """The map's facts for ``model`` ("provider/model"), or None where it has no entry. A price
    of 0 in the map (an entry it keeps without a price) reads as no price."""
    provider, _, name = model.partition("/")
    with _lock:
        table = _model_map()
    for key in (model, name, f"{provider}/{name.rsplit('/', 1)[-1]}"):
        entry = table.get(key)
        if isinstance(entry, dict) and entry.get("mode", "chat") == "chat":
            break
    else:
        return None
    levels = ("none", "minimal", "xhigh", "max")
    price_in, price_out = _price(entry, "input_cost_per_token"), _price(entry, "output_cost_per_token")
    if not price_in and not price_out:
        price_in = price_out = None
    max_out = entry.get("max_output_tokens")
    return ModelFacts(
        key=key,
        provider=str(entry.get("litellm_provider") or provider),
        reasoning=bool(entry.get("supports_reasoning")),
        input_per_mtok=price_in,
        output_per_mtok=price_out,
        max_output_tokens=int(max_out) if isinstance(max_out, int) and max_out > 0 else None,
        efforts=frozenset(x for x in levels if entry.get(f"supports_{x}_reasoning_effort") is True),
        no_efforts=frozenset(x for x in levels if entry.get(f"supports_{x}_reasoning_effort") is False),
    )


def reasons(model: str) -> bool:
    """Whether LiteLLM's map says ``model`` thinks before it answers (False where it does not know it)."""
    found = facts(model)
    return bool(found and found.reasoning)

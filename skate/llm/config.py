"""The model client's config schema (the ``llm`` section) and its checks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

from skate.errors import check as _check


@dataclass
class LLMConfig:
    cache: bool = True  # reuse earlier completions of identical requests (errors are never cached)
    cache_dir: str = "${oc.env:SKATE_CACHE_DIR,'~/.cache/skate'}/responses"
    max_retries: int = 4
    backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    max_retry_after_s: float = 120.0
    concurrency: int = 8  # requests in flight per provider or local server
    endpoint_concurrency: dict[str, int] = field(default_factory=dict)  # by provider or api_base
    budget_usd: Optional[float] = None  # stop the run cleanly once this much is spent
    # USD per million tokens, by "provider/model" or by model name:
    # {name: {input_per_mtok: float, output_per_mtok: float}}
    prices: dict[str, Any] = field(default_factory=dict)
    # Before round 1, one cheap check of each distinct model and endpoint (a missing model, a
    # refused key or an unreachable server stops the run with one line); false skips it.
    preflight: bool = True
    # Structured output: ask for each reply as a JSON object under a JSON schema
    # (response_format), where the server takes one. auto: send it, and use the text format for
    # a model whose server refuses it (one warning); on: a refusal stops the run; off: never.
    structured: str = "auto"


def validate_llm(lc: Any) -> None:
    _check(lc.max_retries >= 0, "llm.max_retries", lc.max_retries, "must be >= 0")
    _check(lc.concurrency >= 1, "llm.concurrency", lc.concurrency, "must be >= 1")
    for model, price in lc.prices.items():
        ok = (isinstance(price, Mapping) and set(price) <= {"input_per_mtok", "output_per_mtok"}
              and all(isinstance(v, (int, float)) and v >= 0 for v in price.values()))
        _check(ok, f"llm.prices.{model}", price,
               "give {input_per_mtok: <USD>, output_per_mtok: <USD>} per million tokens")
    if lc.budget_usd is not None:
        _check(lc.budget_usd > 0, "llm.budget_usd", lc.budget_usd, "must be > 0 (or null for no budget)")
    _check(lc.structured in ("auto", "on", "off"), "llm.structured", lc.structured,
           "must be auto (a JSON schema where the server takes one), on (always; a refusal stops the run) "
           "or off (the text format)")

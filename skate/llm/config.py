"""The model client's config schema (the ``llm`` section), which checks itself (``check``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Optional

from skate.errors import Problem, Settings, require

STRUCTURED = ("auto", "on", "off")  # llm.structured


# The list prices of the paper's models, USD per million tokens: llm.prices' default.
PAPER_PRICES: dict[str, dict[str, float]] = {
    "anthropic/claude-3-haiku-20240307": {"input_per_mtok": 0.25, "output_per_mtok": 1.25},
    "anthropic/claude-3-5-haiku-20241022": {"input_per_mtok": 0.80, "output_per_mtok": 4.00},
    "anthropic/claude-3-5-sonnet-20241022": {"input_per_mtok": 3.00, "output_per_mtok": 15.00},
    "anthropic/claude-sonnet-4-20250514": {"input_per_mtok": 3.00, "output_per_mtok": 15.00},
    "gemini/gemini-2.0-flash": {"input_per_mtok": 0.10, "output_per_mtok": 0.40},
    "openai/gpt-4o-2024-11-20": {"input_per_mtok": 2.50, "output_per_mtok": 10.00},
}


@dataclass
class LLMConfig(metaclass=Settings):
    cache: bool = True  # reuse earlier completions of identical requests (errors are never cached)
    cache_dir: str = "${oc.env:SKATE_CACHE_DIR,'~/.cache/skate'}/responses"
    max_retries: int = 4
    backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    max_retry_after_s: float = 120.0
    concurrency: int = 8  # requests in flight per provider or local server
    endpoint_concurrency: dict[str, int] = field(default_factory=dict)  # by provider or api_base
    budget_usd: Optional[float] = None  # stop the run cleanly once this much is spent
    # A model whose endpoint stops answering (no connection, timeouts, 5xx past the retries): its
    # calls wait for it, and the run stops cleanly (resumable) only if it has not answered after
    # this many seconds. 0: no waiting (such calls are void, as other failures).
    outage_wait_s: float = 600.0
    # USD per million tokens, by "provider/model" or by model name:
    # {name: {input_per_mtok: float, output_per_mtok: float}} (a mapping of floats, not a schema of
    # its own: OmegaConf 2.3 cannot add an entry to a dict of schemas key by key, as
    # `+llm.prices.foo.input_per_mtok=2` does; check() names a key that is neither)
    prices: dict[str, dict[str, float]] = field(default_factory=lambda: {k: dict(v) for k, v in PAPER_PRICES.items()})
    # Before round 1, one cheap check of each distinct model and endpoint (a missing model, a
    # refused key or an unreachable server stops the run with one line); false skips it.
    preflight: bool = True
    # Structured output: ask for each reply as a JSON object under a JSON schema
    # (response_format), where the server takes one. auto: send it, and use the text format for
    # a model whose server refuses it (one warning); on: a refusal stops the run; off: never.
    structured: str = "auto"
    # Reasoning models: what each reply's model thought before it (taken out of the reply before
    # anything reads it, counted apart) is kept in the run folder, thinking.jsonl, for a person to read.
    keep_thinking: bool = True

    def check(self) -> list[Problem]:
        """What types cannot say is wrong with these settings (keys within ``llm``)."""
        problems = [
            *require(self.max_retries >= 0, "max_retries", self.max_retries, "must be >= 0"),
            *require(self.concurrency >= 1, "concurrency", self.concurrency, "must be >= 1"),
        ]
        for model, price in self.prices.items():
            ok = (
                isinstance(price, Mapping)
                and set(price) <= {"input_per_mtok", "output_per_mtok"}
                and all(isinstance(v, (int, float)) and v >= 0 for v in price.values())
            )
            problems += require(
                ok, f"prices.{model}", price, "give {input_per_mtok: <USD>, output_per_mtok: <USD>} per million tokens"
            )
        budget = self.budget_usd
        problems += require(
            self.outage_wait_s >= 0,
            "outage_wait_s",
            self.outage_wait_s,
            "must be >= 0 (seconds the calls to a model that stopped answering wait for it; "
            "0: no waiting, they are void)",
        )
        return [
            *problems,
            *require(budget is None or budget > 0, "budget_usd", budget, "must be > 0 (or null for no budget)"),
            *require(
                self.structured in STRUCTURED,
                "structured",
                self.structured,
                "must be auto (a JSON schema where the server takes one), on (always; a refusal stops the "
                "run) or off (the text format)",
            ),
        ]

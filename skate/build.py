"""Components built from their config sections, for every tool that plays or prepares a game
(:mod:`skate.runner`, :mod:`skate.optimize`, :mod:`skate.sensitivity`, ``python -m skate.sandbox``)."""

from __future__ import annotations

from typing import Any

from hydra.utils import instantiate
from omegaconf import DictConfig

from skate.errors import ConfigError
from skate.llm import LLMClient, Price, ResponseCache, RetryPolicy
from skate.sandbox import Sandbox, SandboxUnavailable


# A model's twin with its default prompts, when optimizer.compare is on.
DEFAULT_SUFFIX = "-default"


def build_sandbox(sandbox_cfg: DictConfig) -> Sandbox:
    """Instantiate the configured sandbox; a sandbox that cannot run here raises SandboxUnavailable."""
    try:
        return instantiate(sandbox_cfg, _convert_="all")
    except Exception as exc:
        cause: BaseException | None = exc
        while cause is not None:
            if isinstance(cause, SandboxUnavailable):
                raise cause from None
            if isinstance(cause, (ValueError, TypeError)) and cause is not exc:
                raise ConfigError(f"sandbox: {cause}") from None
            cause = cause.__cause__
        raise



def build_client(c: DictConfig):
    """The one model client every LLM player of the run shares."""
    cache = ResponseCache(c.cache_dir) if c.cache else None
    retry = RetryPolicy(c.max_retries, c.backoff_s, c.max_backoff_s, c.max_retry_after_s)
    prices = {k: Price(v.get("input_per_mtok", 0.0), v.get("output_per_mtok", 0.0)) for k, v in c.prices.items()}
    return LLMClient(cache=cache, retry=retry, concurrency=c.concurrency,
                     endpoint_concurrency=dict(c.endpoint_concurrency), prices=prices,
                     budget_usd=c.budget_usd, structured=str(c.get("structured", "auto")))


def usage_summary(client) -> dict[str, Any]:
    """Calls, cache hits, void samples, retries, tokens and cost: per player and for the run."""
    return {"players": {name: u.as_dict() for name, u in sorted(client.usage.items())},
            "total": client.total().as_dict(),
            "budget_usd": client.budget_usd,
            # per model: json_schema / json_object (structured output), or text where refused
            "structured_output": client.structured_formats()}

"""Language-model players' plumbing: model specs, the client (cache, retries, concurrency, cost)
and the DSPy modules that set and answer tasks.

Importing this package makes no network call: LiteLLM is told to use its bundled price table
and Anthropic beta-header table instead of fetching them, and DSPy's cache folder goes under skate's cache (DSPy's own LM cache
is not used; :class:`~skate.llm.client.LLMClient` has its own).
"""

import os
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS", "True")  # LiteLLM's own copy, not a fetch
os.environ.setdefault(
    "DSPY_CACHEDIR", str(Path(os.environ.get("SKATE_CACHE_DIR", "~/.cache/skate")).expanduser() / "dspy")
)

from skate.llm.client import Completion, LLMClient, ResponseCache
from skate.llm.endpoints import RetryPolicy
from skate.llm.outage import ModelUnreachable
from skate.llm.spec import ModelConfigError, ModelSpec
from skate.llm.usage import BudgetExceeded, Price, Usage
from skate.llm.wire import CallFailed

__all__ = [
    "BudgetExceeded",
    "CallFailed",
    "Completion",
    "LLMClient",
    "ModelConfigError",
    "ModelSpec",
    "ModelUnreachable",
    "Price",
    "ResponseCache",
    "RetryPolicy",
    "Usage",
]

"""Which model a player is, and how to reach it: ``provider/model`` strings and their settings."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from skate.llm.models import ModelFacts, facts

# Providers that speak the OpenAI chat-completions protocol, with their default endpoint and the
# environment variable holding the key. Anything else goes through LiteLLM.
OPENAI_COMPATIBLE: dict[str, tuple[str, str]] = {
    "openai": ("https://api.openai.com/v1", "OPENAI_API_KEY"),
    "hosted_vllm": ("", ""),
    "vllm": ("", ""),
    "ollama": ("http://localhost:11434/v1", ""),
    "ollama_chat": ("http://localhost:11434/v1", ""),
    "llamacpp": ("http://localhost:8080/v1", ""),
    "lmstudio": ("http://localhost:1234/v1", ""),
    "local": ("", ""),
    "deepseek": ("https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
    "together_ai": ("https://api.together.xyz/v1", "TOGETHER_API_KEY"),
    "openrouter": ("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "groq": ("https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    "xai": ("https://api.x.ai/v1", "XAI_API_KEY"),
    "mistral": ("https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
}
# Providers LiteLLM serves, and the variable it reads the key from.
LITELLM_KEYS: dict[str, str] = {
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "cohere": "COHERE_API_KEY",
    "fireworks_ai": "FIREWORKS_API_KEY",
}
LOCAL_PROVIDERS = {"hosted_vllm", "vllm", "ollama", "ollama_chat", "llamacpp", "lmstudio", "local"}


class ModelConfigError(ValueError):
    """A model is named or configured in a way that cannot work; the message says what to fix."""


# Completion tokens a model may write by default: a model that answers at once (the paper's
# 2,048), and one that thinks first, whose thinking counts in the same limit (capped by the most
# the model may write, where LiteLLM's map says). With a thinking budget: the budget and room
# for the answer after it.
MAX_TOKENS = 2048
THINKING_MAX_TOKENS = 16384
ANSWER_ROOM = 4096
# reasoning_effort levels, least first ("none": no thinking, where a model takes it).
EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
# Providers whose thinking budget skate can send, and how (LiteLLM maps Anthropic's and Gemini's).
BUDGET_PROVIDERS = ("anthropic", "gemini", "vertex_ai", "openrouter")


@dataclass(frozen=True)
class ModelSpec:
    """One model endpoint and its sampling settings."""

    model: str  # "provider/model", e.g. "openai/gpt-4o" or "hosted_vllm/Qwen/Qwen2.5-7B-Instruct"
    api_base: str = ""  # e.g. "http://localhost:8000/v1"; "" = the provider's default
    api_key_env: str = ""  # variable holding the key; "" = the provider's usual one
    temperature: float = 0.7
    # Completion tokens per reply, thinking included; None: MAX_TOKENS, or for a model that thinks
    # THINKING_MAX_TOKENS (or its thinking budget and ANSWER_ROOM), resolved when the spec is made.
    max_tokens: int | None = None
    extra_headers: dict[str, str] = field(default_factory=dict)
    extra_body: dict[str, Any] = field(default_factory=dict)  # passed through to the provider
    timeout_s: float = 120.0  # per request
    supports_n: bool | None = None  # None = assume yes for OpenAI-compatible providers
    max_n: int | None = None  # the most samples one request may ask for (llama-server: n <= its slots)
    context_tokens: int | None = None  # the model's context window, where known (None: unknown)
    # How much a reasoning model thinks (:meth:`request_fields` says what each provider is sent):
    # OpenAI's, xAI's, Gemini's and OpenRouter's effort level; a budget of thinking tokens
    # (Anthropic's thinking.budget_tokens, Gemini's thinkingBudget, OpenRouter's reasoning.max_tokens);
    # a local server's thinking switch (Qwen3's enable_thinking, Ollama's think). None: the model's own.
    reasoning_effort: str | None = None
    thinking_budget: int | None = None
    thinking: bool | None = None

    def __post_init__(self) -> None:
        if "/" not in self.model or self.model.startswith("/") or self.model.endswith("/"):
            raise ModelConfigError(
                f"model={self.model!r}: name models as 'provider/model', e.g. 'openai/gpt-4o', "
                "'anthropic/claude-3-5-sonnet-20241022' or 'hosted_vllm/<model>' with an api_base"
            )
        if self.temperature < 0:
            raise ModelConfigError(f"model {self.model}: temperature={self.temperature} must be >= 0")
        self._check_thinking()
        if self.max_tokens is None:
            object.__setattr__(self, "max_tokens", self.default_max_tokens())
        assert self.max_tokens is not None
        if self.thinking_budget is not None and self.thinking_budget >= self.max_tokens:
            raise ModelConfigError(
                f"model {self.model}: thinking_budget={self.thinking_budget} must be below max_tokens="
                f"{self.max_tokens} (the thinking counts in it, and the answer needs room after it): raise "
                f"max_tokens (e.g. to {self.thinking_budget + ANSWER_ROOM}) or lower thinking_budget"
            )
        if self.max_tokens < 1:
            raise ModelConfigError(f"model {self.model}: max_tokens={self.max_tokens} must be >= 1")
        if self.context_tokens is not None and self.context_tokens <= self.max_tokens:
            raise ModelConfigError(
                f"model {self.model}: context_tokens={self.context_tokens} must be more than "
                f"max_tokens={self.max_tokens} (or null: unknown)"
            )
        if self.max_n is not None and self.max_n < 1:
            raise ModelConfigError(f"model {self.model}: max_n={self.max_n} must be >= 1 (or null: any)")
        if self.timeout_s <= 0:
            raise ModelConfigError(f"model {self.model}: timeout_s={self.timeout_s} must be > 0")
        if self.provider in LOCAL_PROVIDERS and not self.base_url:
            raise ModelConfigError(
                f"model {self.model}: a local server needs api_base, e.g. api_base=http://localhost:8000/v1"
            )

    def _check_thinking(self) -> None:
        effort, budget = self.reasoning_effort, self.thinking_budget
        if effort is not None and effort not in EFFORTS:
            raise ModelConfigError(
                f"model {self.model}: reasoning_effort={effort!r} is not a level: use one of "
                f"{', '.join(EFFORTS)} (or null: the model's own)"
            )
        if budget is not None:
            if budget < 1:
                raise ModelConfigError(f"model {self.model}: thinking_budget={budget} must be >= 1 (or null)")
            if self.provider not in BUDGET_PROVIDERS:
                raise ModelConfigError(
                    f"model {self.model}: thinking_budget is for {', '.join(p + '/' for p in BUDGET_PROVIDERS)} "
                    "models; set reasoning_effort instead (or thinking: false to turn a local model's thinking off)"
                )
            if effort is not None:
                raise ModelConfigError(f"model {self.model}: give reasoning_effort or thinking_budget, not both")

    @property
    def facts(self) -> ModelFacts | None:
        """What LiteLLM's model map knows of this model (None for a local server's, or one it
        does not know)."""
        return None if self.provider in LOCAL_PROVIDERS else facts(self.model)

    @property
    def thinks(self) -> bool:
        """Whether the model thinks before it answers: it is told to (a thinking budget, an
        effort above none, the thinking switch on), or LiteLLM's map says it reasons."""
        if self.thinking is not None:
            return self.thinking
        if self.thinking_budget is not None:
            return True
        if self.reasoning_effort is not None:
            return self.reasoning_effort != "none"
        found = self.facts
        return bool(found and found.reasoning)

    def default_max_tokens(self) -> int:
        """The completion limit when none is given: room for the thinking of a model that thinks."""
        if not self.thinks:
            return MAX_TOKENS
        if self.thinking_budget is not None:
            return self.thinking_budget + ANSWER_ROOM
        found = self.facts
        cap = found.max_output_tokens if found and found.max_output_tokens else THINKING_MAX_TOKENS
        return min(THINKING_MAX_TOKENS, cap)

    def request_fields(self) -> dict[str, Any]:
        """The request fields the thinking settings become for this provider, then ``extra_body``
        (which wins): OpenAI-style ``reasoning_effort`` (OpenAI, xAI, DeepSeek, local servers;
        LiteLLM turns it into Anthropic's and Gemini's own); OpenRouter's ``reasoning`` object;
        LiteLLM's ``thinking`` for Anthropic's and Gemini's budgets; and a local server's thinking
        switch (``chat_template_kwargs.enable_thinking`` for vLLM, SGLang and llama.cpp, Qwen3's
        chat template; ``think`` for Ollama)."""
        out: dict[str, Any] = {}
        effort, budget = self.reasoning_effort, self.thinking_budget
        if self.provider == "openrouter":
            if effort is not None or budget is not None:
                out["reasoning"] = {"effort": effort} if effort is not None else {"max_tokens": budget}
        else:
            if effort is not None:
                out["reasoning_effort"] = effort
            if budget is not None:
                out["thinking"] = {"type": "enabled", "budget_tokens": budget}
        if self.thinking is not None:
            if self.provider in ("ollama", "ollama_chat"):
                out["think"] = self.thinking
            elif self.provider in LOCAL_PROVIDERS:
                out["chat_template_kwargs"] = {"enable_thinking": self.thinking}
        return {**out, **self.extra_body} if out else self.extra_body

    @property
    def provider(self) -> str:
        return self.model.split("/", 1)[0]

    @property
    def name(self) -> str:
        """The model's name at the provider (the part after the first slash)."""
        return self.model.split("/", 1)[1]

    @property
    def openai_compatible(self) -> bool:
        return self.provider in OPENAI_COMPATIBLE or bool(
            self.api_base and self.provider not in ("anthropic", "gemini", "vertex_ai", "bedrock")
        )

    @property
    def base_url(self) -> str:
        return (self.api_base or OPENAI_COMPATIBLE.get(self.provider, ("", ""))[0]).rstrip("/")

    @property
    def hosted(self) -> bool:
        """True when calls leave this machine (so network use is expected)."""
        if not self.base_url:
            return True  # a LiteLLM provider's own endpoint
        host = urlparse(self.base_url).hostname or ""
        return host not in ("localhost", "127.0.0.1", "::1") and not host.startswith("127.")

    @property
    def endpoint_key(self) -> str:
        """What concurrency limits are counted against: the provider, or the local server."""
        return self.base_url if self.provider in LOCAL_PROVIDERS or self.api_base else self.provider

    @property
    def can_batch_samples(self) -> bool:
        return self.supports_n if self.supports_n is not None else self.openai_compatible

    def api_key(self) -> str:
        env = (
            self.api_key_env or OPENAI_COMPATIBLE.get(self.provider, ("", ""))[1] or LITELLM_KEYS.get(self.provider, "")
        )
        if env:
            key = os.environ.get(env, "")
            if not key and self.hosted:
                raise ModelConfigError(
                    f"model {self.model}: set the {env} environment variable "
                    "(or api_key_env to the variable that holds the key)"
                )
            return key or "unused"
        return "unused"  # local servers usually ignore the key

    def request_identity(self) -> dict[str, Any]:
        """What about the endpoint makes two requests different (for the cache key)."""
        return {
            "model": self.model,
            "api_base": self.base_url,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "extra_body": self.request_fields(),
        }

"""What one request to a model returns (:class:`Reply`) and how it fails (:class:`CallFailed`):
shared by the client (:mod:`skate.llm.client`) and the transports (:mod:`skate.llm.transport`)."""

from __future__ import annotations

import email.utils
import time
from dataclasses import dataclass
from typing import Any


class CallFailed(Exception):
    """One request failed. ``retryable`` says whether trying again can help."""

    def __init__(
        self,
        kind: str,
        detail: str,
        retryable: bool,
        retry_after: float | None = None,
        status: int | None = None,
        body: str = "",
    ) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail, self.retryable = kind, detail, retryable
        self.retry_after, self.status = retry_after, status
        self.body = body  # the provider's reply in full (up to a few KB), where ``detail`` is cut short


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


# One generated token with its log-probability and the provider's most likely alternatives at
# that position: {"token": str, "logprob": float, "top": [[token, logprob], ...]} (OpenAI's
# ``choices[i].logprobs.content`` items, in a compact form that is cached as it is).
TokenLogprobs = dict


@dataclass
class Reply:
    """What a provider returned for one request: one text per choice, and the token counts."""

    texts: list[str]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reasons: list[str | None] | None = None  # per choice: "stop", "length" (cut at max_tokens), ...
    # Prompt tokens the provider took from its prompt cache (``usage.prompt_tokens_details.
    # cached_tokens``: llama.cpp's server, OpenAI, vLLM with prefix caching); 0 when it says nothing.
    cached_prompt_tokens: int = 0
    logprobs: list[list[TokenLogprobs] | None] | None = None  # per choice, when asked for and given
    # Per choice, the thinking the provider gave beside the reply (``reasoning_content``,
    # ``reasoning``, thinking blocks: :mod:`skate.llm.thinking`); None: none given.
    thinking: list[str | None] | None = None
    # Of completion_tokens, those the model spent thinking, as the provider counts them
    # (``completion_tokens_details.reasoning_tokens``); 0 when it says nothing.
    thinking_tokens: int = 0

    def finish(self, i: int) -> str | None:
        return self.finish_reasons[i] if self.finish_reasons and i < len(self.finish_reasons) else None

    def tokens(self, i: int) -> list[TokenLogprobs] | None:
        return self.logprobs[i] if self.logprobs and i < len(self.logprobs) else None

    def thought(self, i: int) -> str | None:
        return self.thinking[i] if self.thinking and i < len(self.thinking) else None


def compact_logprobs(content: Any) -> list[TokenLogprobs] | None:
    """OpenAI's ``logprobs.content`` (a list of ``{"token", "logprob", "top_logprobs": [{"token",
    "logprob"}, ...]}``) in :data:`TokenLogprobs` form; None when there is none or it is not that
    shape."""
    if not isinstance(content, list) or not content:
        return None
    out = []
    for item in content:
        if not isinstance(item, dict) or not isinstance(item.get("token"), str):
            return None
        top = [
            [str(t.get("token")), float(lp)]
            for t in item.get("top_logprobs") or ()
            if isinstance(t, dict) and isinstance(lp := t.get("logprob"), (int, float))
        ]
        logprob = item.get("logprob")
        out.append(
            {
                "token": item["token"],
                "logprob": float(logprob) if isinstance(logprob, (int, float)) else None,
                "top": top,
            }
        )
    return out

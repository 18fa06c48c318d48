"""What one request to a model returns (:class:`Reply`) and how it fails (:class:`CallFailed`):
shared by the client (:mod:`skate.llm.client`) and the transports (:mod:`skate.llm.transport`)."""

from __future__ import annotations

import email.utils
import time
from dataclasses import dataclass


class CallFailed(Exception):
    """One request failed. ``retryable`` says whether trying again can help."""

    def __init__(self, kind: str, detail: str, retryable: bool, retry_after: float | None = None,
                 status: int | None = None) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail, self.retryable = kind, detail, retryable
        self.retry_after, self.status = retry_after, status


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


@dataclass
class Reply:
    """What a provider returned for one request: one text per choice, and the token counts."""

    texts: list[str]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reasons: list[str | None] | None = None  # per choice: "stop", "length" (cut at max_tokens), ...

    def finish(self, i: int) -> str | None:
        return self.finish_reasons[i] if self.finish_reasons and i < len(self.finish_reasons) else None

"""What a server refuses of a request, and how the client tells each refusal: more samples than
it takes in one request (llama.cpp's slots), an option it does not take (``logprobs``), and a
``response_format`` (structured output) it does not take, with the forms tried in turn."""

from __future__ import annotations

import re
from typing import Any

from skate.llm.wire import CallFailed


class TooManySamples(Exception):
    """A server refused ``n`` samples in one request, naming the most it takes (llama.cpp's
    server: no more than its slots)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"at most {limit} samples per request")
        self.limit = limit


# llama.cpp's server refusing n above its slot count: "Field 'n': Value must be between 1 <= value <= 2".
_N_LIMIT = re.compile(r"\bn\b'?\W+value must be between 1 <= value <= (\d+)", re.IGNORECASE)


def n_limit(exc: CallFailed) -> int | None:
    """The most samples per request a 400 refusal names (llama.cpp's server), else None."""
    m = _N_LIMIT.search(exc.detail) if exc.status == 400 else None
    return int(m.group(1)) if m else None


class OptionRefused(Exception):
    """A provider refused a request for one of its ``options`` (a 400 or 422 naming it, e.g.
    ``logprobs`` where a model gives none): the caller does without it; nothing is void."""

    def __init__(self, option: str, error: CallFailed) -> None:
        super().__init__(f"{option} refused: {error}")
        self.option, self.error = option, error


def refused_option(exc: CallFailed, options: dict[str, Any] | None) -> str | None:
    """The option a 400/422 refusal names (``logprobs``, ``top_logprobs``, ``stop``), if any."""
    if not options or exc.status not in (400, 422):
        return None
    detail = exc.detail.lower()
    return next((k for k in sorted(options, key=len, reverse=True) if k.lower() in detail), None)


class FormatRefused(Exception):
    """A server refused the ``response_format`` a request carried (handled in ``complete``)."""

    def __init__(self, error: CallFailed) -> None:
        super().__init__(str(error))
        self.error = error


STRUCTURED_MODES = ("auto", "on", "off")
# The forms of structured output tried in turn: OpenAI's (vLLM, Ollama, llama.cpp's own server),
# then llama-cpp-python's (its server takes a schema only inside a json_object format).
FORMATS = ("json_schema", "json_object", "text")
_REFUSAL = re.compile(
    r"response.?format|json.?schema|json_object|structured.?output|\bschema\b|"
    r"unsupported.?param",
    re.IGNORECASE,
)


# llama-cpp-python's server answers a response_format type it does not take with HTTP 500 and
# its request validator's message (a literal_error at ('body', 'response_format', 'type')).
_VALIDATION_500 = re.compile(r"validation error.*response_format", re.IGNORECASE | re.DOTALL)


def is_format_refusal(exc: CallFailed) -> bool:
    """Whether a failed request that carried a ``response_format`` was refused because of it."""
    return (
        exc.status in (400, 422)
        and bool(_REFUSAL.search(exc.detail))
        or (exc.status == 500 and bool(_VALIDATION_500.search(exc.detail)))
        or (exc.kind == "error" and "UnsupportedParams" in exc.detail)
    )


def as_format(response_format: dict[str, Any], form: str) -> dict[str, Any] | None:
    """``response_format`` (OpenAI's json_schema form) in ``form`` (one of :data:`FORMATS`)."""
    if form == "json_schema":
        return response_format
    if form == "json_object":
        return {"type": "json_object", "schema": response_format["json_schema"]["schema"]}
    return None

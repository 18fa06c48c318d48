"""Sending one chat request to a provider and classifying what went wrong.

OpenAI-compatible endpoints (OpenAI itself, vLLM, Ollama, llama.cpp, LM Studio, and the hosted
services that speak the same protocol) go through the ``openai`` SDK, whose per-call overhead is
small; every other provider goes through LiteLLM, imported only when such a model is used. Both
SDKs' own retries are off: :class:`skate.llm.client.LLMClient` owns retrying.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from skate.llm.client import CallFailed, Reply, parse_retry_after
from skate.llm.spec import ModelSpec

_clients: dict[tuple, Any] = {}
_clients_lock = threading.Lock()


def send(spec: ModelSpec, messages: list[dict[str, Any]], n: int, seed: int) -> Reply:
    if spec.openai_compatible:
        return _send_openai(spec, messages, n, seed)
    return _send_litellm(spec, messages, n, seed)


# ------------------------------------------------------------------------------------- openai
def _openai_client(spec: ModelSpec):
    import openai

    key = (spec.base_url, spec.api_key(), tuple(sorted(spec.extra_headers.items())), spec.timeout_s)
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            client = openai.OpenAI(base_url=spec.base_url, api_key=key[1], max_retries=0,
                                   timeout=spec.timeout_s, default_headers=dict(spec.extra_headers) or None)
            _clients[key] = client
        return client


def _send_openai(spec: ModelSpec, messages: list[dict[str, Any]], n: int, seed: int) -> Reply:
    import openai

    client = _openai_client(spec)
    body: dict[str, Any] = {"model": spec.name, "messages": messages, "temperature": spec.temperature,
                            "max_tokens": spec.max_tokens, "seed": seed}
    if n > 1:
        body["n"] = n
    try:
        raw = client.chat.completions.with_raw_response.create(**body, extra_body=spec.extra_body or None)
    except openai.APITimeoutError as exc:
        raise CallFailed("timeout", f"no reply within {spec.timeout_s}s", retryable=True) from exc
    except openai.APIConnectionError as exc:
        raise CallFailed("transport", str(exc.__cause__ or exc)[:200], retryable=True) from exc
    except openai.APIStatusError as exc:
        raise _status_error(exc.status_code, exc.response.headers.get("retry-after"),
                            exc.response.text) from exc
    try:
        data = json.loads(raw.http_response.text)
        choices = sorted(data["choices"], key=lambda c: c.get("index", 0))
        texts = [c["message"]["content"] for c in choices]
        if not texts or not all(isinstance(t, str) for t in texts):
            raise ValueError("no text in the choices")
        usage = data.get("usage") or {}
        return Reply(texts, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        body_text = raw.http_response.text[:120]
        raise CallFailed("malformed", f"unreadable reply body ({exc}): {body_text!r}", retryable=True) from exc


def _status_error(status: int, retry_after: str | None, text: str) -> CallFailed:
    detail = f"HTTP {status}: {text[:200]}"
    if status == 429:
        return CallFailed("rate_limit", detail, True, parse_retry_after(retry_after), status)
    if status >= 500 or status in (408, 409):
        return CallFailed("server", detail, True, parse_retry_after(retry_after), status)
    return CallFailed("client", detail, False, None, status)  # 400/401/403/404/422: fix the request


# ------------------------------------------------------------------------------------ litellm
def _send_litellm(spec: ModelSpec, messages: list[dict[str, Any]], n: int, seed: int) -> Reply:
    import skate.llm  # noqa: F401  (sets LiteLLM's offline price table before the import)
    import litellm

    kwargs: dict[str, Any] = {"model": spec.model, "messages": messages, "temperature": spec.temperature,
                              "max_tokens": spec.max_tokens, "timeout": spec.timeout_s, "num_retries": 0,
                              "n": n, "seed": seed, "drop_params": True}
    if spec.api_base:
        kwargs["api_base"] = spec.api_base
    if spec.api_key_env:
        kwargs["api_key"] = spec.api_key()
    if spec.extra_headers:
        kwargs["extra_headers"] = dict(spec.extra_headers)
    kwargs.update(spec.extra_body)
    try:
        resp = litellm.completion(**kwargs)
    except litellm.exceptions.Timeout as exc:
        raise CallFailed("timeout", f"no reply within {spec.timeout_s}s", retryable=True) from exc
    except litellm.exceptions.APIConnectionError as exc:
        raise CallFailed("transport", str(exc)[:200], retryable=True) from exc
    except litellm.exceptions.APIError as exc:  # base of the status-code errors
        status = int(getattr(exc, "status_code", 500) or 500)
        response = getattr(exc, "response", None)
        retry_after = response.headers.get("retry-after") if response is not None else None
        raise _status_error(status, retry_after, str(exc)) from exc
    try:
        texts = [c.message.content for c in resp.choices]
        if not texts or not all(isinstance(t, str) for t in texts):
            raise ValueError("no text in the choices")
        usage = getattr(resp, "usage", None)
        return Reply(texts, int(getattr(usage, "prompt_tokens", 0) or 0),
                     int(getattr(usage, "completion_tokens", 0) or 0))
    except (ValueError, AttributeError, TypeError) as exc:
        raise CallFailed("malformed", f"unreadable reply ({exc})", retryable=True) from exc

"""Sending one chat request to a provider and classifying what went wrong.

OpenAI-compatible endpoints (OpenAI itself, vLLM, Ollama, llama.cpp, LM Studio, and the hosted
services that speak the same protocol) get a plain JSON POST through ``urllib3``, whose per-call
cost is about a quarter of a millisecond of CPU (less than half of httpx's; see BENCHMARKS.md).
Every other provider goes through LiteLLM, imported only when such a model is used, with its own
retries off: :class:`skate.llm.client.LLMClient` owns retrying.

A ``response_format`` (structured output, see :mod:`skate.llm.modules`) is passed through as it
is. Each reply carries every choice's ``finish_reason`` ("length" when ``max_tokens`` cut it),
and a choice whose content is ``null`` is an empty reply (""), as a model whose chat template
produces nothing gives: the game reads it as unparsable, it is not retried. Thinking returned
beside the content (``reasoning_content``, ``reasoning``, thinking blocks) comes back apart, with
the reasoning tokens the usage counts (:mod:`skate.llm.thinking`); thinking written inline in the
content is the client's to take out.

An option whose value is ``None`` is left out of the request, as is the request field of that
name (how the client sends a model only the parameters it takes: :mod:`skate.llm.shaping`).
"""

from __future__ import annotations

import json
import threading
from typing import Any

from skate.llm.spec import ModelSpec
from skate.llm.thinking import from_message, thinking_tokens
from skate.llm.wire import CallFailed, Reply, compact_logprobs, parse_retry_after

_clients: dict[tuple, Any] = {}
_clients_lock = threading.Lock()


def send(
    spec: ModelSpec,
    messages: list[dict[str, Any]],
    n: int,
    seed: int,
    response_format: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
) -> Reply:
    """One chat request for ``n`` choices. ``options`` are further request fields, sent as they
    are: ``stop`` (sequences that end a reply), ``logprobs``/``top_logprobs``, ``max_tokens``
    (instead of the model's)."""
    if spec.openai_compatible:
        return _send_openai(spec, messages, n, seed, response_format, options)
    return _send_litellm(spec, messages, n, seed, response_format, options)


# ------------------------------------------------------------------------------------- openai
def _pool(spec: ModelSpec):
    import urllib3

    headers = {"Authorization": f"Bearer {spec.api_key()}", "Content-Type": "application/json", **spec.extra_headers}
    key = (spec.base_url, tuple(sorted(headers.items())), spec.timeout_s)
    with _clients_lock:
        pool = _clients.get(key)
        if pool is None:
            pool = (
                urllib3.PoolManager(
                    maxsize=256, retries=False, headers=headers, timeout=urllib3.Timeout(total=spec.timeout_s)
                ),
                spec.base_url + "/chat/completions",
            )
            _clients[key] = pool
        return pool


def close_pools() -> None:
    """Close every kept-alive connection (e.g. between tests that each start a server on a new
    port: otherwise each leaves its pool's sockets open for the life of the process)."""
    with _clients_lock:
        pools = list(_clients.values())
        _clients.clear()
    for pool, _ in pools:
        pool.clear()


def _send_openai(
    spec: ModelSpec,
    messages: list[dict[str, Any]],
    n: int,
    seed: int,
    response_format: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
) -> Reply:
    """POST /chat/completions with urllib3: the protocol is plain JSON, and a typed SDK's own
    request building costs more per call than everything else in the engine together."""
    body: dict[str, Any] = {
        "model": spec.name,
        "messages": messages,
        "temperature": spec.temperature,
        "max_tokens": spec.max_tokens,
        "seed": seed,
        **spec.request_fields(),
        **(options or {}),
    }
    if n > 1:
        body["n"] = n
    if response_format is not None:
        body["response_format"] = response_format
    body = {k: v for k, v in body.items() if v is not None}
    pool, url = _pool(spec)
    text = _post(spec, pool, url, body)
    try:
        data = json.loads(text)
        choices = sorted(data["choices"], key=lambda c: c.get("index", 0))
        read = [_content(c["message"]) for c in choices]
        texts = [t for t, _ in read]
        if not texts or not all(isinstance(t, str) for t in texts):
            raise ValueError("no text in the choices")
        usage = data.get("usage") or {}
        details = usage.get("prompt_tokens_details") or {}
        logprobs = (
            [compact_logprobs((c.get("logprobs") or {}).get("content")) for c in choices]
            if options and options.get("logprobs")
            else None
        )
        thinking = [t for _, t in read]
        return Reply(
            texts,
            int(usage.get("prompt_tokens") or 0),
            int(usage.get("completion_tokens") or 0),
            [c.get("finish_reason") for c in choices],
            cached_prompt_tokens=int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0,
            logprobs=logprobs,
            thinking=thinking if any(thinking) else None,
            thinking_tokens=thinking_tokens(usage),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CallFailed("malformed", f"unreadable reply body ({exc}): {text[:120]!r}", retryable=True) from exc


def post_json(spec: ModelSpec, url: str, body: dict[str, Any]) -> str:
    """POST ``body`` to ``url`` on the endpoint's connection pool and return the 200 reply's text;
    a failure raises :class:`CallFailed`, classified (transport, timeout, status) for the retry
    policy. Chat completions and embeddings both go through here."""
    return _post(spec, _pool(spec)[0], url, body)


def _post(spec: ModelSpec, pool: Any, url: str, body: dict[str, Any]) -> str:
    """:func:`post_json` on the endpoint's pool, looked up once per request by the caller."""
    import urllib3

    try:
        resp = pool.request("POST", url, body=json.dumps(body).encode())
    except urllib3.exceptions.NewConnectionError as exc:  # (a subclass of ConnectTimeoutError)
        raise CallFailed("transport", f"cannot connect to {spec.base_url}: {exc}"[:200], retryable=True) from exc
    except urllib3.exceptions.TimeoutError as exc:
        raise CallFailed("timeout", f"no reply within {spec.timeout_s}s", retryable=True) from exc
    except urllib3.exceptions.HTTPError as exc:
        raise CallFailed("transport", f"{type(exc).__name__}: {exc}"[:200], retryable=True) from exc
    text = resp.data.decode("utf-8", "replace")
    if resp.status != 200:
        raise _status_error(resp.status, resp.headers.get("retry-after"), text)
    return text


def _content(message: Any) -> tuple[Any, str | None]:
    """A choice's text and the thinking given beside it; ``null`` content (no text at all) is an
    empty reply, and so is a message with thinking and no content field."""
    if isinstance(message, dict):
        content, thinking = from_message(message)
        if "content" in message or thinking is not None:
            return ("" if content is None else content), thinking
    raise KeyError("content")


def _status_error(status: int, retry_after: str | None, text: str) -> CallFailed:
    detail, body = f"HTTP {status}: {text[:200]}", text[:4000]
    if status == 429:
        return CallFailed("rate_limit", detail, True, parse_retry_after(retry_after), status, body)
    if status >= 500 or status in (408, 409):
        return CallFailed("server", detail, True, parse_retry_after(retry_after), status, body)
    return CallFailed("client", detail, False, None, status, body)  # 400/401/403/404/422: fix the request


# ------------------------------------------------------------------------------------ litellm
def _send_litellm(
    spec: ModelSpec,
    messages: list[dict[str, Any]],
    n: int,
    seed: int,
    response_format: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
) -> Reply:
    import litellm  # skate.llm (this module's package) has set its offline price table

    litellm.suppress_debug_info = True  # no "Give Feedback" banner on stdout per error

    kwargs: dict[str, Any] = {
        "model": spec.model,
        "messages": messages,
        "temperature": spec.temperature,
        "max_tokens": spec.max_tokens,
        "timeout": spec.timeout_s,
        "num_retries": 0,
        "n": n,
        "seed": seed,
        "drop_params": True,
    }
    if spec.api_base:
        kwargs["api_base"] = spec.api_base
    if spec.api_key_env:
        kwargs["api_key"] = spec.api_key()
    if spec.extra_headers:
        kwargs["extra_headers"] = dict(spec.extra_headers)
    if response_format is not None:
        kwargs["response_format"] = response_format
    kwargs.update(spec.request_fields())
    kwargs.update(options or {})
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    try:
        resp = litellm.completion(**kwargs)
    except Exception as exc:  # LiteLLM's errors do not share one base class
        raise _litellm_error(exc, spec) from exc
    try:
        read = [from_message(c.message) for c in resp.choices]
        texts = ["" if t is None else t for t, _ in read]
        thinking = [t for _, t in read]
        if not texts or not all(isinstance(t, str) for t in texts):
            raise ValueError("no text in the choices")
        usage = getattr(resp, "usage", None)
        details = getattr(usage, "prompt_tokens_details", None)
        logprobs = None
        if options and options.get("logprobs"):
            logprobs = []
            for c in resp.choices:
                lp = getattr(c, "logprobs", None)
                content = getattr(lp, "content", None) if lp is not None else None
                logprobs.append(
                    compact_logprobs(
                        [x.model_dump() if hasattr(x, "model_dump") else x for x in content] if content else None
                    )
                )
        return Reply(
            texts,
            int(getattr(usage, "prompt_tokens", 0) or 0),
            int(getattr(usage, "completion_tokens", 0) or 0),
            [getattr(c, "finish_reason", None) for c in resp.choices],
            cached_prompt_tokens=int(getattr(details, "cached_tokens", 0) or 0),
            logprobs=logprobs,
            thinking=thinking if any(thinking) else None,
            thinking_tokens=thinking_tokens(usage),
        )
    except (ValueError, AttributeError, TypeError) as exc:
        raise CallFailed("malformed", f"unreadable reply ({exc})", retryable=True) from exc


def _litellm_error(exc: Exception, spec: ModelSpec) -> CallFailed:
    import litellm

    if isinstance(exc, litellm.exceptions.Timeout):
        return CallFailed("timeout", f"no reply within {spec.timeout_s}s", retryable=True)
    if isinstance(exc, litellm.exceptions.APIConnectionError):
        return CallFailed("transport", str(exc)[:200], retryable=True)
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        headers = getattr(getattr(exc, "response", None), "headers", None) or {}
        headers = headers or getattr(exc, "litellm_response_headers", None) or {}
        return _status_error(status, headers.get("retry-after"), str(exc))
    return CallFailed("error", f"{type(exc).__name__}: {exc}"[:300], retryable=False)

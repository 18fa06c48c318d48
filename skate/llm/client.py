"""Model calls with retries, a response cache, per-endpoint concurrency, and cost accounting.

One :class:`LLMClient` serves every LLM player in a run. A call asks for one or more *samples*
of the same request; each sample has an index and a seed, and the cache keys on the whole
request plus both, so repeated samples at temperature > 0 stay distinct while a re-run of the
same game replays from the cache without a single model call. Errors are never cached.

Failures are classified. Transport errors, timeouts, 429 (honouring ``Retry-After``), 5xx and
malformed bodies are retried with exponential backoff and jitter up to ``max_retries``; what
still fails, and what can never succeed (400, 401, 403, 404), comes back as a *void*
completion carrying the reason, never as an answer. The engine then leaves it out of every
estimate and rating.
"""

from __future__ import annotations

import base64
import email.utils
import hashlib
import json
import logging
import random
import threading
import time
from array import array
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skate.llm.spec import ModelSpec
from skate.records import StopRun

log = logging.getLogger(__name__)


# ------------------------------------------------------------------------------------- errors
class CallFailed(Exception):
    """One request failed. ``retryable`` says whether trying again can help."""

    def __init__(self, kind: str, detail: str, retryable: bool, retry_after: float | None = None,
                 status: int | None = None) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail, self.retryable = kind, detail, retryable
        self.retry_after, self.status = retry_after, status


class BudgetExceeded(StopRun):
    """The run's spending limit is reached: no new model calls are made."""


class EmbeddingFailed(StopRun):
    """Texts could not be embedded (a request that cannot succeed, or retries spent): the run
    stops cleanly, since no uniqueness test can be made without the vectors. ``error`` is the
    last :class:`CallFailed`."""

    def __init__(self, message: str, error: CallFailed) -> None:
        super().__init__(message)
        self.error = error


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


# ------------------------------------------------------------------------------------ results
@dataclass
class Reply:
    """What a provider returned for one request: one text per choice, and the token counts."""

    texts: list[str]
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class Completion:
    """One sample's outcome: a text, or void with the reason."""

    text: str | None
    void: str | None = None  # why there is no text (after retries): never a wrong answer
    cached: bool = False
    attempts: int = 0

    @property
    def ok(self) -> bool:
        return self.void is None


@dataclass
class Usage:
    calls: int = 0  # requests sent to a provider
    samples: int = 0  # completions asked for (cache hits included)
    cached: int = 0
    void: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "cost_usd": round(self.cost_usd, 6)}


# -------------------------------------------------------------------------------------- cache
class ResponseCache:
    """Successful completions on disk (``diskcache``), keyed on request, sample index and seed."""

    def __init__(self, folder: str | Path) -> None:
        import diskcache

        self.folder = Path(folder).expanduser()
        self.folder.mkdir(parents=True, exist_ok=True)
        self._db = diskcache.Cache(str(self.folder))

    @staticmethod
    def key(spec: ModelSpec, messages: Sequence[dict[str, Any]], index: int, seed: int) -> str:
        blob = json.dumps({"endpoint": spec.request_identity(), "messages": list(messages),
                           "sample": index, "seed": seed}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    def get(self, key: str) -> str | None:
        value = self._db.get(key)
        return value if isinstance(value, str) else None

    def put(self, key: str, text: str) -> None:
        self._db.set(key, text)

    @staticmethod
    def embedding_key(spec: ModelSpec, text: str) -> str:
        blob = json.dumps({"endpoint": spec.request_identity(), "embed": text}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    def __len__(self) -> int:
        return len(self._db)

    def close(self) -> None:
        self._db.close()


# ---------------------------------------------------------------------------------- prices
@dataclass(frozen=True)
class Price:
    input_per_mtok: float = 0.0  # USD per million prompt tokens
    output_per_mtok: float = 0.0

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_mtok + completion_tokens * self.output_per_mtok) / 1e6


# ------------------------------------------------------------------------------------- client
Transport = Callable[[ModelSpec, list[dict[str, Any]], int, int], Reply]
# Embeddings: (spec, texts) -> (one vector per text, prompt tokens); raises CallFailed.
EmbedTransport = Callable[[ModelSpec, list[str]], tuple[list[list[float]], int]]


def _pack(vector: Sequence[float]) -> str:
    """A vector as float32 in base64: a cache value (a sixth of its JSON)."""
    return base64.b64encode(array("f", vector).tobytes()).decode("ascii")


def _unpack(text: str) -> list[float]:
    return array("f", base64.b64decode(text)).tolist()


@dataclass
class RetryPolicy:
    max_retries: int = 4  # retries after the first try
    backoff_s: float = 0.5  # first backoff; doubles each retry, with jitter
    max_backoff_s: float = 30.0
    max_retry_after_s: float = 120.0  # longest Retry-After honoured before giving up


class LLMClient:
    """Thread-safe: every LLM player of a run shares one client."""

    def __init__(self, cache: ResponseCache | None = None, retry: RetryPolicy | None = None,
                 concurrency: int = 8, endpoint_concurrency: dict[str, int] | None = None,
                 prices: dict[str, Price] | None = None, budget_usd: float | None = None,
                 transport: Transport | None = None, on_void: Callable[[dict], None] | None = None) -> None:
        self.cache = cache
        self.retry = retry or RetryPolicy()
        self.concurrency = concurrency
        self.endpoint_concurrency = dict(endpoint_concurrency or {})
        self.prices = dict(prices or {})
        self.budget_usd = budget_usd
        self._transport = transport
        self.on_void = on_void
        self._lock = threading.Lock()
        self._slots: dict[str, threading.BoundedSemaphore] = {}
        self.usage: dict[str, Usage] = {}
        self._pool = ThreadPoolExecutor(max_workers=256, thread_name_prefix="llm")
        self._request_pool = ThreadPoolExecutor(max_workers=256, thread_name_prefix="llm-request")
        self._rand = random.Random()
        self._warned_prices: set[str] = set()

    # -- bookkeeping
    def _usage(self, player: str) -> Usage:
        with self._lock:
            return self.usage.setdefault(player, Usage())

    def total(self) -> Usage:
        with self._lock:
            out = Usage()
            for u in self.usage.values():
                for k, v in u.__dict__.items():
                    setattr(out, k, getattr(out, k) + v)
            return out

    @property
    def spent_usd(self) -> float:
        return self.total().cost_usd

    def _slot(self, spec: ModelSpec) -> threading.BoundedSemaphore:
        key = spec.endpoint_key
        with self._lock:
            if key not in self._slots:
                limit = self.endpoint_concurrency.get(key, self.endpoint_concurrency.get(
                    spec.provider, self.concurrency))
                self._slots[key] = threading.BoundedSemaphore(max(1, int(limit)))
            return self._slots[key]

    def price(self, spec: ModelSpec) -> Price:
        for key in (spec.model, spec.name):
            if key in self.prices:
                return self.prices[key]
        if spec.hosted and spec.model not in self._warned_prices:
            self._warned_prices.add(spec.model)
            log.warning("no price for %s in llm.prices: its cost is counted as 0", spec.model)
        return Price()

    def _transport_for(self, spec: ModelSpec) -> Transport:
        if self._transport is not None:
            return self._transport
        from skate.llm.transport import send

        return send

    # -- calls
    def complete(self, spec: ModelSpec, messages: list[dict[str, Any]],
                 samples: Sequence[tuple[int, int]], player: str) -> list[Completion]:
        """Get one completion per ``(index, seed)`` sample of the same request."""
        usage = self._usage(player)
        out: list[Completion | None] = [None] * len(samples)
        keys = [ResponseCache.key(spec, messages, i, s) for i, s in samples] if self.cache is not None else []
        missing: list[int] = []
        for pos in range(len(samples)):
            hit = self.cache.get(keys[pos]) if self.cache is not None else None
            if hit is not None:
                out[pos] = Completion(hit, cached=True)
            else:
                missing.append(pos)
        with self._lock:
            usage.samples += len(samples)
            usage.cached += len(samples) - len(missing)
        if missing:
            if self.budget_usd is not None and self.spent_usd >= self.budget_usd:
                raise BudgetExceeded(f"spent ${self.spent_usd:.4f} of the ${self.budget_usd:.4f} budget")
            groups = ([missing] if spec.can_batch_samples and len(missing) > 1
                      else [[pos] for pos in missing])
            # The first group runs in this thread; any others on the request pool, whose tasks
            # never wait on other tasks (so the pools cannot starve each other).
            futures = [self._request_pool.submit(self._request, spec, messages, [samples[p] for p in g], player)
                       for g in groups[1:]]
            first = self._request(spec, messages, [samples[p] for p in groups[0]], player)
            results = [first] + [f.result() for f in futures]
            for group, got in zip(groups, results, strict=True):
                for pos, comp in zip(group, got, strict=True):
                    out[pos] = comp
                    if comp.ok and self.cache is not None:
                        self.cache.put(keys[pos], comp.text)
        return out  # type: ignore[return-value]

    def complete_many(self, spec: ModelSpec, requests: Sequence[tuple[list[dict[str, Any]], Sequence[tuple[int, int]]]],
                      player: str) -> list[list[Completion]]:
        """Several requests at once (e.g. every sample of a question), results in order."""
        if len(requests) == 1:
            return [self.complete(spec, requests[0][0], requests[0][1], player)]
        futures = [self._pool.submit(self.complete, spec, m, s, player) for m, s in requests]
        return [f.result() for f in futures]

    def _request(self, spec: ModelSpec, messages: list[dict[str, Any]],
                 samples: list[tuple[int, int]], player: str) -> list[Completion]:
        """Send one request for these samples (n = len(samples)), retrying what may pass."""
        usage = self._usage(player)
        send = self._transport_for(spec)
        n, seed = len(samples), samples[0][1]
        attempt = 0
        while True:
            attempt += 1
            try:
                with self._slot(spec):
                    with self._lock:
                        usage.calls += 1
                    reply = send(spec, messages, n, seed)
                if len(reply.texts) < n:  # the provider ignored n: ask for the rest one by one
                    got = [Completion(t, attempts=attempt) for t in reply.texts]
                    rest = [c for s in samples[len(reply.texts):] for c in self._request(spec, messages, [s], player)]
                    self._charge(spec, usage, reply)
                    return got + rest
                self._charge(spec, usage, reply)
                return [Completion(t, attempts=attempt) for t in reply.texts[:n]]
            except CallFailed as exc:
                delay = self._retry_delay(exc, attempt)
                if delay is None:
                    return self._void(spec, player, usage, samples, exc, attempt)
                with self._lock:
                    usage.retries += 1
                log.debug("%s (%s) %s; retry %d in %.2fs", player, spec.model, exc, attempt, delay)
                time.sleep(delay)

    def embed(self, spec: ModelSpec, texts: Sequence[str], player: str, send: EmbedTransport,
              batch_size: int = 256) -> list[list[float]]:
        """One embedding vector per text, through ``send`` (an :data:`EmbedTransport`).

        Like :meth:`complete`: vectors come from the cache when there (keyed on the endpoint and
        the text), the rest are asked for ``batch_size`` texts per request under the endpoint's
        concurrency slot, retried by the same policy, counted in ``usage[player]`` (``samples``
        texts, ``cached`` hits, ``calls`` requests, prompt tokens and cost at the model's price)
        and held to the budget. Vectors are float32 values whether cached or not, so a re-run
        from the cache gives the same numbers. A request that cannot succeed, or still fails
        after the retries, raises :class:`EmbeddingFailed` (never a made-up vector).
        """
        usage = self._usage(player)
        out: list[list[float] | None] = [None] * len(texts)
        keys = [ResponseCache.embedding_key(spec, t) for t in texts] if self.cache is not None else []
        missing: list[int] = []
        for pos in range(len(texts)):
            hit = self.cache.get(keys[pos]) if self.cache is not None else None
            if hit is not None:
                out[pos] = _unpack(hit)
            else:
                missing.append(pos)
        with self._lock:
            usage.samples += len(texts)
            usage.cached += len(texts) - len(missing)
        for start in range(0, len(missing), max(1, batch_size)):
            if self.budget_usd is not None and self.spent_usd >= self.budget_usd:
                raise BudgetExceeded(f"spent ${self.spent_usd:.4f} of the ${self.budget_usd:.4f} budget")
            group = missing[start:start + max(1, batch_size)]
            vectors = self._embed_request(spec, [texts[p] for p in group], player, send)
            for pos, vec in zip(group, vectors, strict=True):
                packed = _pack(vec)
                out[pos] = _unpack(packed)
                if self.cache is not None:
                    self.cache.put(keys[pos], packed)
        return out  # type: ignore[return-value]

    def _embed_request(self, spec: ModelSpec, texts: list[str], player: str,
                       send: EmbedTransport) -> list[list[float]]:
        usage = self._usage(player)
        attempt = 0
        while True:
            attempt += 1
            try:
                with self._slot(spec):
                    with self._lock:
                        usage.calls += 1
                    vectors, tokens = send(spec, texts)
                if len(vectors) != len(texts):
                    raise CallFailed("malformed", f"{len(vectors)} vectors for {len(texts)} texts", retryable=True)
                self._charge(spec, usage, Reply([], tokens, 0))
                return vectors
            except CallFailed as exc:
                delay = self._retry_delay(exc, attempt)
                if delay is None:
                    raise EmbeddingFailed(f"embeddings from {spec.model} failed after {attempt} attempt(s): "
                                          f"{exc.kind}: {exc.detail}"[:400], exc) from exc
                with self._lock:
                    usage.retries += 1
                log.debug("%s (%s) %s; retry %d in %.2fs", player, spec.model, exc, attempt, delay)
                time.sleep(delay)

    def _retry_delay(self, exc: CallFailed, attempt: int) -> float | None:
        """How long to wait before trying again after ``exc`` on try ``attempt``; None: give up."""
        if not exc.retryable or attempt > self.retry.max_retries:
            return None
        delay = min(self.retry.max_backoff_s, self.retry.backoff_s * 2 ** (attempt - 1))
        delay *= 0.5 + self._rand.random() / 2  # jitter: callers that failed together spread out
        if exc.retry_after is not None:
            if exc.retry_after > self.retry.max_retry_after_s:
                return None
            delay = max(delay, exc.retry_after)
        return delay

    def _charge(self, spec: ModelSpec, usage: Usage, reply: Reply) -> None:
        cost = self.price(spec).cost(reply.prompt_tokens, reply.completion_tokens)
        with self._lock:
            usage.prompt_tokens += reply.prompt_tokens
            usage.completion_tokens += reply.completion_tokens
            usage.cost_usd += cost

    def _void(self, spec: ModelSpec, player: str, usage: Usage, samples: list[tuple[int, int]],
              exc: CallFailed, attempts: int) -> list[Completion]:
        reason = f"{exc.kind}: {exc.detail}"[:300]
        with self._lock:
            usage.void += len(samples)
            loud = usage.void <= 5 * len(samples)  # the first few per player; the event log has all
        log.log(logging.WARNING if loud else logging.DEBUG, "%s (%s): void after %d attempt(s): %s",
                player, spec.model, attempts, reason)
        if self.on_void is not None:
            self.on_void({"player": player, "model": spec.model, "kind": exc.kind, "status": exc.status,
                          "detail": exc.detail[:300], "attempts": attempts, "samples": len(samples)})
        return [Completion(None, void=reason, attempts=attempts) for _ in samples]

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._request_pool.shutdown(wait=False, cancel_futures=True)
        if self.cache is not None:
            self.cache.close()

"""What the model client (:class:`~skate.llm.client.LLMClient`) keeps and learns of each endpoint
it calls (:class:`Endpoints`, the client's base): the requests in flight to it (its slots and
thread pools), the structured-output form each model there takes (:class:`StructuredOutputRefused`
where ``llm.structured=on`` and none is), how many samples one request may ask for, and how a call
to it is retried (:class:`RetryPolicy`) or waits while it is down (:mod:`skate.llm.outage`)."""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from skate.llm.outage import Outages
from skate.llm.refusals import FORMATS, FormatRefused, OptionRefused, TooManySamples
from skate.llm.spec import ModelSpec
from skate.llm.usage import Accounts, Price, Usage
from skate.llm.wire import CallFailed
from skate.runlog.records import StopRun

log = logging.getLogger("skate.llm.client")  # its messages are the client's, under the client's logger


class StructuredOutputRefused(StopRun):
    """``llm.structured=on`` and a model's server refuses a JSON-schema ``response_format``."""


# The longest wait between two probes of a model that is down: the most its round waits once it is
# back (a probe is one request: every 10 s costs nothing beside a game's calls).
PROBE_EVERY_S = 10.0


@dataclass
class RetryPolicy:
    max_retries: int = 4  # retries after the first try
    backoff_s: float = 0.5  # first backoff; doubles each retry, with jitter
    max_backoff_s: float = 30.0
    max_retry_after_s: float = 120.0  # longest Retry-After honoured before giving up


class Endpoints(Accounts):
    """What the client keeps per endpoint (its base, over its :class:`~skate.llm.usage.Accounts`):
    concurrency, the structured-output form each model takes, the samples a request may ask for,
    retries and outages."""

    def __init__(
        self,
        prices: dict[str, Price] | None = None,
        budget_usd: float | None = None,
        retry: RetryPolicy | None = None,
        concurrency: int = 8,
        endpoint_concurrency: dict[str, int] | None = None,
        structured: str = "off",
        outage_wait_s: float = 0.0,
        on_outage: Callable[[dict], None] | None = None,
    ) -> None:
        super().__init__(prices, budget_usd)
        self.structured = structured
        self.retry = retry or RetryPolicy()
        self.concurrency = concurrency
        self.endpoint_concurrency = dict(endpoint_concurrency or {})
        self._slots: dict[str, threading.BoundedSemaphore] = {}
        # Threads per endpoint, as many as its requests in flight: one pool for the calls of
        # complete_many, one for the extra requests of a call split into several. A pool of one
        # size for every endpoint grew a thread for each call queued behind a busy endpoint's
        # slots, up to its cap (a long game's memory rose with them: docs/benchmarks/load.md).
        self._pools: dict[tuple[str, str], ThreadPoolExecutor] = {}
        self._rand = random.Random()
        self._forms: dict[tuple[str, str], int] = {}  # (model, endpoint) -> index in FORMATS
        self._max_n: dict[str, int] = {}  # endpoint -> the most samples per request it takes (learnt)
        self._warned: set[tuple[str, str, str]] = set()
        # Probes of a down endpoint: the first after the backoff the retries would have waited next,
        # then twice as long each time, up to PROBE_EVERY_S (or max_backoff_s if shorter).
        r = self.retry
        every = min(r.max_backoff_s, PROBE_EVERY_S)
        self.outages = Outages(outage_wait_s, min(every, r.backoff_s * 2**r.max_retries), every, on_outage)

    def _limit(self, spec: ModelSpec) -> int:
        """Requests in flight to ``spec``'s endpoint (by its api_base or provider, else the default)."""
        return max(
            1,
            int(
                self.endpoint_concurrency.get(
                    spec.endpoint_key, self.endpoint_concurrency.get(spec.provider, self.concurrency)
                )
            ),
        )

    def _pool_for(self, spec: ModelSpec, kind: str) -> ThreadPoolExecutor:
        """The ``kind`` ("call" or "request") thread pool of ``spec``'s endpoint, sized by its limit."""
        key = (kind, spec.endpoint_key)
        with self._lock:
            pool = self._pools.get(key)
            if pool is None:
                pool = self._pools[key] = ThreadPoolExecutor(
                    max_workers=self._limit(spec), thread_name_prefix=f"llm-{kind}"
                )
            return pool

    def _slot(self, spec: ModelSpec) -> threading.BoundedSemaphore:
        key = spec.endpoint_key
        limit = self._limit(spec)
        with self._lock:
            if key not in self._slots:
                self._slots[key] = threading.BoundedSemaphore(limit)
            return self._slots[key]

    # -- structured output
    def _endpoint(self, spec: ModelSpec) -> tuple[str, str]:
        return (spec.model, spec.base_url)

    def wants_structured(self, spec: ModelSpec) -> bool:
        """Whether calls to this model are sent with a JSON schema now (``llm.structured`` is
        not off, and its server has not refused one this run)."""
        if self.structured == "off":
            return False
        with self._lock:
            return FORMATS[self._forms.get(self._endpoint(spec), 0)] != "text"

    def structured_formats(self) -> dict[str, str]:
        """Per model (and endpoint) called with structured output in mind: the form it takes
        (json_schema, json_object) or "text" where it was refused."""
        with self._lock:
            return {f"{m} at {e}" if e else m: FORMATS[i] for (m, e), i in sorted(self._forms.items())}

    def _refused(self, spec: ModelSpec, form: int, exc: CallFailed) -> None:
        """A server refused structured output in ``FORMATS[form]``: try the next form, and after
        the last, the text format (``auto``) or stop the run (``on``)."""
        where = f"{spec.model} at {spec.base_url}" if spec.base_url else spec.model
        with self._lock:
            key = self._endpoint(spec)
            if self._forms.get(key, 0) == form:
                self._forms[key] = form + 1
            now = self._forms[key]
        if FORMATS[now] == "text" and self.structured == "on":
            raise StructuredOutputRefused(
                f"{where} refused structured output (a JSON-schema response_format): {exc.kind}: {exc.detail}"[:400]
                + "; set llm.structured=auto (text where refused) or llm.structured=off"
            )
        if FORMATS[now] == "text":
            self._warn_once(
                spec,
                "text",
                "%s refused structured output (%s); its calls use the text format for "
                "the rest of the run (llm.structured=auto)",
                where,
                exc.detail[:160],
            )
        else:
            log.debug(
                "%s refused response_format %s (%s); trying %s", where, FORMATS[form], exc.detail[:160], FORMATS[now]
            )

    def _warn_once(self, spec: ModelSpec, what: str, msg: str, *args: Any) -> None:
        key = (spec.model, spec.base_url, what)
        with self._lock:
            if key in self._warned:
                return
            self._warned.add(key)
        log.warning(msg, *args)

    # -- calls: samples per request, retries, outages
    def max_n(self, spec: ModelSpec) -> int | None:
        """The most samples one request to ``spec`` asks for: 1 where the provider takes no ``n``,
        else the smaller of ``spec.max_n`` and what its server said it takes (None: any)."""
        if not spec.can_batch_samples:
            return 1
        with self._lock:
            learnt = self._max_n.get(spec.endpoint_key)
        limits = [x for x in (spec.max_n, learnt) if x]
        return min(limits) if limits else None

    def _retrying(
        self,
        spec: ModelSpec,
        player: str,
        usage: Usage,
        once: Callable[[int], Any],
        give_up: Callable[[CallFailed, int], Any],
    ) -> Any:
        """``once(attempt)`` for attempt 1, 2, ... until it returns, waiting out the retry policy's
        backoff after each :class:`CallFailed` that may pass; ``give_up(exc, attempts)`` when one
        cannot (not retryable, or out of tries). While the endpoint is down (:mod:`skate.llm.outage`)
        the call waits for it instead, and goes on with a fresh retry budget when it answers.
        Chat requests and embeddings share it."""
        outages = self.outages
        call = outages.call(self._endpoint(spec), player)
        attempt = tries = 0
        try:
            while True:
                outages.before(call)
                attempt += 1
                tries += 1
                sent = time.monotonic()
                try:
                    result = once(attempt)
                except CallFailed as exc:
                    delay = self._retry_delay(exc, tries)
                    if outages.failed(call, exc, exhausted=delay is None):
                        tries = 0
                        continue
                    if delay is None:
                        return give_up(exc, attempt)
                    with self._lock:
                        usage.retries += 1
                    log.debug("%s (%s) %s; retry %d in %.2fs", player, spec.model, exc, tries, delay)
                    time.sleep(delay)
                    continue
                except (FormatRefused, TooManySamples, OptionRefused):
                    outages.answered(call, sent)  # a refusal of something asked for: the server is there
                    raise
                outages.answered(call, sent)
                return result
        finally:
            outages.leave(call)

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

    def stop_waiting(self) -> None:
        """The run is stopping: calls waiting for a model that is down end now, and so do those
        that would (:class:`~skate.llm.outage.ModelUnreachable`); other calls go on."""
        self.outages.close()

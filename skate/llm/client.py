"""Model calls with retries, a response cache, per-endpoint concurrency, and cost accounting.

One :class:`LLMClient` serves every LLM player in a run. A call asks for one or more *samples*
of the same request; each sample has an index and a seed, and the cache keys on the whole
request plus both, so repeated samples at temperature > 0 stay distinct while a re-run of the
same game replays from the cache without a single model call. Errors are never cached.

Structured output (``llm.structured``: ``auto``, ``on``, ``off``): a call may carry the
request twice over, as text-format messages and as JSON-format messages with a JSON schema for
``response_format`` (:meth:`LLMClient.complete`'s ``structured``). With ``auto`` and ``on`` the
schema is sent; a server that refuses it (HTTP 400/422 naming ``response_format`` or the schema,
as a server without JSON-schema support answers, or LiteLLM's unsupported-parameter error) is
asked once in llama-cpp-python's form (``{"type": "json_object", "schema": ...}``), and if it
refuses that too, ``auto`` remembers it for that model and endpoint for the rest of the run
(one warning) and sends the text format from then on, while ``on`` stops the run
(:class:`~skate.llm.endpoints.StructuredOutputRefused`). ``off`` never sends a schema. The response cache keys on
the ``response_format`` sent, so a structured and a text reply to the same request never share
an entry. Usage counts, per player, the calls sent with a schema (``structured``), the replies
cut at ``max_tokens`` (``cut``, ``finish_reason`` "length") and the empty ones (``empty``).

Failures are classified. Transport errors, timeouts, 429 (honouring ``Retry-After``), 5xx and
malformed bodies are retried with exponential backoff and jitter up to ``max_retries``; what
still fails, and what can never succeed (400, 401, 403, 404), comes back as a *void*
completion carrying the reason, never as an answer. The engine then leaves it out of every
estimate and rating. One exception, with ``outage_wait_s`` > 0: an endpoint that stops answering
altogether (no connection, no reply in time, 5xx past the retries, while it answers no other
call) is *down*, and its calls wait for it instead of being void (:mod:`skate.llm.outage`); if it
does not answer within ``outage_wait_s`` the run stops cleanly
(:class:`~skate.llm.outage.ModelUnreachable`).
Chat requests and embeddings share these rules (:meth:`LLMClient._retrying`).

The client's bases hold what it counts (:class:`~skate.llm.usage.Accounts`: usage, prices, cost)
and what it keeps of each endpoint (:class:`~skate.llm.endpoints.Endpoints`: concurrency, the
structured-output forms, retries and outages).
"""

from __future__ import annotations

import contextvars
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import wait
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from skate.llm.cache import ResponseCache, pack, unpack
from skate.llm.endpoints import Endpoints, RetryPolicy
from skate.llm.refusals import (
    FORMATS,
    STRUCTURED_MODES,
    FormatRefused,
    OptionRefused,
    TooManySamples,
    as_format,
    is_format_refusal,
    n_limit,
    refused_option,
)
from skate.llm.shaping import Shaper, apply_stops, refusal, shaped
from skate.llm.spec import ModelSpec
from skate.llm.thinking import share_of, split_inline
from skate.llm.transport import send
from skate.llm.usage import BudgetExceeded, Price, Usage
from skate.llm.wire import CallFailed, Reply
from skate.runlog.records import StopRun

log = logging.getLogger(__name__)


# ------------------------------------------------------------------------------------- errors
class EmbeddingFailed(StopRun):
    """Texts could not be embedded (a request that cannot succeed, or retries spent): the run
    stops cleanly, since no uniqueness test can be made without the vectors. ``error`` is the
    last :class:`CallFailed`."""

    def __init__(self, message: str, error: CallFailed) -> None:
        super().__init__(message)
        self.error = error


# ------------------------------------------------------------------------------------ results
@dataclass
class Completion:
    """One sample's outcome: a text, or void with the reason."""

    text: str | None
    void: str | None = None  # why there is no text (after retries): never a wrong answer
    cached: bool = False
    attempts: int = 0
    finish_reason: str | None = None  # "length": the reply was cut at max_tokens
    structured: bool = False  # asked for with a JSON schema (the reply is a JSON object)
    logprobs: list[dict] | None = None  # each generated token's log-probability and alternatives, when asked for
    thinking: str | None = None  # what the model thought before ``text`` (taken out of it, or given apart)
    thinking_cut: bool = False  # cut at max_tokens while still thinking: no answer (text is "")

    @property
    def ok(self) -> bool:
        return self.void is None

    @property
    def cut(self) -> bool:
        return self.finish_reason == "length"


# ------------------------------------------------------------------------------------- client
class Transport(Protocol):
    """How one chat request is sent (:func:`skate.llm.transport.send`, or a test's own): the
    request's structured-output form and further fields as keywords, when it has them."""

    def __call__(
        self,
        spec: ModelSpec,
        messages: list[dict[str, Any]],
        n: int,
        seed: int,
        /,
        response_format: dict[str, Any] | None = None,
        options: dict[str, Any] | None = None,
    ) -> Reply: ...


# A request's chat messages, or a function that makes them (called only if they are sent).
Messages = list[dict[str, Any]] | Callable[[], list[dict[str, Any]]]


def _made(messages: Messages) -> list[dict[str, Any]]:
    return messages() if callable(messages) else messages


_T = TypeVar("_T")


def _filled(slots: list[_T | None]) -> list[_T]:
    """``slots``, every one of which has been filled (one left None is a bug of the caller's)."""
    filled = [x for x in slots if x is not None]
    if len(filled) != len(slots):
        raise AssertionError(f"{len(slots) - len(filled)} of {len(slots)} slots left unfilled")
    return filled


def _batches(positions: list[int], size: int | None) -> list[list[int]]:
    """``positions`` in requests of at most ``size`` samples each (None: all in one)."""
    size = max(1, size or len(positions) or 1)
    return [positions[i : i + size] for i in range(0, len(positions), size)]


# Embeddings: (spec, texts) -> (one vector per text, prompt tokens); raises CallFailed.
EmbedTransport = Callable[[ModelSpec, list[str]], tuple[list[list[float]], int]]


class LLMClient(Endpoints):
    """Thread-safe: every LLM player of a run shares one client."""

    def __init__(
        self,
        cache: ResponseCache | None = None,
        retry: RetryPolicy | None = None,
        concurrency: int = 8,
        endpoint_concurrency: dict[str, int] | None = None,
        prices: dict[str, Price] | None = None,
        budget_usd: float | None = None,
        transport: Transport | None = None,
        on_void: Callable[[dict], None] | None = None,
        structured: str = "off",
        outage_wait_s: float = 0.0,
        on_outage: Callable[[dict], None] | None = None,
        on_adjust: Callable[[dict], None] | None = None,
        on_thinking: Callable[[dict], None] | None = None,
        on_reply: Callable[[dict], None] | None = None,
    ) -> None:
        """``outage_wait_s``: how long the calls to an endpoint that stopped answering wait for it
        before the run stops (0: they do not wait; a call that outlasts its retries is void);
        ``on_outage``: where each change of an outage is told (:mod:`skate.llm.outage`);
        ``on_adjust``: where each parameter a model is sent differently is told
        (:mod:`skate.llm.shaping`); ``on_thinking``: where each new reply's thinking goes
        (``{player, model, index, seed, thinking, answer, finish_reason}``), to be kept for a
        person to read; ``on_reply``: where every completion goes, served from the cache or not
        (``{player, model, purpose, index, seed, text, thinking, finish, cached, void}``), in the
        caller's thread (:mod:`skate.runlog.replies` ties it to the task it served)."""
        if structured not in STRUCTURED_MODES:
            raise ValueError(f"llm.structured={structured!r}: use one of {', '.join(STRUCTURED_MODES)}")
        super().__init__(
            prices, budget_usd, retry, concurrency, endpoint_concurrency, structured, outage_wait_s, on_outage
        )
        self.cache = cache
        self._transport = transport
        self.on_void = on_void
        self.on_thinking = on_thinking
        self.on_reply = on_reply
        self.shaper = Shaper(on_adjust)
        self._inline: set[tuple[str, str]] = set()  # models seen thinking inline with no opening tag

    # -- calls
    def _transport_for(self, spec: ModelSpec) -> Transport:
        if self._transport is not None:
            return self._transport
        return send

    def complete(
        self,
        spec: ModelSpec,
        messages: Messages,
        samples: Sequence[tuple[int, int]],
        player: str,
        structured: tuple[list[dict[str, Any]], dict[str, Any]] | None = None,
        options: dict[str, Any] | None = None,
        purpose: str = "",
    ) -> list[Completion]:
        """Get one completion per ``(index, seed)`` sample of the same request.

        ``structured``, when given, is the same request for structured output: its JSON-format
        messages and OpenAI's ``response_format`` (a JSON schema); it is sent instead of
        ``messages`` while :meth:`wants_structured` (see the module's docstring for the
        fallback). Each completion says whether it was asked for that way. ``messages`` may be
        a function that makes them: it is called only when the text format is sent.
        ``options`` are further fields of the request (``stop``, ``logprobs``, ``top_logprobs``,
        ``max_tokens``), sent as they are and part of the cache key; with ``logprobs`` each
        completion carries its tokens' log-probabilities where the provider gave them. A
        provider that refuses one of them (a 400 naming it) raises :class:`OptionRefused`:
        the caller does without it, and nothing is void. ``purpose`` ("set", "answer", "read")
        is what the usage is counted under besides the player (:meth:`purposes`)."""
        if structured is None or self.structured == "off":
            return self._complete(spec, _made(messages), samples, player, None, options, purpose)
        while True:
            with self._lock:
                form = self._forms.setdefault(self._endpoint(spec), 0)
            rf = as_format(structured[1], FORMATS[form])
            if rf is None:
                return self._complete(spec, _made(messages), samples, player, None, options, purpose)
            try:
                return self._complete(spec, structured[0], samples, player, rf, options, purpose)
            except FormatRefused as exc:
                self._refused(spec, form, exc.error)

    def _complete(
        self,
        spec: ModelSpec,
        messages: list[dict[str, Any]],
        samples: Sequence[tuple[int, int]],
        player: str,
        rf: dict[str, Any] | None,
        options: dict[str, Any] | None = None,
        purpose: str = "",
    ) -> list[Completion]:
        usage = self._usage(player, purpose)
        out: list[Completion | None] = [None] * len(samples)
        keys = (
            [ResponseCache.key(spec, messages, i, s, rf, options) for i, s in samples] if self.cache is not None else []
        )
        missing: list[int] = []
        for pos in range(len(samples)):
            hit = self.cache.get_reply(keys[pos]) if self.cache is not None else None
            if hit is not None:
                out[pos] = Completion(
                    hit.text,
                    cached=True,
                    finish_reason=hit.finish_reason,
                    structured=rf is not None,
                    logprobs=hit.logprobs,
                    thinking=hit.thinking,
                    thinking_cut=hit.thinking_cut,
                )
            else:
                missing.append(pos)
        with self._lock:
            usage.samples += len(samples)
            usage.cached += len(samples) - len(missing)
        if missing:
            if self.budget_usd is not None and self.spent_usd >= self.budget_usd:
                raise BudgetExceeded(f"spent ${self.spent_usd:.4f} of the ${self.budget_usd:.4f} budget")
            groups = _batches(missing, self.max_n(spec))
            # The first group runs in this thread; any others on the request pool, whose tasks
            # never wait on other tasks (so the pools cannot starve each other).
            pool = self._pool_for(spec, "request")
            futures = [
                pool.submit(self._request, spec, messages, [samples[p] for p in g], player, rf, options, purpose)
                for g in groups[1:]
            ]
            try:
                first = self._request(spec, messages, [samples[p] for p in groups[0]], player, rf, options, purpose)
            finally:
                wait(futures)  # every group done, refused or not
            results = [f.result() for f in futures]  # a group's refusal raised here, the first in order
            for group, got in zip(groups, [first, *results], strict=True):
                for pos, comp in zip(group, got, strict=True):
                    out[pos] = comp
                    if comp.ok and self.cache is not None:
                        self.cache.put_reply(
                            keys[pos],
                            comp.text or "",
                            comp.finish_reason,
                            comp.logprobs,
                            comp.thinking,
                            comp.thinking_cut,
                        )
        done = _filled(out)
        if self.on_reply is not None:
            for (index, seed), comp in zip(samples, done, strict=True):
                self.on_reply(
                    {
                        "player": player,
                        "model": spec.model,
                        "purpose": purpose,
                        "index": index,
                        "seed": seed,
                        "text": comp.text,
                        "thinking": comp.thinking,
                        "finish": None if comp.finish_reason in (None, "stop") else comp.finish_reason,
                        "thinking_cut": comp.thinking_cut,
                        "cached": comp.cached,
                        "void": comp.void,
                    }
                )
        return done

    def complete_many(
        self, spec: ModelSpec, requests: Sequence[tuple[Any, ...]], player: str, purpose: str = ""
    ) -> list[list[Completion]]:
        """Several requests at once (e.g. every sample of a question), results in order; each is
        ``(messages, samples)``, ``(messages, samples, structured)`` or ``(messages, samples,
        structured, options)`` as :meth:`complete` takes them."""

        def call(request: tuple[Any, ...]) -> list[Completion]:
            structured = request[2] if len(request) > 2 else None
            options = request[3] if len(request) > 3 else None
            return self.complete(spec, request[0], request[1], player, structured, options, purpose=purpose)

        if len(requests) == 1:
            return [call(requests[0])]
        pool = self._pool_for(spec, "call")
        # Each call runs in a copy of the caller's context: its replies keep the caller's reply scope.
        futures = [pool.submit(contextvars.copy_context().run, call, r) for r in requests]
        return [f.result() for f in futures]

    def _request(
        self,
        spec: ModelSpec,
        messages: list[dict[str, Any]],
        samples: list[tuple[int, int]],
        player: str,
        rf: dict[str, Any] | None = None,
        options: dict[str, Any] | None = None,
        purpose: str = "",
    ) -> list[Completion]:
        """Send one request for these samples (n = len(samples)), retrying what may pass; each
        model is sent only the parameters it takes (:mod:`skate.llm.shaping`), and a refusal of
        one of skate's own is learnt and the request sent again at once."""
        usage = self._usage(player, purpose)
        send = self._transport_for(spec)
        n, seed = len(samples), samples[0][1]

        def once(attempt: int) -> list[Completion]:
            while True:
                shape = self.shaper.shape(spec, player)
                opts, stops = shaped(spec, shape, options)
                if options and options.get("logprobs") and (shape.drops("logprobs") or shape.drops("top_logprobs")):
                    raise OptionRefused(
                        "logprobs",
                        CallFailed(
                            "client",
                            f"{spec.model} takes no log-probabilities ({shape.changes.get('logprobs') or ''})",
                            False,
                            status=400,
                        ),
                    )
                with self._slot(spec):
                    with self._lock:
                        usage.calls += 1
                        usage.structured += rf is not None
                    t0 = time.monotonic()
                    extra: dict[str, Any] = {}
                    if rf is not None:
                        extra["response_format"] = rf
                    if opts:
                        extra["options"] = opts
                    try:
                        reply = send(spec, messages, n, seed, **extra)
                    except CallFailed as exc:
                        refused = refusal(exc)
                        if (
                            refused is not None
                            and refused[0] != "response_format"
                            and self.shaper.learn(spec, player, exc, self._sent(spec, n, rf, opts)) is not None
                        ):
                            with self._lock:
                                usage.refused += 1
                            continue  # learnt what it takes: the same request again, shaped anew
                        if rf is not None and is_format_refusal(exc):
                            raise FormatRefused(exc) from exc
                        limit = n_limit(exc) if n > 1 else None
                        if limit is not None and limit < n:
                            raise TooManySamples(limit) from exc
                        option = refused_option(exc, options)
                        if option is not None:
                            raise OptionRefused(option, exc) from exc
                        raise
                    finally:
                        with self._lock:
                            usage.seconds += time.monotonic() - t0
                got = self._completions(
                    spec, player, usage, reply, n, attempt, rf is not None, stops, bool((options or {}).get("stop"))
                )
                if got is None:  # the server stopped a reply inside its thinking: stops are skate's now
                    continue
                break
            self._charge(spec, usage, reply)
            if len(reply.texts) < n:  # the provider ignored n: ask for the rest one by one
                got += [
                    c
                    for s in samples[len(reply.texts) :]
                    for c in self._request(spec, messages, [s], player, rf, options, purpose)
                ]
            if self.on_thinking is not None:
                for (index, sample_seed), comp in zip(samples, got, strict=False):
                    if comp.thinking:
                        self.on_thinking(
                            {
                                "player": player,
                                "model": spec.model,
                                "index": index,
                                "seed": sample_seed,
                                "thinking": comp.thinking,
                                "answer": comp.text,
                                "finish_reason": comp.finish_reason,
                            }
                        )
            return got

        try:
            return self._retrying(
                spec, player, usage, once, lambda exc, attempt: self._void(spec, player, usage, samples, exc, attempt)
            )
        except TooManySamples as exc:  # learn the server's limit, then ask in requests it takes
            with self._lock:
                self._max_n[spec.endpoint_key] = exc.limit
            log.debug("%s (%s) takes at most %d samples per request", player, spec.model, exc.limit)
            return [
                c
                for group in _batches(list(range(n)), exc.limit)
                for c in self._request(spec, messages, [samples[i] for i in group], player, rf, options, purpose)
            ]

    @staticmethod
    def _sent(spec: ModelSpec, n: int, rf: dict[str, Any] | None, opts: dict[str, Any]) -> set[str]:
        """The request fields a request carried (by name), as the transport builds its body."""
        fields = {
            "temperature",
            "max_tokens",
            "seed",
            *spec.request_fields(),
            *(["n"] if n > 1 else []),
            *(["response_format"] if rf is not None else []),
        }
        fields |= {k for k, v in opts.items() if v is not None}
        return fields - {k for k, v in opts.items() if v is None}

    def _completions(
        self,
        spec: ModelSpec,
        player: str,
        usage: Usage,
        reply: Reply,
        n: int,
        attempt: int,
        structured: bool,
        stops: list[str],
        had_stops: bool,
    ) -> list[Completion] | None:
        """The completions of one reply, each with its thinking taken out (:mod:`skate.llm.thinking`)
        and ended at the stop sequences skate applies itself; None when the server ended a reply at
        a stop sequence inside its thinking (it is learnt: send the request again)."""
        key = self._endpoint(spec)
        server_stops = had_stops and not stops  # the server applied the request's stop sequences
        answers: list[str] = []
        thoughts: list[str | None] = []
        cuts: list[bool] = []
        finishes: list[str | None] = []
        for i, text in enumerate(reply.texts[:n]):
            finish = reply.finish(i)
            with self._lock:
                inline = key in self._inline
            split = split_inline(
                text, thinks_inline=inline and (finish == "length" or finish == "stop" and server_stops)
            )
            if split.bare and not inline:
                with self._lock:
                    self._inline.add(key)  # thinks inline, the block opened by its chat template
            if split.open and finish == "stop" and server_stops and self.shaper.learn_stop(spec, player) is not None:
                return None
            given = reply.thought(i)
            thinking = "\n\n".join(t for t in (given, split.thinking) if t) or None
            answer = split.answer
            if stops:
                answer, met = apply_stops(answer, stops)
                if met:
                    finish = "stop"
            cut = finish == "length" and thinking is not None and (split.open or not answer.strip())
            answers.append(answer)
            thoughts.append(thinking)
            cuts.append(cut)
            finishes.append(finish)
        thinking_tokens = reply.thinking_tokens or share_of(reply.completion_tokens, thoughts, answers)
        with self._lock:
            usage.thinking_tokens += thinking_tokens
        return [
            self._completion(
                spec,
                player,
                usage,
                answer,
                finish,
                attempt,
                structured,
                reply.tokens(i),
                stops=had_stops,
                thinking=thinking,
                thinking_cut=cut,
            )
            for i, (answer, thinking, cut, finish) in enumerate(zip(answers, thoughts, cuts, finishes, strict=False))
        ]

    def _completion(
        self,
        spec: ModelSpec,
        player: str,
        usage: Usage,
        text: str,
        finish: str | None,
        attempt: int,
        structured: bool,
        logprobs: list[dict] | None = None,
        stops: bool = False,
        thinking: str | None = None,
        thinking_cut: bool = False,
    ) -> Completion:
        """One choice of a reply, its cut or empty text counted (and logged once per model).
        ``stops``: the request had stop sequences (an empty reply may have met one at once);
        ``thinking``: what the model thought before ``text``; ``thinking_cut``: it was cut while the
        model was still thinking."""
        cut, empty = finish == "length", not text.strip()
        if cut or empty:
            with self._lock:
                usage.cut += cut
                usage.cut_thinking += thinking_cut
                usage.empty += empty and not thinking_cut
        if thinking_cut:
            self._warn_once(
                spec,
                "cut_thinking",
                "%s (%s): a reply was cut at max_tokens=%d while the model was still "
                "thinking: it counts as no answer (never a wrong one). Raise max_tokens for this player "
                "(players.llm), or lower its reasoning_effort or thinking_budget",
                player,
                spec.model,
                spec.max_tokens,
            )
        elif empty and stops and finish == "stop":
            self._warn_once(
                spec,
                "empty",
                "%s (%s) gave an empty reply (finish_reason stop): read as unparsable. "
                "Either it began with one of the request's stop sequences (a model copying its "
                "request is stopped there), or the server's chat template does not suit the model "
                "(e.g. llama.cpp needs --chat_format for some models)",
                player,
                spec.model,
            )
        elif empty:
            self._warn_once(
                spec,
                "empty",
                "%s (%s) gave an empty reply (finish_reason %s): read as unparsable. A "
                "local server whose chat template does not suit the model does this (e.g. "
                "llama.cpp needs --chat_format for some models)",
                player,
                spec.model,
                finish,
            )
        elif cut:
            self._warn_once(
                spec,
                "cut",
                "%s (%s): a reply was cut at max_tokens=%d (finish_reason length): it "
                "counts only if its fields were complete; raise max_tokens if this recurs",
                player,
                spec.model,
                spec.max_tokens,
            )
        return Completion(
            text,
            attempts=attempt,
            finish_reason=finish,
            structured=structured,
            logprobs=logprobs,
            thinking=thinking,
            thinking_cut=thinking_cut,
        )

    def embed(
        self, spec: ModelSpec, texts: Sequence[str], player: str, send: EmbedTransport, batch_size: int = 256
    ) -> list[list[float]]:
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
                out[pos] = unpack(hit)
            else:
                missing.append(pos)
        with self._lock:
            usage.samples += len(texts)
            usage.cached += len(texts) - len(missing)
        for start in range(0, len(missing), max(1, batch_size)):
            if self.budget_usd is not None and self.spent_usd >= self.budget_usd:
                raise BudgetExceeded(f"spent ${self.spent_usd:.4f} of the ${self.budget_usd:.4f} budget")
            group = missing[start : start + max(1, batch_size)]
            vectors = self._embed_request(spec, [texts[p] for p in group], player, send)
            for pos, vec in zip(group, vectors, strict=True):
                packed = pack(vec)
                out[pos] = unpack(packed)
                if self.cache is not None:
                    self.cache.put(keys[pos], packed)
        return _filled(out)

    def _embed_request(self, spec: ModelSpec, texts: list[str], player: str, send: EmbedTransport) -> list[list[float]]:
        usage = self._usage(player)

        def once(attempt: int) -> list[list[float]]:
            with self._slot(spec):
                with self._lock:
                    usage.calls += 1
                vectors, tokens = send(spec, texts)
            if len(vectors) != len(texts):
                raise CallFailed("malformed", f"{len(vectors)} vectors for {len(texts)} texts", retryable=True)
            self._charge(spec, usage, Reply([], tokens, 0))
            return vectors

        def give_up(exc: CallFailed, attempt: int) -> list[list[float]]:
            raise EmbeddingFailed(
                f"embeddings from {spec.model} failed after {attempt} attempt(s): {exc.kind}: {exc.detail}"[:400], exc
            ) from exc

        return self._retrying(spec, player, usage, once, give_up)

    def _void(
        self, spec: ModelSpec, player: str, usage: Usage, samples: list[tuple[int, int]], exc: CallFailed, attempts: int
    ) -> list[Completion]:
        reason = f"{exc.kind}: {exc.detail}"[:300]
        with self._lock:
            usage.void += len(samples)
            loud = usage.void <= 5 * len(samples)  # the first few per player; the event log has all
        log.log(
            logging.WARNING if loud else logging.DEBUG,
            "%s (%s): void after %d attempt(s): %s",
            player,
            spec.model,
            attempts,
            reason,
        )
        if self.on_void is not None:
            self.on_void(
                {
                    "player": player,
                    "model": spec.model,
                    "kind": exc.kind,
                    "status": exc.status,
                    "detail": exc.detail[:300],
                    "attempts": attempts,
                    "samples": len(samples),
                }
            )
        return [Completion(None, void=reason, attempts=attempts) for _ in samples]

    def close(self) -> None:
        self.outages.close()
        with self._lock:
            pools = list(self._pools.values())
        for pool in pools:
            pool.shutdown(wait=False, cancel_futures=True)
        if self.cache is not None:
            self.cache.close()

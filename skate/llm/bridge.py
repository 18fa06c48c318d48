"""A DSPy language model over skate's own client, for DSPy's optimisers and modules.

``SkateLM`` is a ``dspy.BaseLM``: under ``with dspy.context(lm=SkateLM(client, spec, player))``
every call a DSPy module, ``Evaluate`` or optimiser makes (BootstrapFewShot, MIPROv2's proposer
and trials...) goes through :meth:`skate.llm.client.LLMClient.complete`, so the game's response
cache, retries, void handling, per-endpoint concurrency, usage and cost accounting and budget
apply to it. There is no second path to the providers: DSPy's own cache and retries are off,
and neither LiteLLM nor DSPy's engines are called.

A call's samples are reproducible. Choice ``i`` of a call (DSPy's ``n``) is the client sample
``(i, seed_i)`` with ``seed_i`` drawn from the bridge's seed, the messages, DSPy's ``rollout_id``
(BootstrapFewShot and MIPROv2 copy the LM with a new rollout id to get fresh samples) and ``i``.
Different rollout ids, choices or bridge seeds are distinct samples; repeating an optimisation
asks the same samples again, all of them answered by the response cache.

A void completion (the client gave up after its retries) raises :class:`VoidCall`; DSPy's
optimisers and ``Evaluate`` count it as a failed example. A stop of the run
(:class:`~skate.runlog.records.StopRun`: a spent budget, :class:`~skate.llm.usage.BudgetExceeded`;
a model that did not answer within ``llm.outage_wait_s``) is raised as it is, but DSPy's optimisers
catch every ``Exception`` per example (up to their ``max_errors``), so the bridge also *latches*
it: once it is raised every later call of the bridge (and of its copies) raises it at once, and
:meth:`SkateLM.guard` re-raises it when the optimisation returns or fails with anything else.
Wrap an optimisation in ``with lm.guard():``.

Written for DSPy 3.4 (pinned), whose ``forward()`` plugin interface is deprecated: ``__call__``
runs DSPy's own execution path minus the deprecation warning (see :meth:`SkateLM.__call__`).
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import skate.llm  # noqa: F401  (environment defaults before dspy is imported)

# isort: split
import dspy
from dspy.clients._deprecation import warn_openai_messages
from dspy.clients.execution import aexecute, execute, finalize, prepare
from dspy.utils.callback import with_callbacks

from skate.llm.client import LLMClient
from skate.llm.spec import ModelSpec
from skate.llm.usage import BudgetExceeded, Usage
from skate.runlog.records import StopRun

SEED_RANGE = 2**31 - 1  # the seeds the game's players draw from, too


class VoidCall(RuntimeError):
    """The client gave up on a DSPy call (after its retries): there is no answer, and no guess."""

    def __init__(self, model: str, player: str, reason: str, void: int, asked: int) -> None:
        super().__init__(f"{player} ({model}): no completion for {void} of {asked} sample(s): {reason}")
        self.model, self.player, self.reason, self.void, self.asked = model, player, reason, void, asked


class _AttrDict(dict):
    """A dict whose keys read as attributes too (the OpenAI SDK's response objects do both)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class _Shared:
    """What a bridge and all its copies share: counters, the usage baseline, the stop latch."""

    def __init__(self, client: LLMClient, player: str) -> None:
        self.lock = threading.Lock()
        self.lm_calls = 0
        self.samples = 0
        self.cached = 0
        self.void = 0
        self.stop_error: StopRun | None = None  # a spent budget, a model that did not answer
        self.baseline = _snapshot(client, player)


def _snapshot(client: LLMClient, player: str) -> Usage:
    return dataclasses.replace(client.usage.get(player) or Usage())


def _minus(a: Usage, b: Usage) -> Usage:
    return Usage(**{k: getattr(a, k) - getattr(b, k) for k in Usage.__dataclass_fields__})


def _response(model: str, texts: list[str]) -> _AttrDict:
    """An OpenAI chat-completion body, as DSPy's output processing reads it."""
    return _AttrDict(
        id="skate",
        object="chat.completion",
        created=0,
        model=model,
        choices=[
            _AttrDict(index=i, finish_reason="stop", logprobs=None, message=_AttrDict(role="assistant", content=t))
            for i, t in enumerate(texts)
        ],
        usage=_AttrDict(),
    )  # tokens are counted by the client (SkateLM.usage), not per call here


class SkateLM(dspy.BaseLM):
    """A ``dspy.BaseLM`` whose every call is ``client.complete(spec, messages, samples, player)``.

    ``player`` is the key the calls are accounted under in ``client.usage``; ``seed`` makes a
    bridge's samples its own (two bridges with different seeds draw different samples).

    Counters (shared with copies): :attr:`calls` (DSPy LM calls), :attr:`samples` (completions
    asked for), :attr:`cached` (of those, served by the response cache), :attr:`void`;
    :meth:`usage` is the client's accounting under ``player`` since the bridge was made
    (requests, retries, tokens, cost); :meth:`summary` has both, for a log line or an event.
    """

    def __init__(
        self, client: LLMClient, spec: ModelSpec, player: str, seed: int = 0, options: dict[str, Any] | None = None
    ) -> None:
        # DSPy's cache and retries stay off: the client has its own, and the same for every call.
        super().__init__(
            model=spec.model,
            model_type="chat",
            temperature=spec.temperature,
            max_tokens=spec.max_tokens,
            cache=False,
            num_retries=0,
        )
        self.client = client
        self.spec = spec
        self.player = player
        self.seed = int(seed)
        # Request fields sent with every call, as the game sends them for this role (a setter's
        # stop sequences and sampling options: skate.players.llm.LLMPlayer.set_task).
        self.options = dict(options or {})
        self._shared = _Shared(client, player)

    # -- DSPy's calls
    @with_callbacks
    def __call__(self, prompt: Any = None, *, messages: Any = None, **kwargs: Any) -> Any:
        """``dspy.BaseLM.__call__`` without its warning that ``forward()`` plugins are deprecated.

        DSPy 3.4 warns (``DeprecationWarning``) on every call of a ``forward()`` LM, naming the
        first frame outside DSPy: a skate module's ``forward``, which the test suite's warning
        filter turns into an error. The execution path is DSPy's own: no cache, no retries
        (both off in ``__init__``), ``forward`` called once per call.
        """
        call = prepare(self, prompt, messages, kwargs)
        warn_openai_messages(self, messages)  # a caller's own dict messages; adapters never warn
        return finalize(self, call, execute(self, call))

    @with_callbacks
    async def acall(self, prompt: Any = None, *, messages: Any = None, **kwargs: Any) -> Any:
        call = await asyncio.to_thread(prepare, self, prompt, messages, kwargs, asynchronous=True)
        warn_openai_messages(self, messages)
        return finalize(self, call, await aexecute(self, call))

    def forward(
        self, prompt: str | None = None, messages: list[dict[str, Any]] | None = None, **kwargs: Any
    ) -> _AttrDict:
        """One DSPy LM call: ``n`` choices of ``messages`` (or of ``prompt`` as a user message).

        ``temperature`` and ``max_tokens`` (or ``max_completion_tokens``) set this call's spec,
        so they are part of its identity in the cache; ``rollout_id`` and ``seed`` pick the
        samples; other DSPy options (``response_format``, ``stop``...) are not sent: the
        bridge's own :attr:`options` are (the game's, for the role it optimises).
        """
        opts = {**self.kwargs, **kwargs}
        shared = self._shared
        with shared.lock:
            shared.lm_calls += 1
            latched = shared.stop_error
        if latched is not None:
            raise latched
        msgs = self._messages(prompt, messages)
        spec = self.spec_for(opts)
        n = int(opts.get("n") or opts.get("num_generations") or 1)
        seeds = self.seeds(msgs, n, opts.get("rollout_id"), opts.get("seed"))
        try:
            got = self.client.complete(spec, msgs, list(enumerate(seeds)), self.player, options=self.options or None)
        except StopRun as exc:
            with shared.lock:
                shared.stop_error = shared.stop_error or exc
            raise
        void = [c for c in got if not c.ok]
        with shared.lock:
            shared.samples += len(got)
            shared.cached += sum(c.cached for c in got)
            shared.void += len(void)
        if void:
            raise VoidCall(spec.model, self.player, str(void[0].void), len(void), len(got))
        return _response(spec.model, [str(c.text) for c in got])

    async def aforward(
        self, prompt: str | None = None, messages: list[dict[str, Any]] | None = None, **kwargs: Any
    ) -> _AttrDict:
        return await asyncio.to_thread(self.forward, prompt, messages, **kwargs)

    # -- what a call asks for
    def spec_for(self, opts: dict[str, Any]) -> ModelSpec:
        """The spec of a call with these options: the bridge's, with its temperature and
        ``max_tokens`` replaced when the call sets them."""
        changes: dict[str, Any] = {}
        temperature = opts.get("temperature")
        if temperature is not None and float(temperature) != self.spec.temperature:
            changes["temperature"] = float(temperature)
        max_tokens = opts.get("max_tokens") or opts.get("max_completion_tokens")
        if max_tokens is not None and int(max_tokens) != self.spec.max_tokens:
            changes["max_tokens"] = int(max_tokens)
        return dataclasses.replace(self.spec, **changes) if changes else self.spec

    def seeds(self, messages: list[dict[str, Any]], n: int, rollout_id: Any = None, call_seed: Any = None) -> list[int]:
        """One seed per choice, from (bridge seed, messages, rollout id, call seed, choice)."""
        blob = json.dumps(messages, sort_keys=True, ensure_ascii=False, default=str)
        digest = hashlib.sha256(blob.encode()).hexdigest()

        def seed(i: int) -> int:
            key = json.dumps(["skate-lm", self.seed, digest, rollout_id, call_seed, i], default=str)
            return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") % SEED_RANGE

        return [seed(i) for i in range(n)]

    @staticmethod
    def _messages(prompt: str | None, messages: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
        if messages:
            return [dict(m) for m in messages]
        if prompt is None:
            raise ValueError("SkateLM: a call needs messages or a prompt")
        return [{"role": "user", "content": str(prompt)}]

    # -- budget
    def check(self) -> None:
        """Raise the latched stop (:class:`BudgetExceeded`, ...), if a call of this bridge (or a copy) hit it."""
        err = self._shared.stop_error
        if err is not None:
            raise err

    @contextmanager
    def guard(self) -> Iterator[SkateLM]:
        """``with lm.guard(): optimizer.compile(...)``: a stop inside (a budget hit, a model that did
        not answer) always ends as that stop, even when DSPy caught it per example and returned, or
        gave up with an exception of its own ("Execution cancelled due to errors")."""
        try:
            yield self
        except StopRun:
            raise
        except Exception as exc:
            err = self._shared.stop_error
            if err is not None:
                raise err from exc
            raise
        self.check()

    @property
    def budget_hit(self) -> bool:
        return isinstance(self._shared.stop_error, BudgetExceeded)

    # -- counters
    @property
    def calls(self) -> int:
        """LM calls DSPy made through this bridge and its copies (each asks ``n`` samples)."""
        return self._shared.lm_calls

    @property
    def samples(self) -> int:
        return self._shared.samples

    @property
    def cached(self) -> int:
        return self._shared.cached

    @property
    def void(self) -> int:
        return self._shared.void

    def usage(self) -> Usage:
        """The client's accounting under ``player`` since this bridge was made: requests sent
        (``calls``), retries, tokens and cost. Exactly the bridge's own while nothing else calls
        under the same player key (give an optimisation its own key to keep it apart)."""
        return _minus(_snapshot(self.client, self.player), self._shared.baseline)

    def summary(self) -> dict[str, Any]:
        """The bridge's counters and its usage, for a log line or an event."""
        s = self._shared
        with s.lock:
            counts = {"lm_calls": s.lm_calls, "samples": s.samples, "cached": s.cached, "void": s.void}
        return {
            "player": self.player,
            "model": self.spec.model,
            **counts,
            "usage": self.usage().as_dict(),
            "budget_hit": self.budget_hit,
        }

    # -- copies share the client, the spec and the counters
    def __deepcopy__(self, memo: dict[int, Any]) -> SkateLM:
        new = copy.copy(self)
        new.kwargs = copy.deepcopy(self.kwargs, memo)
        new.history = []
        new.callbacks = list(self.callbacks)
        return new

    def dump_state(self) -> dict[str, Any]:
        state = super().dump_state()
        state.update(player=self.player, seed=self.seed)
        return state

    @classmethod
    def load_state(cls, state: dict[str, Any], **_: Any) -> SkateLM:
        raise TypeError(
            "a SkateLM cannot be loaded from a saved program: it needs the run's LLMClient. "
            "Save programs without an LM (use dspy.context(lm=...), not set_lm) and make a "
            "SkateLM for the run."
        )

    def __repr__(self) -> str:
        return f"SkateLM({self.spec.model!r}, player={self.player!r}, seed={self.seed})"

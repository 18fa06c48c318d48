"""The model client's accounting (:class:`Accounts`, the base of
:class:`~skate.llm.client.LLMClient`): per player and purpose, its calls' :class:`Usage`; each
model's :class:`Price` (``llm.prices``, else LiteLLM's model map: :func:`price_of`) and what each
reply costs at it; :class:`BudgetExceeded` when the run's spending limit is reached."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

from skate.llm.spec import ModelSpec
from skate.llm.wire import Reply
from skate.runlog.records import StopRun

log = logging.getLogger("skate.llm.client")  # its messages are the client's, under the client's logger


class BudgetExceeded(StopRun):
    """The run's spending limit is reached: no new model calls are made."""


@dataclass
class Usage:
    calls: int = 0  # requests sent to a provider
    samples: int = 0  # completions asked for (cache hits included)
    cached: int = 0
    void: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    cached_prompt_tokens: int = 0  # of prompt_tokens, those the provider reused from its prompt cache
    completion_tokens: int = 0  # thinking included
    thinking_tokens: int = 0  # of completion_tokens, those spent thinking (as the provider counts them, else estimated)
    cost_usd: float = 0.0
    structured: int = 0  # calls sent with a JSON schema (structured output)
    cut: int = 0  # replies cut at max_tokens (finish_reason "length")
    cut_thinking: int = 0  # of those, cut while still thinking (no answer at all)
    empty: int = 0  # replies with no text at all
    refused: int = 0  # requests refused for a parameter the model does not take, sent again without it
    seconds: float = 0.0  # wall time of the requests sent (in flight, the server's queue included)

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "cost_usd": round(self.cost_usd, 6), "seconds": round(self.seconds, 3)}


def _add(into: Usage, u: Usage) -> Usage:
    for k, v in u.__dict__.items():
        setattr(into, k, getattr(into, k) + v)
    return into


@dataclass(frozen=True)
class Price:
    input_per_mtok: float = 0.0  # USD per million prompt tokens
    output_per_mtok: float = 0.0

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_mtok + completion_tokens * self.output_per_mtok) / 1e6


def price_of(spec: ModelSpec, prices: dict[str, Price]) -> Price | None:
    """``spec``'s price from ``prices`` (``llm.prices``, by ``provider/model`` or by name), else
    from LiteLLM's model map (thinking is priced as output, as providers bill it); None when
    neither has one."""
    for key in (spec.model, spec.name):
        if key in prices:
            return prices[key]
    found = spec.facts
    if found is not None and (found.input_per_mtok is not None or found.output_per_mtok is not None):
        return Price(found.input_per_mtok or 0.0, found.output_per_mtok or 0.0)
    return None


class Accounts:
    """What :class:`~skate.llm.client.LLMClient` counts (its base): per player and purpose of its
    calls, their :class:`Usage`, added up per player and in all; each model's price, and what a
    reply costs at it. Every count is made under ``_lock``, which the client's other state shares."""

    def __init__(self, prices: dict[str, Price] | None = None, budget_usd: float | None = None) -> None:
        self.prices = dict(prices or {})
        self.budget_usd = budget_usd
        self._lock = threading.Lock()
        # Per player and purpose of its calls ("set", "answer", "read"; "" for others): what
        # ``usage`` adds up per player, and the estimate of a later run reads apart (skate.tools.estimate).
        self._parts: dict[tuple[str, str], Usage] = {}
        self._warned_prices: set[str] = set()

    def _usage(self, player: str, purpose: str = "") -> Usage:
        with self._lock:
            return self._parts.setdefault((player, purpose), Usage())

    @property
    def usage(self) -> dict[str, Usage]:
        """Per player, its calls' usage (every purpose added up); a copy."""
        with self._lock:
            out: dict[str, Usage] = {}
            for (player, _), u in self._parts.items():
                _add(out.setdefault(player, Usage()), u)
            return out

    def purposes(self) -> dict[str, dict[str, Usage]]:
        """Per player, its calls' usage by purpose (those made with one: setting, answering, reading)."""
        with self._lock:
            out: dict[str, dict[str, Usage]] = {}
            for (player, purpose), u in sorted(self._parts.items()):
                if purpose:
                    out.setdefault(player, {})[purpose] = _add(Usage(), u)
            return out

    def total(self) -> Usage:
        with self._lock:
            out = Usage()
            for u in self._parts.values():
                _add(out, u)
            return out

    @property
    def spent_usd(self) -> float:
        return self.total().cost_usd

    def price(self, spec: ModelSpec) -> Price:
        """The model's price: ``llm.prices``' (by ``provider/model`` or name), else LiteLLM's map's
        (:func:`price_of`); a hosted model with neither is counted at 0, said once."""
        found = price_of(spec, self.prices)
        if found is not None:
            return found
        if spec.hosted and spec.model not in self._warned_prices:
            self._warned_prices.add(spec.model)
            log.warning(
                "no price for %s in llm.prices nor in LiteLLM's model map: its cost is counted as 0", spec.model
            )
        return Price()

    def _charge(self, spec: ModelSpec, usage: Usage, reply: Reply) -> None:
        cost = self.price(spec).cost(reply.prompt_tokens, reply.completion_tokens)
        with self._lock:
            usage.prompt_tokens += reply.prompt_tokens
            usage.cached_prompt_tokens += reply.cached_prompt_tokens
            usage.completion_tokens += reply.completion_tokens
            usage.cost_usd += cost

"""Players that are language models, named by ``provider/model`` strings.

An :class:`LLMPlayer` plays any game: the game supplies its DSPy setter and answerer modules
(:class:`~skate.llm.modules.GameModules`), which turn a setter's context or a query into chat
messages and a reply's text back into a proposal or a reply. Every call goes through the shared
:class:`~skate.llm.client.LLMClient` (cache, retries, void, concurrency, cost).

With structured output (``llm.structured``, see :mod:`skate.llm.client`) each call carries the
module's JSON-format request and schema as well, and the client sends whichever the model's
server takes; the module reads a reply in either format (:meth:`~skate.llm.modules._Module.read_reply`).

What the game gets from a reply that is no answer:

- an empty reply (a chat template that produces nothing): an unparsable answer, or a setting
  attempt rejected as malformed because "the reply was empty";
- a reply cut at ``max_tokens`` (``finish_reason`` "length") before its fields were complete
  (no ``[[ ## completed ## ]]`` marker, no whole JSON object): an unparsable answer, or an attempt
  rejected because the reply was cut at the length limit. A cut reply whose fields were complete
  (the model went on writing after them) is read as usual.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from skate.llm.client import Completion, LLMClient
from skate.llm.modules import AnswererModule, GameModules, SetterModule
from skate.llm.spec import ModelSpec
from skate.players.base import Player
from skate.records import VOID, SetterContext, VoidProposal


class LLMPlayer(Player):
    io_bound = True

    def __init__(self, name: str, spec: ModelSpec, client: LLMClient, modules: GameModules) -> None:
        self.name, self.spec, self.client = name, spec, client
        self.setter, self.answerer = modules.setter, modules.answerer

    def _request(self, module: SetterModule | AnswererModule, x: Any) -> tuple[Any, ...]:
        """``(messages, structured)`` for :meth:`LLMClient.complete`: the text-format request,
        and the JSON-format one with its schema while the client sends structured output to
        this model (else None). With structured output the text-format request is made only if
        the client falls back to it (a server refusing the schema mid-call): until then it is a
        function that makes it, not DSPy formatting done on every call for nothing."""
        if not module.structured_ok or not self.client.wants_structured(self.spec):
            return module.messages(x), None
        return (lambda: module.messages(x)), (module.messages(x, structured=True), module.response_format())

    def set_task(self, ctx: SetterContext, rng: np.random.Generator) -> Any:
        seed = int(rng.integers(2**31 - 1))
        messages, structured = self._request(self.setter, ctx)
        (done,) = self.client.complete(self.spec, messages, [(ctx.attempt, seed)], self.name, structured)
        if not done.ok:
            return VoidProposal(done.void or "void")
        text = done.text or ""
        self.setter.remember(ctx, text)
        if not text.strip():
            return self.setter.unreadable(f"the reply was empty (finish_reason {done.finish_reason}): the model "
                                          "wrote nothing")
        if done.cut and not self.setter.finished(text):
            return self.setter.unreadable(
                f"the reply was cut off at the length limit (max_tokens={self.spec.max_tokens}, finish_reason "
                f"length) before it was complete; it began: {text[:200]!r}")
        return self.setter.read_reply(text)

    def _read_answer(self, done: Completion) -> Any:
        if not done.ok:
            return VOID
        text = done.text or ""
        if not text.strip() or (done.cut and not self.answerer.finished(text)):
            return None  # empty, or cut before its answer was complete: unparsable
        return self.answerer.read_reply(text)

    def answer(self, queries: Sequence[Any], rng: np.random.Generator) -> list[Any]:
        seeds = [int(s) for s in rng.integers(2**31 - 1, size=len(queries))]
        # Samples that show the same query are one request (n > 1 where the provider allows it);
        # every distinct request of the batch goes out at once.
        groups: dict[Any, list[int]] = {}  # queries are hashable (frozen dataclasses)
        for i, q in enumerate(queries):
            groups.setdefault(q, []).append(i)
        requests = []
        for q, idx in groups.items():
            messages, structured = self._request(self.answerer, q)
            requests.append((messages, [(i, seeds[i]) for i in idx], structured))
        replies = self.client.complete_many(self.spec, requests, self.name)
        out: list[Any] = [None] * len(queries)
        for idx, completions in zip(groups.values(), replies, strict=True):
            for i, done in zip(idx, completions, strict=True):
                out[i] = self._read_answer(done)
        return out

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": "LLMPlayer", "model": self.spec.model,
                "api_base": self.spec.base_url, "temperature": self.spec.temperature,
                "max_tokens": self.spec.max_tokens}


def build_llm_players(configs: Sequence[Any], client: LLMClient,
                      make_modules: Callable[[], GameModules]) -> list[LLMPlayer]:
    """One player per ``players.llm`` entry, each with its own copy of the game's modules (so an
    optimiser may tune one player's prompts without touching another's)."""
    players = []
    for c in configs:
        c = dict(c)
        name = c.pop("name")
        spec = ModelSpec(**{k: v for k, v in c.items() if v is not None or k == "supports_n"})
        players.append(LLMPlayer(name, spec, client, make_modules()))
    return players

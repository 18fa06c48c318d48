"""Players that are language models, named by ``provider/model`` strings.

An :class:`LLMPlayer` plays any game: the game supplies its DSPy setter and answerer modules
(:class:`~skate.llm.modules.GameModules`), which turn a setter's context or a query into chat
messages and a reply's text back into a proposal or a reply. Every call goes through the shared
:class:`~skate.llm.client.LLMClient` (cache, retries, void, concurrency, cost).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from skate.llm.client import LLMClient
from skate.llm.modules import GameModules
from skate.llm.spec import ModelSpec
from skate.players.base import Player
from skate.records import VOID, SetterContext, VoidProposal


class LLMPlayer(Player):
    io_bound = True

    def __init__(self, name: str, spec: ModelSpec, client: LLMClient, modules: GameModules) -> None:
        self.name, self.spec, self.client = name, spec, client
        self.setter, self.answerer = modules.setter, modules.answerer

    def set_task(self, ctx: SetterContext, rng: np.random.Generator) -> Any:
        seed = int(rng.integers(2**31 - 1))
        (done,) = self.client.complete(self.spec, self.setter.messages(ctx), [(ctx.attempt, seed)], self.name)
        if not done.ok:
            return VoidProposal(done.void or "void")
        return self.setter.parse(done.text or "")

    def answer(self, queries: Sequence[Any], rng: np.random.Generator) -> list[Any]:
        seeds = [int(s) for s in rng.integers(2**31 - 1, size=len(queries))]
        # Samples that show the same query are one request (n > 1 where the provider allows it);
        # every distinct request of the batch goes out at once.
        groups: dict[Any, list[int]] = {}  # queries are hashable (frozen dataclasses)
        for i, q in enumerate(queries):
            groups.setdefault(q, []).append(i)
        requests = [(self.answerer.messages(q), [(i, seeds[i]) for i in idx]) for q, idx in groups.items()]
        replies = self.client.complete_many(self.spec, requests, self.name)
        out: list[Any] = [None] * len(queries)
        for idx, completions in zip(groups.values(), replies, strict=True):
            for i, done in zip(idx, completions, strict=True):
                out[i] = self.answerer.parse(done.text or "") if done.ok else VOID
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

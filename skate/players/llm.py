"""Players that are language models, named by ``provider/model`` strings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from skate.games.base import GameSpec
from skate.llm.client import LLMClient
from skate.llm.spec import ModelSpec
from skate.players.base import Player
from skate.records import VOID, SetterContext, VoidProposal


class LLMPlayer(Player):
    """Sets COP tasks and answers them through DSPy modules and the shared :class:`LLMClient`."""

    io_bound = True

    def __init__(self, name: str, spec: ModelSpec, client: LLMClient, game: GameSpec,
                 program_timeout_s: float = 5.0) -> None:
        from skate.llm.modules import COPSetter, MultipleChoiceAnswerer

        if game.name != "cop":
            raise ValueError(f"LLM players play the cop game so far, not {game.name!r}")
        self.name, self.spec, self.client, self.game = name, spec, client, game
        self.program_timeout_s = program_timeout_s
        self.setter = COPSetter()
        self.answerer = MultipleChoiceAnswerer(game.n_options)

    def set_task(self, ctx: SetterContext, rng: np.random.Generator) -> Any:
        inputs = self.setter.inputs(ctx, n_distractors=self.game.n_distractors,
                                    n_options=self.game.n_options, timeout_s=self.program_timeout_s)
        seed = int(rng.integers(2**31 - 1))
        (done,) = self.client.complete(self.spec, self.setter.messages(inputs), [(ctx.attempt, seed)], self.name)
        if not done.ok:
            return VoidProposal(done.void or "void")
        return self.setter.parse(done.text or "")

    def answer_batch(self, prompt: str, option_sets: list[list[str]],
                     rng: np.random.Generator) -> Sequence[int | None]:
        seeds = [int(s) for s in rng.integers(2**31 - 1, size=len(option_sets))]
        # Samples that show the same options in the same order are one request (n > 1 where the
        # provider allows it); every distinct request of the batch goes out at once.
        groups: dict[tuple[str, ...], list[int]] = {}
        for i, opts in enumerate(option_sets):
            groups.setdefault(tuple(opts), []).append(i)
        requests = [(self.answerer.messages(prompt, list(opts)), [(i, seeds[i]) for i in idx])
                    for opts, idx in groups.items()]
        replies = self.client.complete_many(self.spec, requests, self.name)
        picks: list[int | None] = [None] * len(option_sets)
        for idx, completions in zip(groups.values(), replies, strict=True):
            for i, done in zip(idx, completions, strict=True):
                picks[i] = self.answerer.parse(done.text or "") if done.ok else VOID
        return picks

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": "LLMPlayer", "model": self.spec.model,
                "api_base": self.spec.base_url, "temperature": self.spec.temperature,
                "max_tokens": self.spec.max_tokens}


def build_llm_players(configs: Sequence[Any], client: LLMClient, game: GameSpec,
                      program_timeout_s: float) -> list[LLMPlayer]:
    players = []
    for c in configs:
        c = dict(c)
        name = c.pop("name")
        spec = ModelSpec(**{k: v for k, v in c.items() if v is not None or k == "supports_n"})
        players.append(LLMPlayer(name, spec, client, game, program_timeout_s))
    return players

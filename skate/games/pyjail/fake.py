"""How the project's fake OpenAI-compatible server plays PyJail (see :mod:`skate.llm.fake_server`).

Asked to write a jail (the setter's ``rules``/``flag_location``/``situation``/``history`` fields)
a fake model writes one with the generator at a strength a little under its skill. Asked for an
input (``jail``/``earlier_tries``/``tries_left``) it reads the jail with the generator's reader
and, with a probability that falls as the jail gets harder than its skill, sends an input that
breaks it; otherwise an input from its repertoire. A jail the reader does not know gets
repertoire inputs only. When the request asks for a ``reasoning`` output it writes a line of
working before its input. Every choice is drawn from the request's seed and the choice's index
(the same input with and without reasoning).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

import skate.games.pyjail.generator as gen
from skate.games.base import FakePlayer, FakeRequest, seeded_random
from skate.players.simulated import know

SETTER_FIELDS = {"rules", "flag_location", "situation", "history"}
ATTACK_FIELDS = {"jail", "earlier_tries", "tries_left"}


class FakePyJailPlayer(FakePlayer):
    def claims(self, inputs: Mapping[str, str]) -> bool:
        return set(inputs) - {"guidance"} in (SETTER_FIELDS, ATTACK_FIELDS)

    def reply(self, request: FakeRequest) -> str:
        return self._attack(request) if "jail" in request.inputs else self._set(request)

    def _set(self, req: FakeRequest) -> str:
        rng = np.random.default_rng(seeded_random("set", req.model, req.seed, req.index).getrandbits(63))
        kind = gen.KINDS[int(rng.integers(len(gen.KINDS)))]
        source = gen.make_jail(kind, float(np.clip(req.skill - 0.15 + rng.normal(0, 0.05), 0, 1)), rng)
        return f"[[ ## jail ## ]]\n```python\n{source}\n```\n\n[[ ## completed ## ]]"

    def _attack(self, req: FakeRequest) -> str:
        source = req.inputs["jail"]
        rng = np.random.default_rng(seeded_random("attack", req.model, req.seed, req.index, source).getrandbits(63))
        info = gen.read_jail(source)
        if info is not None and rng.random() < know(req.skill, info.difficulty):
            payload = gen.breaker(info, rng)
        else:
            probes = gen.attack_inputs(req.skill, info, 3, rng)
            payload = probes[int(rng.integers(len(probes)))] if probes else "1"
        head = (
            (
                "[[ ## reasoning ## ]]\nI look at what the jail filters and what my earlier inputs gave, and "
                "try a way around the filter.\n\n"
            )
            if "reasoning" in req.outputs
            else ""
        )
        return f"{head}[[ ## input ## ]]\n{payload}\n\n[[ ## completed ## ]]"

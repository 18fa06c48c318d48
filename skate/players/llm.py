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

import dataclasses
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from skate.llm.choices import LABEL_TOKENS, TOP_LOGPROBS, ChoiceRead, option_probabilities
from skate.llm.client import Completion, LLMClient
from skate.llm.modules import AnswererModule, GameModules, SetterModule
from skate.llm.refusals import OptionRefused
from skate.llm.spec import ModelSpec
from skate.players.base import Player
from skate.players.config import LLMPlayerConfig, spec_of_config
from skate.runlog.records import VOID, Decoding, SetterContext, VoidProposal

log = logging.getLogger(__name__)


class LLMPlayer(Player):
    io_bound = True

    def __init__(
        self,
        name: str,
        spec: ModelSpec,
        client: LLMClient,
        modules: GameModules,
        setter_extra_body: dict[str, Any] | None = None,
        setter_repair: str = "show",
    ) -> None:
        self.name, self.spec, self.client = name, spec, client
        self.setter_extra_body = dict(setter_extra_body or {})  # request fields for setting requests only
        self.setter_repair = setter_repair  # "resample": after a rejection, the round's request asked anew
        self.setter, self.answerer = modules.setter, modules.answerer
        self._no_logprobs: ChoiceRead | None = None  # set when its provider gave no log-probabilities: no more reads
        self._thinks = False  # set when a read came back with thinking first: no more reads
        self._said: set[str] = set()  # kinds of failed read, each logged once
        self._lock = threading.Lock()

    def _request(self, module: SetterModule | AnswererModule, x: Any) -> tuple[Any, ...]:
        """``(messages, structured)`` for :meth:`LLMClient.complete`: the text-format request,
        and the JSON-format one with its schema while the client sends structured output to
        this model (else None). With structured output the text-format request is made only if
        the client falls back to it (a server refusing the schema mid-call): until then it is a
        function that makes it, not DSPy formatting done on every call for nothing."""
        if not module.structured_ok or not self.client.wants_structured(self.spec):
            return module.messages(x), None
        return (lambda: module.messages(x)), (module.messages(x, structured=True), module.response_format())

    def setting_options(self, structured: bool = False) -> dict[str, Any]:
        """The request fields a setting request carries besides its messages: the player's
        ``setter_extra_body``, and (for a text-format reply) the setter's stop sequences. A prompt
        optimiser sends its setting requests with the same (:mod:`skate.optimize`)."""
        stops = [] if structured else self.setter.stop_sequences()
        return {**self.setter_extra_body, **({"stop": stops} if stops else {})}

    def set_task(self, ctx: SetterContext, rng: np.random.Generator) -> Any:
        seed = int(rng.integers(2**31 - 1))
        if self.setter_repair == "resample" and ctx.failed:
            ctx = dataclasses.replace(ctx, failed=())  # a new sample of the same request: no rejection to copy
        messages, structured = self._request(self.setter, ctx)
        options = self.setting_options(structured is not None)
        stops = options.get("stop")
        (done,) = self.client.complete(
            self.spec, messages, [(ctx.attempt, seed)], self.name, structured, options or None, purpose="set"
        )
        if not done.ok:
            return VoidProposal(done.void or "void")
        text = done.text or ""
        self.setter.remember(ctx, text)
        if done.thinking_cut:
            return self.setter.unreadable(
                f"the reply was cut off at the length limit (max_tokens={self.spec.max_tokens}) while the model was "
                "still thinking: it wrote no task"
            )
        if not text.strip():
            if stops and done.finish_reason == "stop":
                return self.setter.unreadable(
                    "the reply was empty: it wrote nothing before it began to copy the request (its [[ ## ]] "
                    "sections, its instructions or the rejection: a reply stops where it starts copying them); "
                    "write only your reply's own headings and fields"
                )
            return self.setter.unreadable(
                f"the reply was empty (finish_reason {done.finish_reason}): the model wrote nothing"
            )
        if done.cut and not self.setter.finished(text):
            return self.setter.unreadable(
                f"the reply was cut off at the length limit (max_tokens={self.spec.max_tokens}, finish_reason "
                f"length) before it was complete; it began: {text[:200]!r}"
            )
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
        replies = self.client.complete_many(self.spec, requests, self.name, purpose="answer")
        out: list[Any] = [None] * len(queries)
        for idx, completions in zip(groups.values(), replies, strict=True):
            for i, done in zip(idx, completions, strict=True):
                out[i] = self._read_answer(done)
        return out

    def read_choices(self, queries: Sequence[Any], rng: np.random.Generator, min_mass: float = 0.5) -> list[ChoiceRead]:
        """Each query's options' probabilities from one call per query asking for the option's
        label alone, with the provider's log-probabilities (:mod:`skate.llm.choices`), at this
        model's temperature. A query that cannot be read so says why (the player's p(correct) is
        then sampled: said once per model and reason); a provider that gives no log-probabilities
        is not asked again this run."""
        if not self.answerer.reads_labels:
            why = "its answerer reasons before the answer" if self.answerer.reasoning else "its answer names no option"
            return [self._cannot_read(ChoiceRead(why=why, kind="answerer")) for _ in queries]
        if self.spec.thinks or self._thinks:  # its first tokens are thinking: no label's probability to read
            return [
                self._cannot_read(ChoiceRead(why="the model thinks before it answers", kind="thinks")) for _ in queries
            ]
        if self._no_logprobs:
            return [self._cannot_read(self._no_logprobs) for _ in queries]
        seeds = [int(s) for s in rng.integers(2**31 - 1, size=len(queries))]
        options = {"logprobs": True, "top_logprobs": TOP_LOGPROBS, "max_tokens": LABEL_TOKENS}
        requests = [(self.answerer.label_messages(q), [(0, seeds[i])], None, options) for i, q in enumerate(queries)]
        out: list[ChoiceRead] = []
        try:
            replies = self.client.complete_many(self.spec, requests, self.name, purpose="read")
        except OptionRefused as exc:  # a provider that takes no logprobs: sampled, never void
            self._no_logprobs = ChoiceRead(
                why=f"the provider refused log-probabilities ({exc.error.detail[:120]})", kind="no_logprobs"
            )
            return [self._cannot_read(self._no_logprobs) for _ in queries]
        for (done,) in replies:
            if not done.ok:
                out.append(ChoiceRead(void=True, why=done.void or "void"))
                continue
            if done.thinking is not None or done.thinking_cut:  # it thought first: read no more of it
                self._thinks = True
                out.append(self._cannot_read(ChoiceRead(why="the model thinks before it answers", kind="thinks")))
                continue
            got = option_probabilities(done.logprobs, self.answerer.option_labels, self.spec.temperature, min_mass)
            if not done.logprobs:
                self._no_logprobs = got
            out.append(got if got.ok else self._cannot_read(got))
        return out

    def _cannot_read(self, got: ChoiceRead) -> ChoiceRead:
        """``got`` (a read that failed), said once per model and kind of failure."""
        with self._lock:
            first = got.kind not in self._said
            self._said.add(got.kind)
        if first:
            log.warning(
                "%s (%s): p(correct) sampled instead of read from its probabilities: %s",
                self.name,
                self.spec.model,
                got.why,
            )
        return got

    def describe(self) -> dict[str, Any]:
        """What the run's ``run_start`` records of this player: its model and how it decodes (the
        temperature it runs at, where it takes no other than its provider's default), and how
        much it thinks, where set."""
        spec = self.spec
        used = self.client.shaper.shape(spec, self.name).temperature
        thinking = {
            k: v
            for k, v in (
                ("reasoning_effort", spec.reasoning_effort),
                ("thinking_budget", spec.thinking_budget),
                ("thinking", spec.thinking),
            )
            if v is not None
        }
        return {
            "name": self.name,
            "kind": "LLMPlayer",
            "model": spec.model,
            "api_base": spec.base_url,
            "temperature": spec.temperature if used is None else used,
            "max_tokens": spec.max_tokens,
            **thinking,
            **({"temperature_asked": spec.temperature} if used is not None and used != spec.temperature else {}),
        }


def build_llm_players(
    configs: Sequence[LLMPlayerConfig],
    client: LLMClient,
    make_modules: Callable[[], GameModules],
    decoding: Decoding | None = None,
) -> list[LLMPlayer]:
    """One player per ``players.llm`` entry, each with its own copy of the game's modules (so an
    optimiser may tune one player's prompts without touching another's). ``decoding``: how every
    model decodes when the estimator says (greedy: temperature 0, its reply limit), over the entry's."""
    players = []
    for c in configs:
        spec = spec_of_config(c, decoding)
        players.append(LLMPlayer(c.name, spec, client, make_modules(), c.setter_extra_body, c.setter_repair or "show"))
    return players

"""A real OpenAI-compatible chat-completions server on loopback, playing deterministic players.

Tests and benchmarks start it to stand in for a model provider; users can start it too, to try
LLM cohorts with no model at hand (``python -m skate.llm.fake_server --port 8000``, then a
cohort whose ``api_base`` is ``http://127.0.0.1:8000/v1``).

Each *model name* is a fake player with a skill in [0, 1]. The server reads the input fields of
a request (the ``[[ ## name ## ]]`` sections of its last user message, before DSPy's "Respond
with" line) and hands it to the game whose fake player claims those fields
(:meth:`skate.games.base.Game.fake_player`): every registered game is played, and what a fake
model writes or answers is that game's business. Every choice is drawn from the request's
``seed`` (and the choice index when ``n`` > 1), so the same request gives the same reply; at
``temperature`` 0 (greedy decoding) from the request's input fields alone (:func:`greedy_draw`),
so a question gets the same reply whatever seed or prompt template carries it: skate's own
``estimator=greedy`` request and the same task exported by :mod:`skate.export` and asked by
lm-evaluation-harness or Inspect (whose prompt holds the same ``[[ ## name ## ]]`` fields before
a "Respond with the corresponding output fields" line) are answered alike.

Demonstrations can be made to help, so that a test can watch a prompt optimiser improve a
metric: a model with a ``demo_gain`` plays a request that carries at least one few-shot
demonstration (:func:`count_demos`) with skill ``min(1, skill + demo_gain)`` instead of its skill.

A DSPy request no game claims (DSPy's optimisers ask their own questions: MIPROv2's instruction
proposer and dataset summariser) is answered in ChatAdapter's format, every requested output
field filled with a short text drawn from the seed (:func:`unclaimed_reply`): a task instruction
for a field named like ``*instruction*``, a sentence of description for ``*observations*``,
``*summary*`` or ``*description*``. A message that is no DSPy request (it asks for no output
field) gets "I do not understand the request."

Faults are injected per model: ``rate_limit`` (429 with ``Retry-After``), ``server_error``
(500), ``slow`` (sleeps past the client's timeout), ``malformed`` (a 200 whose body is not
JSON), ``no_option`` (a reply that answers nothing), ``cut_reasoning`` (a reply with a
``reasoning`` field is cut off halfway through it, with ``finish_reason`` "length", as when
``max_tokens`` runs out while a model is still thinking; replies without one are whole), and
``down`` (every request fails with 500). Three more show what real models do to the format:
``cut`` (every reply is cut off halfway, ``finish_reason`` "length", as when ``max_tokens``
runs out), ``empty`` (a 200 whose reply is the empty string, as a chat template that does not
suit the model gives) and ``prose`` (the fields wrapped in chatter: "Sure! Here is my answer:"
before, "Hope this helps!" after; a JSON reply also goes in a code fence). Five more are what real
small models did to the plain reply format (:mod:`skate.llm.plain`) when they played COP and
PyJail: ``uncalled`` (the program inside ``def main():``, never called), ``placeholder`` (every
numbered item the template's ``...``), ``unclosed_fence`` (the other fields written inside the
program's fence, closed only at the end), ``quoted`` (the fenced text sent as a string literal,
quotes and all) and ``echo`` (the request's own text written back until the token limit: cut,
``finish_reason`` "length"). ``copy_demo`` is what the Qwen models did with demonstrations: a
request that carries some is answered with the last one's reply, word for word (others as usual).
``repeat`` is what the 1.5B did round after round: every reply drawn with one seed for the whole
run, so a setter sends the same task again whatever its history shows (and is not unique).
``resend`` is what the cohort did when shown a rejection and its own reply: a request with
repair turns is answered with the last reply in it, word for word (a first request as usual).
``first_label`` is a position bias in a label read: nine tenths of the labels' probability on
the first label, whatever the options (what single reads of the Qwen models looked like).
``rambling`` is what the 0.5B wrote for MIPROv2's instruction proposer: a request no game claims
(an optimiser's own) is answered with fragments of a JSON object that DSPy cannot read.
A ``latency_s``
delays every reply. The server counts requests and the most in flight. :meth:`FakeLLMServer.stop`
is a killed server (every open connection cut); ``start()`` again serves on the same port.

**Log-probabilities.** A request that wants an option's label alone (the line
:func:`skate.llm.plain.label_request` ends it with) is answered with the label, and with
``logprobs`` its first token carries ``top_logprobs``: every label with how often the fake model
answers it (:data:`skate.llm.fake_replies.LABEL_DRAWS` answers drawn), sharpened as a client at the request's temperature
would undo (:func:`skate.llm.fake_replies.token_logprobs`), so a p(correct) read from them is what sampling the fake model
finds. Four faults show a provider that cannot be read: ``no_logprobs`` (none in the reply),
``refuse_logprobs`` (HTTP 400 naming ``logprobs``), ``few_logprobs`` (two alternatives only) and
``chatty`` (the reply starts "The answer is", which holds nearly all the first token's probability).
As a real server, it ends a reply before the first of the request's ``stop`` sequences
(``finish_reason`` "stop", counted in ``stats.stopped``), reports the prompt tokens a prompt
cache holding the model's last request would have reused (``usage.prompt_tokens_details.
cached_tokens``), and with ``max_n`` refuses more than that many choices in one request with
llama.cpp's server's 400.

**Structured output.** A request with a ``response_format`` carrying a JSON schema (OpenAI's
``{"type": "json_schema", "json_schema": {"schema": ...}}`` or llama-cpp-python's
``{"type": "json_object", "schema": ...}``) is answered with one JSON object of the schema's
fields, in its order, each read from the section the fake player wrote (arrays and integers
decoded), as a server enforcing the schema would; it reads the output fields a DSPy
``JSONAdapter`` request asks for as well as ChatAdapter's. ``formats`` says which
``response_format`` types the server takes (default both, as llama.cpp's server); a request
with another one is refused with HTTP 400 naming ``response_format``, as a server without
JSON-schema support answers (``formats=()``, ``--formats none``: none at all;
``formats=("json_object",)``: like llama-cpp-python). Counted in ``stats.structured`` and
``stats.refused_format``.

``GET /v1/models`` lists the configured model names in OpenAI's format (``{"object": "list",
"data": [{"id": name, "object": "model", ...}]}``); the ``"*"`` entry (any name is served) is not
listed. Two options make the server behave like a real one towards mistakes, for
:mod:`skate.llm.preflight` and its tests (both off by default, when any model name is served and
no key is asked for): ``strict=True`` answers a chat request for a model name that is not
configured (when there is no ``"*"`` entry) with HTTP 404 and an OpenAI-style error body
(``code: model_not_found``); ``api_key="..."`` answers every request (chat or model list) that
does not carry ``Authorization: Bearer <key>`` with HTTP 401 (``code: invalid_api_key``). Both
kinds of rejected chat request count in ``stats.requests`` (and ``stats.unknown_model`` or
``stats.unauthorized``); model-list requests count in ``stats.model_lists``.

On the command line each model is ``name=skill`` or ``name=skill+gain`` (the gain is its
``demo_gain``): ``python -m skate.llm.fake_server --port 8000 ace=0.9 mid=0.6 low=0.3+0.5``
(``--strict`` and ``--api-key KEY`` set the options above); ``@style`` makes it a reasoning
model (``r1=0.9@inline``, ``o=0.8@openai``: :mod:`skate.llm.fake_wire`).

**Reasoning models** (``FakeModel.thinking``, ``rules``; :mod:`skate.llm.fake_wire`): thinking with
decoys, hidden, apart or inline; OpenAI's rules for reasoning models; Anthropic's Messages API and
Gemini's ``generateContent`` for LiteLLM's own clients. ``stats`` counts every reply's tokens.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from skate.games import FakePlayer, FakeRequest, load_games, seeded_random
from skate.llm import plain
from skate.llm.fake_http import Failure, Played, _Listener, handler_for
from skate.llm.fake_replies import (
    LABEL_DRAWS,
    RAMBLING,
    SMALL_MODEL_SLIPS,
    _request_user,
    copied_demo,
    count_demos,
    cut_in_half,
    cut_in_reasoning,
    echo_request,
    label_request,
    repair_turns,
    resent_reply,
    token_logprobs,
    wrap_in_prose,
)
from skate.llm.fake_requests import (
    as_json_reply,
    as_plain_reply,
    greedy_draw,
    read_request,
    response_schema,
    unclaimed_reply,
)
from skate.llm.fake_wire import (
    CHARS_PER_TOKEN,
    THINKING_STYLES,
    Thought,
    completion_limit,
    think,
    thinking_budget,
    thinking_text,
)
from skate.llm.sections import sections


@dataclass
class FakeModel:
    """One fake model: its ``skill`` in [0, 1], its ``faults`` (fault -> probability per request),
    and ``demo_gain``, the skill it gains on a request that carries few-shot demonstrations
    (:func:`count_demos`): such a request is played with ``min(1, skill + demo_gain)``."""

    skill: float = 0.5
    faults: dict[str, float] = field(default_factory=dict)  # fault -> probability per request
    demo_gain: float = 0.0
    # A reasoning model: how it returns its thinking (:data:`skate.llm.fake_wire.THINKING_STYLES`;
    # "" answers at once), how many tokens it thinks per reply at its default effort, and whose
    # rules it refuses requests by ("openai_reasoning": OpenAI's reasoning models').
    thinking: str = ""
    thinking_tokens: int = 200
    rules: str = ""

    def __post_init__(self) -> None:
        if self.thinking and self.thinking not in THINKING_STYLES:
            raise ValueError(f"thinking={self.thinking!r}: use one of {', '.join(THINKING_STYLES)} (or '')")
        if self.rules not in ("", "openai_reasoning"):
            raise ValueError(f"rules={self.rules!r}: use 'openai_reasoning' (or '')")

    def skill_for(self, demos: int) -> float:
        """The skill a request with ``demos`` demonstrations is played with."""
        return min(1.0, self.skill + self.demo_gain) if demos > 0 and self.demo_gain else self.skill


@dataclass
class Stats:
    requests: int = 0
    by_model: dict[str, int] = field(default_factory=dict)
    by_fault: dict[str, int] = field(default_factory=dict)
    in_flight: int = 0
    max_in_flight: int = 0
    completion_choices: int = 0
    not_found: int = 0  # requests to other paths (answered 404)
    model_lists: int = 0  # GET /v1/models requests
    unknown_model: int = 0  # chat requests for a model not served (strict servers; answered 404)
    unauthorized: int = 0  # requests without the server's key (answered 401)
    embedding_requests: int = 0  # POST /v1/embeddings requests (any outcome)
    embedded_texts: int = 0  # texts given vectors
    structured: int = 0  # chat requests answered with a JSON object (a response_format schema)
    refused_format: int = 0  # chat requests refused for their response_format (answered 400)
    stopped: int = 0  # replies ended at one of the request's stop sequences
    refused_param: int = 0  # requests refused for a parameter the model does not take (its provider's rules)
    anthropic: int = 0  # POST /v1/messages requests (Anthropic's Messages API)
    gemini: int = 0  # POST .../models/<name>:generateContent requests (Gemini's API)
    prompt_tokens: int = 0  # every reply's usage, as the server counted it
    completion_tokens: int = 0  # thinking included
    thinking_tokens: int = 0


class FakeBrain:
    """Decides what each fake model says, through every registered game's fake player."""

    def __init__(self, models: dict[str, FakeModel]) -> None:
        self.models = models
        self.games: dict[str, FakePlayer] = {name: cls.fake_player() for name, cls in load_games().items()}

    def model(self, name: str) -> FakeModel:
        return self.models.get(name) or self.models.get("*") or FakeModel()

    def reply(self, name: str, messages: list[dict[str, Any]], seed: int, index: int) -> str:
        last = _request_user(messages)
        user = str(messages[last].get("content", "")) if last is not None else ""
        inputs, outputs = read_request(user)
        for player in self.games.values():
            if player.claims(inputs):
                skill = self.model(name).skill_for(count_demos(messages))
                text = player.reply(FakeRequest(name, skill, inputs, outputs, seed, index))
                if label_request(user):  # the label alone
                    return sections(text).get("answer", text).strip()
                kinds = plain.template_fields(user)
                return as_plain_reply(text, kinds) if kinds else text
        return unclaimed_reply(name, user, seed, index)

    def claimed(self, messages: list[dict[str, Any]]) -> bool:
        """Whether a game's fake player answers this request (else it is DSPy's own: an optimiser's)."""
        last = _request_user(messages)
        inputs, _ = read_request(str(messages[last].get("content", "")) if last is not None else "")
        return any(player.claims(inputs) for player in self.games.values())

    def label_probabilities(self, name: str, messages: list[dict[str, Any]]) -> dict[str, float]:
        """For a request that wants an option's label: how often the fake model answers each
        label (:data:`skate.llm.fake_replies.LABEL_DRAWS` answers drawn from the request's input fields alone), every
        label at least a trace; {} for any other request."""
        last = _request_user(messages)
        user = str(messages[last].get("content", "")) if last is not None else ""
        labels = label_request(user)
        if not labels:
            return {}
        inputs, _ = read_request(user)
        draw = seeded_random("labels", sorted(inputs.items())).getrandbits(31)
        counts = dict.fromkeys(labels, 0.0)
        for i in range(LABEL_DRAWS):
            got = self.reply(name, messages, draw, i).strip()
            if got in counts:
                counts[got] += 1
        total = sum(counts.values()) or 1.0
        floor = 1e-4
        probs = {k: max(floor, v / total) for k, v in counts.items()}
        norm = sum(probs.values())
        return {k: v / norm for k, v in probs.items()}


class FakeLLMServer:
    """``with FakeLLMServer({...}) as srv:`` then point players at ``srv.api_base``."""

    def __init__(
        self,
        models: dict[str, FakeModel] | None = None,
        latency_s: float = 0.0,
        retry_after_s: float = 0.05,
        slow_s: float = 5.0,
        host: str = "127.0.0.1",
        port: int = 0,
        fault_seed: int = 0,
        strict: bool = False,
        api_key: str | None = None,
        formats: tuple[str, ...] = ("json_schema", "json_object"),
        max_n: int | None = None,
    ) -> None:
        self.brain = FakeBrain(models or {"*": FakeModel()})
        self.formats = tuple(formats)  # the response_format types taken (others: HTTP 400)
        self.max_n = max_n  # the most choices one request may ask for (as llama.cpp's server: its slots)
        self._last_prompt: dict[str, str] = {}  # model -> its last prompt (the prefix a cache would hold)
        self.strict = strict  # a chat request for a model name not configured gets 404 (unless "*")
        self.api_key = api_key  # when set, requests without "Authorization: Bearer <key>" get 401
        self.latency_s, self.retry_after_s, self.slow_s = latency_s, retry_after_s, slow_s
        self.stats = Stats()
        self._lock = threading.Lock()
        self._fault_seed = fault_seed
        self._fault_rngs: dict[str, random.Random] = {}  # one stream per model
        self.log: list[dict[str, Any]] = []  # every request: model, n, seed, fault
        self._seedless: dict[str, int] = {}  # a request with no seed: how often it was asked (its draw)
        self._connections: set[socket.socket] = set()  # open now (kept alive between requests)
        self.httpd = _Listener((host, port), handler_for(self))
        self._thread: threading.Thread | None = None

    @property
    def api_base(self) -> str:
        host, port = self.httpd.server_address[:2]
        if not isinstance(host, str):  # typeshed allows bytes too; a bound AF_INET server's is a str
            host = bytes(host).decode()
        return f"http://{host}:{port}/v1"

    def start(self) -> FakeLLMServer:
        """Serve (again, after :meth:`stop`: on the same port, with the same models and counts)."""
        if self._thread is not None:  # stopped before: listen again where it listened
            self.httpd = _Listener(self.httpd.server_address[:2], handler_for(self))
        # stop() takes effect within 50 ms (the standard library's 0.5 s: a killed server answering on)
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True, name="fake-llm"
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop as a killed server does: no more connections, and every open one cut (a client's
        kept-alive connection too, and a request in flight gets no reply)."""
        self.httpd.shutdown()
        self.httpd.server_close()
        with self._lock:
            cut, self._connections = list(self._connections), set()
        for conn in cut:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def serves(self, name: str) -> bool:
        """Whether a chat request for this model name is answered (always, unless ``strict``)."""
        return not self.strict or name in self.brain.models or "*" in self.brain.models

    def _seedless_seed(self, name: str, messages: list[dict[str, Any]]) -> int:
        """The seed of a request that carries none (Anthropic's API takes none): the k-th time the
        same request is asked, draw k, so that samples differ and the same requests in any order
        get the same replies."""
        key = json.dumps([name, messages], sort_keys=True, ensure_ascii=False)
        with self._lock:
            k = self._seedless[key] = self._seedless.get(key, -1) + 1
        return seeded_random("seedless", key, k).getrandbits(31)

    def play(
        self, body: dict[str, Any], name: str, fault: str | None, thinking_style: str | None = None
    ) -> Played | Failure:
        """What model ``name`` answers an OpenAI-style chat request ``body`` (another wire format's
        request translated into one), with ``fault`` injected: the choices and their thinking, or
        the failure to send. ``thinking_style``: where a thinking model's thinking goes on this
        wire (Anthropic's and Gemini's APIs return it apart), over the model's own."""
        n = int(body.get("n") or 1)
        messages = body.get("messages") or []
        seed = int(body["seed"]) if isinstance(body.get("seed"), int) else self._seedless_seed(name, messages)
        if self.latency_s:
            time.sleep(self.latency_s)
        if fault == "rate_limit":
            return Failure(429, b'{"error": {"message": "slow down"}}', {"Retry-After": f"{self.retry_after_s:g}"})
        if fault in ("server_error", "down"):
            return Failure(500, b'{"error": {"message": "internal error"}}')
        if fault == "slow":
            time.sleep(self.slow_s)
        if fault == "malformed":
            return Failure(200, b'{"choices": [ this is not json')
        if fault == "refuse_logprobs" and body.get("logprobs"):  # a provider that takes none
            return Failure(
                400,
                json.dumps(
                    {
                        "error": {
                            "message": "logprobs is not supported for this model",
                            "type": "invalid_request_error",
                            "param": "logprobs",
                        }
                    }
                ).encode(),
            )
        if self.max_n is not None and n > self.max_n:  # llama.cpp's server's words
            return Failure(
                400,
                json.dumps(
                    {
                        "error": {
                            "code": 400,
                            "message": f"Field 'n': Value must be between 1 <= value <= {self.max_n}, but got {n}",
                            "type": "invalid_request_error",
                        }
                    }
                ).encode(),
            )
        rf = body.get("response_format")
        kind = rf.get("type") if isinstance(rf, dict) else None
        if rf is not None and kind != "text" and kind not in self.formats:
            with self._lock:
                self.stats.refused_format += 1
            return Failure(
                400,
                json.dumps(
                    {
                        "error": {
                            "message": f"response_format type {kind!r} is not supported by this server",
                            "type": "invalid_request_error",
                            "param": "response_format",
                            "code": None,
                        }
                    }
                ).encode(),
            )
        json_reply = kind in ("json_schema", "json_object")
        schema = response_schema(rf)
        temperature = body.get("temperature")
        greedy = isinstance(temperature, (int, float)) and not isinstance(temperature, bool) and temperature == 0
        texts = []
        for i in range(n):
            if fault == "no_option":
                texts.append("I am not sure; it could be several of these.")
            elif fault == "empty":
                texts.append("")
            elif fault == "copy_demo" and count_demos(messages):
                texts.append(copied_demo(messages))
            elif fault == "rambling" and not self.brain.claimed(messages):
                texts.append(RAMBLING)
            elif fault == "resend" and repair_turns(messages):
                texts.append(resent_reply(messages))
            elif fault == "repeat":  # one draw for the whole run: the same task every round
                text = self.brain.reply(name, messages, seeded_random("repeat", name).getrandbits(31), 0)
                texts.append(as_json_reply(text, schema) if json_reply else text)
            else:
                text = self.brain.reply(name, messages, *(greedy_draw(messages) if greedy else (seed, i)))
                texts.append(as_json_reply(text, schema) if json_reply else text)
        if json_reply:
            with self._lock:
                self.stats.structured += 1
        finish = "stop"
        if fault == "cut_reasoning":
            cut = [cut_in_reasoning(t) for t in texts]
            finish = "length" if cut != texts else finish
            texts = cut
        elif fault == "cut":
            texts, finish = [cut_in_half(t) for t in texts], "length"
        elif fault == "prose":
            texts = [wrap_in_prose(t, json_reply) for t in texts]
        elif fault in SMALL_MODEL_SLIPS:
            if fault == "echo":  # the request written back until the token limit ran out
                user = _request_user(messages)
                texts, finish = (
                    [echo_request(str(messages[user]["content"]) if user is not None else "") for _ in texts],
                    "length",
                )
            else:
                texts = [SMALL_MODEL_SLIPS[fault](t) for t in texts]
        logprobs = None
        if body.get("logprobs") and fault != "no_logprobs":
            dist = self.brain.label_probabilities(name, messages)
            if fault == "first_label" and dist:  # a position bias: most of the mass on the first label
                first = next(iter(dist))
                dist = {k: 0.1 * v + (0.9 if k == first else 0.0) for k, v in dist.items()}
            if fault == "chatty" and dist:
                texts = [f"The answer is {t}" for t in texts]
            t_req = float(temperature) if isinstance(temperature, (int, float)) and temperature else 1.0
            logprobs = [
                token_logprobs(
                    t,
                    dist,
                    t_req,
                    int(body.get("top_logprobs") or 0),
                    chatty=fault == "chatty",
                    few=fault == "few_logprobs",
                )
                for t in texts
            ]
        model = self.brain.model(name)
        style = (thinking_style or model.thinking) if model.thinking else ""
        if thinking_style == "reasoning_content" and "thinking" not in body:
            style = ""  # Anthropic's models think only when the request turns thinking on
        tokens = thinking_budget(body, model.thinking_tokens) if style else 0
        limit = completion_limit(body)
        thoughts = [
            think(t, thinking_text(t, tokens, (name, seed, i)), style, limit, finish)
            if tokens
            else Thought(t, None, 0, finish)
            for i, t in enumerate(texts)
        ]
        if logprobs is not None and tokens:  # a model that thinks first: its first tokens are thinking, not a label
            logprobs = [token_logprobs(t.thinking or t.content, {}, 1.0, 0) for t in thoughts]
        stops = body.get("stop")
        stops = [stops] if isinstance(stops, str) else [x for x in stops or () if isinstance(x, str) and x]
        met: list[str | None] = [None] * len(thoughts)
        for i, t in enumerate(thoughts):  # as a real server: the reply ends before its first stop sequence
            found = [(t.content.find(x), x) for x in stops if x in t.content]
            if found:
                at, which = min(found)
                t.content, t.finish, met[i] = t.content[:at], "stop", which
                with self._lock:
                    self.stats.stopped += 1
        inline = style in ("inline", "inline_bare")
        written = sum(len(t.content) // CHARS_PER_TOKEN for t in thoughts)
        thinking = sum(t.thinking_tokens for t in thoughts)
        completion = written if inline else written + thinking
        prompt = json.dumps(messages)
        with self._lock:  # a prompt cache holding the model's last prompt: its common prefix is reused
            last = self._last_prompt.get(name, "")
            self._last_prompt[name] = prompt
            self.stats.completion_choices += n
        common = next(
            (i for i, (a, b) in enumerate(zip(prompt, last, strict=False)) if a != b), min(len(prompt), len(last))
        )
        prompt_tokens = sum(len(str(m.get("content", ""))) for m in messages) // 4
        with self._lock:
            self.stats.prompt_tokens += prompt_tokens
            self.stats.completion_tokens += completion
            self.stats.thinking_tokens += thinking
        return Played(
            thoughts,
            seed,
            prompt_tokens,
            min(prompt_tokens, common // 4),
            completion,
            0 if inline else thinking,
            logprobs,
            met,
        )

    def _pick_fault(self, name: str) -> str | None:
        faults = self.brain.model(name).faults
        if faults.get("down"):
            return "down"
        if not faults:
            return None
        with self._lock:
            rng = self._fault_rngs.setdefault(name, seeded_random("faults", self._fault_seed, name))
            r = rng.random()
        acc = 0.0
        for fault, prob in sorted(faults.items()):
            acc += prob
            if r < acc:
                return fault
        return None


def parse_model(spec: str) -> tuple[str, FakeModel]:
    """``name=skill``, ``name=skill+gain`` (``low=0.3+0.5``: skill 0.3, demo_gain 0.5), either
    with ``@style`` for a reasoning model: one of :data:`skate.llm.fake_wire.THINKING_STYLES`, or
    ``openai`` (hidden thinking under OpenAI's rules for reasoning models): ``r1=0.9@inline``."""
    name, sep, value = spec.partition("=")
    value, at, style = value.partition("@")
    skill, plus, gain = value.partition("+")
    try:
        if not name or not sep or (plus and not gain) or (at and style not in (*THINKING_STYLES, "openai")):
            raise ValueError
        thinking, rules = ("hidden", "openai_reasoning") if style == "openai" else (style, "")
        return name, FakeModel(float(skill), demo_gain=float(gain) if plus else 0.0, thinking=thinking, rules=rules)
    except ValueError:
        raise ValueError(
            f"{spec!r} is not name=skill, name=skill+gain or either with @style (e.g. low=0.3+0.5, "
            f"r1=0.9@inline; styles: {', '.join((*THINKING_STYLES, 'openai'))})"
        ) from None


def arg_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description="Serve fake deterministic LLM players on loopback.")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--latency", type=float, default=0.0, help="seconds added to every reply")
    ap.add_argument(
        "--strict", action="store_true", help="answer a chat request for a model name not served with HTTP 404"
    )
    ap.add_argument("--api-key", default=None, help="answer requests without 'Authorization: Bearer KEY' with 401")
    ap.add_argument(
        "--formats",
        default="json_schema,json_object",
        help="response_format types taken, comma-separated (others get HTTP 400); 'none' refuses "
        "structured output like a server without JSON-schema support",
    )
    ap.add_argument(
        "models",
        nargs="*",
        default=["ace=0.9", "mid=0.6", "low=0.3"],
        help="models as name=skill, or name=skill+gain to play a request that carries few-shot "
        "demonstrations with skill min(1, skill+gain) (e.g. low=0.3+0.5); @style makes a "
        "reasoning model (r1=0.9@inline; hidden, reasoning_content, reasoning, inline, "
        "inline_bare, openai); default: ace=0.9 mid=0.6 low=0.3",
    )
    return ap


def parse_models(argv: list[str] | None = None) -> tuple[argparse.Namespace, dict[str, FakeModel]]:
    """The command line's options and its models (name -> FakeModel); exits on a bad model."""
    ap = arg_parser()
    args = ap.parse_args(argv)
    try:
        models = dict(parse_model(m) for m in args.models)
    except ValueError as e:
        ap.error(str(e))
    return args, models


def main(argv: list[str] | None = None) -> int:
    args, models = parse_models(argv)
    formats = tuple(f for f in args.formats.split(",") if f and f != "none")
    srv = FakeLLMServer(
        models, latency_s=args.latency, port=args.port, strict=args.strict, api_key=args.api_key, formats=formats
    )
    print(f"fake LLM players {sorted(models)} at {srv.api_base}", flush=True)
    try:
        srv.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())

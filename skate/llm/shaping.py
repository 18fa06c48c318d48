"""Each model is sent only the request parameters it takes, under the names it takes.

OpenAI's reasoning models refuse ``max_tokens`` (they take ``max_completion_tokens``), ``stop``,
``logprobs`` and any temperature but 1; Anthropic's extended thinking needs temperature 1. skate
learns a model's rules from two places, and keeps them per model and endpoint for the run
(:class:`Shaper`, one per client):

- **LiteLLM's rules**, for a model that thinks and whose provider LiteLLM knows: the request
  parameters skate sends are put through the pinned LiteLLM's own mapping
  (``litellm.utils.get_optional_params`` with ``drop_params``), and what it drops or renames is
  what skate drops or renames (:func:`table_changes`). Models that answer at once are sent what
  they always were (and LiteLLM is not imported for them).
- **The provider's own refusal**, for a model no table knows (a local server's, a new release):
  an HTTP 400 naming a parameter (OpenAI's ``unsupported_parameter`` / ``unsupported_value`` with
  its ``param``, or the same words in the message) makes skate drop that parameter, or rename it
  where the provider says what to use instead, and send the request again at once: once per model
  and parameter, said in one line and recorded in the event log (``llm_adjusted``), never a void
  call (:func:`refusal`).

What the game loses stays true to the game: a stop sequence the model does not take is applied
to its reply by skate (:func:`apply_stops`: the reply ends where the server would have ended
it); a temperature it cannot take is recorded as the one it runs at (1); a request for
log-probabilities it does not take is not sent (the estimator samples instead). Only skate's own
parameters are adjusted (:data:`ADJUSTABLE`): one the user set (``extra_body``, the thinking
settings) that the provider refuses stops the run in one line (:class:`ParameterRefused`).
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from skate.llm.spec import LOCAL_PROVIDERS, ModelSpec
from skate.llm.wire import CallFailed
from skate.runlog.records import StopRun

log = logging.getLogger(__name__)

# The request parameters skate itself sets, which a model may be sent without (or under another
# name) and the game still played: the rest are the user's.
ADJUSTABLE = ("max_tokens", "temperature", "stop", "logprobs", "top_logprobs", "seed", "n")
# The temperature a model that takes no other runs at (OpenAI's reasoning models: "only the
# default (1) value is supported"; Anthropic's extended thinking).
DEFAULT_TEMPERATURE = 1.0
# Providers whose requests LiteLLM's own mapping knows (the OpenAI-compatible ones are sent by
# skate; the others go through LiteLLM, which renames for them, so only what it drops counts).
LITELLM_SHAPED = (
    "openai",
    "deepseek",
    "xai",
    "openrouter",
    "groq",
    "mistral",
    "together_ai",
    "fireworks_ai",
    "anthropic",
    "gemini",
    "vertex_ai",
)


class ParameterRefused(StopRun):
    """A provider refused a parameter skate cannot do without (one the user set): the run stops
    cleanly, resumable once the setting is changed; the message says which and where it comes from."""


@dataclass(frozen=True)
class Change:
    """One thing sent differently to a model: a parameter ``dropped`` or ``renamed`` (to ``to``)."""

    param: str
    action: str  # dropped | renamed
    to: str | None = None
    source: str = ""  # "LiteLLM's rules", "Anthropic's rule for thinking", or the provider's refusal
    used: Any = None  # what the model runs at instead (a dropped temperature: 1.0)
    learnt: bool = False  # from the model's own replies (a refusal), not from a table: said, not only logged

    def line(self, who: str) -> str:
        what = f"'{self.param}' is sent as '{self.to}'" if self.action == "renamed" else f"'{self.param}' is not sent"
        after = (
            {
                "stop": ": skate ends each reply at the stop sequences itself",
                "temperature": f": it runs at temperature {self.used:g}" if self.used is not None else "",
                "logprobs": ": p(correct) is sampled instead of read",
                "top_logprobs": ": p(correct) is sampled instead of read",
                "n": ": each sample is its own request",
            }.get(self.param, "")
            if self.action == "dropped"
            else ""
        )
        return f"{who}: {what} ({self.source}){after}"

    def as_dict(self) -> dict[str, Any]:
        return {"param": self.param, "action": self.action, "to": self.to, "source": self.source, "used": self.used}


@dataclass
class Shape:
    """What one model and endpoint is sent differently, learnt so far."""

    changes: dict[str, Change] = field(default_factory=dict)

    def drops(self, param: str) -> bool:
        c = self.changes.get(param)
        return c is not None and c.action == "dropped"

    @property
    def temperature(self) -> float | None:
        """The temperature the model runs at when it takes none other (None: the one asked for)."""
        c = self.changes.get("temperature")
        return c.used if c is not None and c.action == "dropped" else None


def _value(spec: ModelSpec, name: str, options: dict[str, Any]) -> Any:
    if name in options:
        return options[name]
    return {"max_tokens": spec.max_tokens, "temperature": spec.temperature}.get(name)


def shaped(spec: ModelSpec, shape: Shape | None, options: dict[str, Any] | None) -> tuple[dict[str, Any], list[str]]:
    """``options`` for one request to ``spec`` under ``shape``: dropped parameters set to None
    (the transport leaves them out), renamed ones moved; and the stop sequences skate is to apply
    to the reply itself (the model takes none)."""
    out = dict(options or {})
    if shape is None or not shape.changes:
        return out, []
    stops: list[str] = []
    for name, change in shape.changes.items():
        if change.action == "renamed" and change.to:
            value = _value(spec, name, out)
            out[name] = None
            if value is not None and spec.openai_compatible:  # LiteLLM renames for the providers it sends to
                out[change.to] = value
        elif change.action == "dropped":
            if name == "stop":
                stop = out.get("stop")
                stops = [stop] if isinstance(stop, str) else [s for s in stop or () if isinstance(s, str) and s]
            out[name] = None
            if name == "logprobs":
                out["top_logprobs"] = None
    return out, stops


def apply_stops(text: str, stops: Sequence[str]) -> tuple[str, bool]:
    """``text`` ended before the first of ``stops`` in it, as a server ends a reply there; and
    whether one was met."""
    at = min((i for i in (text.find(s) for s in stops if s) if i >= 0), default=-1)
    return (text[:at], True) if at >= 0 else (text, False)


# ---------------------------------------------------------------------------- LiteLLM's rules
_PROBE_STOP = ["\n\n\n\n"]


def table_changes(spec: ModelSpec) -> list[Change]:
    """What LiteLLM's own request mapping drops or renames of skate's parameters for ``spec``,
    for a model that thinks and a provider LiteLLM knows (nothing otherwise: a model that answers
    at once is sent what it always was); and Anthropic's rule that a thinking model runs at
    temperature 1."""
    if spec.provider in LOCAL_PROVIDERS or spec.provider not in LITELLM_SHAPED or not spec.thinks:
        return []
    changes: list[Change] = []
    if spec.provider == "anthropic" and spec.temperature != DEFAULT_TEMPERATURE:
        changes.append(
            Change("temperature", "dropped", source="Anthropic's rule for extended thinking", used=DEFAULT_TEMPERATURE)
        )
    probe: dict[str, Any] = {
        "temperature": spec.temperature,
        "max_tokens": spec.max_tokens,
        "stop": _PROBE_STOP,
        "logprobs": True,
        "top_logprobs": 5,
        "seed": 1,
    }
    try:
        from litellm.utils import get_optional_params  # only for a model that thinks: LiteLLM costs seconds to import

        thinking = {k: v for k, v in spec.request_fields().items() if k in ("reasoning_effort", "thinking")}
        got = get_optional_params(
            model=spec.name, custom_llm_provider=spec.provider, drop_params=True, **probe, **thinking
        )
    except Exception as exc:  # noqa: BLE001 - LiteLLM's own checks: its rules unknown, learnt from refusals
        log.debug("LiteLLM has no request rules for %s (%s: %s)", spec.model, type(exc).__name__, exc)
        return changes
    source = "LiteLLM's rules for this model"
    for name in probe:
        if name in got or any(c.param == name for c in changes):
            continue
        if name == "top_logprobs" and "logprobs" not in got:
            continue  # dropped with logprobs (shaped)
        if name == "max_tokens" and got.get("max_completion_tokens") == spec.max_tokens:
            changes.append(Change(name, "renamed", to="max_completion_tokens", source=source))
        elif (
            name == "max_tokens"
            and got.get("max_output_tokens") == spec.max_tokens
            or name == "stop"
            and got.get("stop_sequences") == _PROBE_STOP
        ):
            continue  # LiteLLM's own name for it (Gemini's, Anthropic's): it renames it as it sends
        elif name == "temperature":
            changes.append(Change(name, "dropped", source=source, used=DEFAULT_TEMPERATURE))
        elif not (name == "seed" and not spec.openai_compatible):  # LiteLLM drops a seed itself
            changes.append(Change(name, "dropped", source=source))
    return changes


# ------------------------------------------------------------------------- the provider's refusal
_UNSUPPORTED = re.compile(r"unsupported (?:parameter|value)s?:?\s*['\"`]?(\w+)['\"`]?", re.IGNORECASE)
_NOT_SUPPORTED = re.compile(r"['\"`](\w+)['\"`] (?:is|are) not supported", re.IGNORECASE)
_USE_INSTEAD = re.compile(r"use ['\"`](\w+)['\"`] instead", re.IGNORECASE)


def _error_body(exc: CallFailed) -> dict[str, Any]:
    text = exc.body or exc.detail
    start = text.find("{")
    if start < 0:
        return {}
    try:
        body, _ = json.JSONDecoder().raw_decode(text, start)
    except ValueError:
        return {}
    err = body.get("error", body) if isinstance(body, dict) else None
    return err if isinstance(err, dict) else {}


def refusal(exc: CallFailed) -> tuple[str, str | None, str] | None:
    """The parameter a 400/422 refuses, the name the provider says to use instead (None: drop
    it), and the provider's words; None when the refusal names no parameter."""
    if exc.status not in (400, 422):
        return None
    err = _error_body(exc)
    message = str(err.get("message") or exc.body or exc.detail)
    code = str(err.get("code") or "")
    param = err.get("param") if isinstance(err.get("param"), str) else None
    if (
        param
        and code not in ("unsupported_parameter", "unsupported_value")
        and not _UNSUPPORTED.search(message)
        and not _NOT_SUPPORTED.search(message)
    ):
        param = None  # a parameter named for another reason (a value out of range): not a refusal of it
    if not param:
        m = _UNSUPPORTED.search(message) or _NOT_SUPPORTED.search(message)
        param = m.group(1) if m else None
    if not param:
        return None
    instead = _USE_INSTEAD.search(message)
    return param, (instead.group(1) if instead and instead.group(1) != param else None), " ".join(message.split())[:200]


# ------------------------------------------------------------------------------------- state
class Shaper:
    """The shapes of every model and endpoint a client calls (thread-safe): LiteLLM's rules when
    a model is first called, then what its refusals teach. ``on_change(info)`` is told each
    change once (the run's event log); each is also said in one line."""

    def __init__(self, on_change: Callable[[dict[str, Any]], None] | None = None) -> None:
        self._lock = threading.Lock()
        self._shapes: dict[tuple[str, str], Shape] = {}
        self.on_change = on_change
        self.told: list[dict[str, Any]] = []  # every change told, in order (for a log opened later)

    def shape(self, spec: ModelSpec, player: str = "") -> Shape:
        key = (spec.model, spec.base_url)
        with self._lock:
            found = self._shapes.get(key)
            if found is not None:
                return found
        changes = table_changes(spec)
        with self._lock:
            if key in self._shapes:
                return self._shapes[key]
            shape = self._shapes[key] = Shape({c.param: c for c in changes})
        for c in changes:
            self._tell(spec, player, c)
        return shape

    def learn(self, spec: ModelSpec, player: str, exc: CallFailed, sent: Collection[str]) -> Change | None:
        """What a refusal of a request that carried ``sent`` (the fields skate added to the
        body, by name) teaches about ``spec``: the change made (the request can be sent again),
        or None when the refusal names no parameter, or one already changed. A refused parameter
        that is not skate's to change raises :class:`ParameterRefused`."""
        found = refusal(exc)
        if found is None:
            return None
        param, instead, words = found
        shape = self.shape(spec, player)
        if param in shape.changes or param not in sent:
            return None
        if param not in ADJUSTABLE:
            where = (
                "its thinking settings"
                if param in ("reasoning_effort", "thinking", "reasoning", "think", "chat_template_kwargs")
                else "extra_body"
            )
            raise ParameterRefused(
                f"player {player!r} ({spec.model}): the provider refused '{param}' (HTTP {exc.status}: {words}); it "
                f"comes from {where}: change or remove it for this player (players.llm), then resume"
            )
        source = f"the provider refused it: HTTP {exc.status}: {words}"
        change = (
            Change(param, "renamed", to=instead, source=source, learnt=True)
            if instead
            else Change(
                param,
                "dropped",
                source=source,
                learnt=True,
                used=DEFAULT_TEMPERATURE if param == "temperature" else None,
            )
        )
        with self._lock:
            if param in shape.changes:
                return None
            shape.changes[param] = change
        self._tell(spec, player, change)
        return change

    def learn_stop(self, spec: ModelSpec, player: str) -> Change | None:
        """A model whose server ended a reply at a stop sequence inside its thinking: stops are
        skate's to apply to its replies from now on (the thinking is taken out first)."""
        shape = self.shape(spec, player)
        change = Change("stop", "dropped", source="the server stopped a reply inside its thinking", learnt=True)
        with self._lock:
            if "stop" in shape.changes:
                return None
            shape.changes["stop"] = change
        self._tell(spec, player, change)
        return change

    def attach(self, on_change: Callable[[dict[str, Any]], None]) -> None:
        """Tell changes to ``on_change`` from now on, after those told so far (e.g. found while the
        models were checked, before the run's log was begun)."""
        with self._lock:
            self.on_change, held = on_change, list(self.told)
        for info in held:
            on_change(info)

    def _tell(self, spec: ModelSpec, player: str, change: Change) -> None:
        who = f"{player} ({spec.model})" if player else spec.model
        # What a refusal taught is said; what LiteLLM's rules say of a known model goes to the log file.
        log.log(logging.WARNING if change.learnt else logging.INFO, "%s", change.line(who))
        info = {"player": player, "model": spec.model, **change.as_dict()}
        with self._lock:
            self.told.append(info)
            tell = self.on_change
        if tell is not None:
            tell(info)

"""DSPy modules for setting and answering: the shared parts every game's modules build on.

Prompt optimisers (:mod:`skate.optimize`) tune these modules' instructions and demonstrations
through DSPy, with every model call going through the project's client
(:class:`skate.llm.bridge.SkateLM`); the game formats its requests from the same ``predict``,
so what an optimiser compiled is what the model sees in the game.

A game's ``modules.py`` defines its typed signatures and subclasses :class:`SetterModule` and
:class:`AnswererModule` (or uses :class:`MultipleChoiceAnswerer` / :class:`FreeFormAnswerer`,
the answer formats' own answerers). Each module holds a ``dspy.Predict`` over its signature, so
DSPy's prompt optimisers can tune its instructions and demonstrations. The game does not go
through DSPy's LM layer: a module turns its inputs into chat messages with DSPy's
``ChatAdapter`` (instructions, fields and any demos), skate's
:class:`~skate.llm.client.LLMClient` sends them (cache, retries, void, accounting), and the
module reads the reply back with the same adapter, leniently.

**Structured output.** Where the model's server accepts a JSON schema for its reply
(``response_format``: OpenAI, vLLM, Ollama, llama.cpp; ``llm.structured``), every module asks
for its signature's output fields as one JSON object instead: :meth:`_Module.messages` with
``structured=True`` formats the request with DSPy's ``JSONAdapter`` (the same instructions,
inputs and demos, the outputs described as a JSON object), and :meth:`_Module.response_format`
is the schema of the signature's output fields (their types; a ``Literal`` is an enum, so an
answerer's letter can only be one of the options). :meth:`_Module.read_reply` takes a reply in either
format: a JSON object (bare, in a code fence or inside prose) is turned back into the fields'
``[[ ## name ## ]]`` sections, so each game's ``parse`` reads both without a change.
"""

from __future__ import annotations

import dataclasses
import json
import re
import textwrap
from abc import abstractmethod
from collections.abc import Callable, Sized
from dataclasses import dataclass
from typing import Any, Literal, get_origin

import dspy
import pydantic

import skate.llm  # noqa: F401  (environment defaults before dspy is imported)
from skate.llm import plain
from skate.llm.adapters import CompactChatAdapter, LabelAdapter, PlainAdapter
from skate.llm.sections import MARKER, sections
from skate.runlog.records import PASS_MARK, SetterContext

LETTERS = "ABCDEFGHIJ"
ITEM_SEED = "skate_seed"  # an optimiser's item's own sample seed (an input _Module.forward takes off)

_ADAPTER = dspy.ChatAdapter(use_json_adapter_fallback=False)
_JSON_ADAPTER = dspy.JSONAdapter()  # only its formatting is used: the requests go through skate's client


def adapter() -> dspy.ChatAdapter:
    return _ADAPTER


class _Formatter:
    """``adapter.format`` with the system message and demos formatted once, not per call.

    They depend only on the predictor's signature (instructions included) and demos, which an
    optimiser may change: the cache is keyed on exactly those. The user message is formatted
    per call; where every input is a ``str`` (every game's are), it is put together here, as
    DSPy's ``format_user_message_content`` does (a string field's value is the string itself:
    DSPy serialises it through a pydantic ``TypeAdapter`` built per field and call, which was
    most of the formatting's CPU), with the output-requirements line formatted once per key.
    The first call for each key checks that this gives DSPy's own message, and uses DSPy's
    formatting for that key if not.
    """

    def __init__(self, adapter: dspy.ChatAdapter = _ADAPTER) -> None:
        self.adapter = adapter
        # (signature, key, messages before the user's, input field names, output requirements
        # line; the names are None where the user message is left to DSPy), swapped as one.
        self._cached: tuple[Any, tuple, list[dict[str, Any]], tuple[str, ...] | None, str | None] | None = None

    def __call__(self, predict: dspy.Predict, inputs: dict[str, Any]) -> list[dict[str, Any]]:
        sig, demos = predict.signature, predict.demos
        key = (id(sig), sig.instructions, id(demos), len(demos))
        cached = self._cached
        if cached is None or cached[0] is not sig or cached[1] != key:
            full = self.adapter.format(sig, demos, inputs)
            self._cached = (sig, key, full[:-1], *self._own_user_message(sig, inputs, full[-1]))
            return full
        _, _, prefix, names, requirements = cached
        if names is not None and all(type(v) is str for v in inputs.values()):
            user = _user_message(names, inputs, requirements)
        else:
            user = self.adapter.format_user_message_content(sig, inputs, main_request=True)
        return [*prefix, {"role": "user", "content": user}]

    def _own_user_message(
        self, sig: type[dspy.Signature], inputs: dict[str, Any], user: dict[str, Any]
    ) -> tuple[tuple[str, ...] | None, str | None]:
        """The input field names and output-requirements line :func:`_user_message` needs to
        give ``user`` (DSPy's user message for ``inputs``), or ``(None, None)`` where it cannot
        be checked (an input that is not a string) or does not match."""
        if not all(type(v) is str for v in inputs.values()):
            return None, None
        names = tuple(sig.input_fields)
        requirements = self.adapter.user_message_output_requirements(sig)
        if user != {"role": "user", "content": _user_message(names, inputs, requirements)}:
            return None, None
        return names, requirements


def _user_message(names: tuple[str, ...], inputs: dict[str, str], requirements: str | None) -> str:
    """ChatAdapter's ``format_user_message_content(signature, inputs, main_request=True)`` for
    string inputs: each field's ``[[ ## name ## ]]`` section in the signature's order, then the
    output requirements."""
    parts = ["", *(f"[[ ## {k} ## ]]\n{inputs[k]}" for k in names if k in inputs)]
    if requirements is not None:
        parts.append(requirements)
    parts.append("")
    return "\n\n".join(parts).strip()


# ------------------------------------------------------------------------ structured output
def output_schema(signature: type[dspy.Signature]) -> dict[str, Any]:
    """The JSON schema of a reply carrying exactly ``signature``'s output fields, in their order:
    each field's type (``str`` a string, ``int`` an integer, ``list[str]`` an array of strings, a
    ``Literal`` an enum of its values), every field required and no other allowed (what OpenAI's
    strict mode asks; llama.cpp, vLLM and Ollama turn it into a grammar)."""
    fields: dict[str, Any] = {}
    for name, f in signature.output_fields.items():
        if get_origin(f.annotation) is dict:
            raise ValueError(f"output field {name!r} is an open mapping ({f.annotation}): no strict schema for it")
        extra = f.json_schema_extra or {}
        fields[name] = (f.annotation, pydantic.Field(description=extra.get("desc") or None))
    model = pydantic.create_model("Reply", __config__=pydantic.ConfigDict(extra="forbid"), **fields)
    schema = model.model_json_schema()

    def close(part: Any) -> None:
        if isinstance(part, dict):
            part.pop("title", None)
            if part.get("type") == "object":
                part.setdefault("properties", {})
                part["required"] = list(part["properties"])
                part["additionalProperties"] = False
            for key in ("properties", "$defs"):
                for sub in (part.get(key) or {}).values():
                    close(sub)
            for key in ("items", "anyOf"):
                value = part.get(key)
                for sub in value if isinstance(value, list) else [value]:
                    close(sub)

    close(schema)
    return schema


def _schema_name(signature: type[dspy.Signature]) -> str:
    name = re.sub(r"[^A-Za-z0-9_-]", "_", signature.__name__)[:64]
    return name if name and name != "StringSignature" else "reply"


def find_json_object(text: str, fields: Any) -> tuple[dict[str, Any], bool] | None:
    """The first JSON object in ``text`` with at least one of ``fields`` as a key, leniently:
    bare, in a code fence or inside prose; a truncated or slightly broken one is repaired
    (DSPy's JSON reader does the same). Returns the object and whether it was whole (parsed
    without repair), or None when the text holds no such object."""
    wanted = set(fields)
    decoder = json.JSONDecoder(strict=False)  # raw newlines inside strings are common
    starts = [m.start() for m in re.finditer(r"\{", text)]
    for start in starts:
        try:
            obj, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(obj, dict) and wanted & set(obj):
            return obj, True
    if starts:
        import json_repair  # DSPy's own lenient JSON reader (a dependency of dspy)

        for start in starts[:3]:
            try:
                obj = json_repair.loads(text[start:])
            except Exception:  # noqa: BLE001 - unreadable: no object
                continue
            if isinstance(obj, dict) and wanted & set(obj):
                return obj, False
    return None


def _value_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def json_to_sections(obj: dict[str, Any], fields: Any, whole: bool = True) -> str:
    """A reply's fields as ChatAdapter's ``[[ ## name ## ]]`` sections (``fields`` in order;
    those the object lacks are left out), ending with the ``completed`` marker when the object
    was ``whole``: what the games' parsers read."""
    parts = [f"[[ ## {name} ## ]]\n{_value_text(obj[name])}" for name in fields if name in obj]
    if whole:
        parts.append("[[ ## completed ## ]]")
    return "\n\n".join(parts)


def _has_output_sections(text: str, fields: Any) -> bool:
    return any(name in fields for name in MARKER.findall(text))


def strip_fences(code: str) -> str:
    m = re.search(r"```(?:python|py)?\s*\n(.*?)```", code, flags=re.DOTALL)
    return (m.group(1) if m else code).strip("\n")


# ------------------------------------------------------------------------- setter context
def render_situation(ctx: SetterContext) -> str:
    lines = [
        f"Round {ctx.round} of {ctx.rounds}. This is attempt {ctx.attempt}; counting it you "
        f"have {ctx.attempts_left} attempt(s) left this round."
    ]
    topic = (ctx.assignment or {}).get("topic")
    if topic:  # a game that gives its setters a topic each round (COP's game.topics)
        lines.append(f"This round your task is about {topic}.")
    if ctx.failed:
        lines.append("Your earlier attempts this round were rejected:")
        for f in ctx.failed:
            snippet = f.text if len(f.text) <= 1500 else f.text[:1500] + "\n..."
            lines.append(f"- attempt {f.attempt}: {f.reason.value}: {f.detail}\n{snippet}")
    return "\n".join(lines)


def render_history(ctx: SetterContext) -> str:
    """The history the strategy lets the setter see, each task with the scores it reveals (the
    share of answer samples each player got right, as a percentage)."""
    if not ctx.history:
        return "(none)"
    out = []
    for item in ctx.history:
        head = f"Task #{item.number} (round {item.round}, set by {'you' if item.setter == ctx.player else item.setter})"
        if item.p_correct:
            scores = ", ".join(f"{'you' if k == ctx.player else k} {percent(v)}" for k, v in item.p_correct.items())
            head += f"; answered correctly: {scores}"
        out.append(f"{head}\n{item.prompt}")
    return "\n\n".join(out)


def percent(p: float) -> str:
    """0.55 -> '55%'."""
    return f"{round(p * 100, 1):g}%"


# ------------------------------------------------------------------- setter guidance
# How a setter should aim its task, by augmentation strategy (what the history shows it: see
# skate.augment). Every strategy gets the common part; the rest depends on what it can see.
# The points follow SKATE's setter prompt (App. J); the wording is the project's own.
TARGET_BAND = (0.60, 0.80)  # the own score a setter should aim for, when it sees its own scores

_COMMON = (
    "Points come from the other players failing your task, so an easy task gains you nothing "
    "over them: write the hardest task you can still answer correctly yourself most of the time. "
    "Make each task original, and vary the idea and the form from one round to the next rather "
    "than reworking a theme you have already used."
)

_CALIBRATE = (
    "Each score is the share of answer samples that got the task right. Before you write, go "
    "through your own scores task by task. A task you got right more than {high} of the time was "
    "most likely easy for the others as well: make this one harder than those. A kind of task "
    "you got right less than {low} of the time is beyond what you can answer reliably and does "
    "not earn you its point: steer away from it. Aim for a task you would get right between "
    "{band_low} and {band_high} of the time."
)

STRATEGY_GUIDANCE: dict[str, str] = {
    "no_info": (
        "You are shown no earlier tasks and no scores, so there is nothing to calibrate against: "
        "judge the difficulty from your own sense of where careful solvers go wrong, and choose "
        "an idea you would not expect the other players to pick."
    ),
    "hist_tasks": (
        "The history lists your own earlier tasks without any scores, so it cannot tell you how "
        "hard they turned out to be. Use it for variety: note which ideas you have already used "
        "and build this round's task on one you have not."
    ),
    "hist_perf": (
        "The history lists your own earlier tasks, each with your own score on it as a percentage. " + _CALIBRATE
    ),
    "full_personal": (
        "The history lists your own earlier tasks, each with every player's score on it as a "
        "percentage. " + _CALIBRATE + " The other players' scores show where they are weak: a "
        "task they scored well below you on has found a weakness of theirs, worth probing again "
        "in a new form; one they scored as well as you on did not separate you from them."
    ),
    "full_context": (
        "The history lists every player's earlier tasks, each with every player's score on it as "
        "a percentage. " + _CALIBRATE + " Read the others' scores as well: kinds of task on which "
        "they scored low while you scored high are their weaknesses, so aim at those; kinds you "
        "scored low on are your own. Do not copy another player's task: take the weakness it "
        "found, not its program."
    ),
}


def render_guidance(strategy: str, pass_mark: float = PASS_MARK) -> str:
    """How a setter should aim its task under ``strategy`` (an augmentation strategy's name):
    the part every strategy gets, then the strategy's own. ``pass_mark`` is where a task
    becomes too hard (below it, its setter does not earn the task's answering point)."""
    try:
        own = STRATEGY_GUIDANCE[str(strategy)]
    except KeyError:
        raise ValueError(
            f"no setter guidance for augmentation strategy {strategy!r}: use one of {', '.join(STRATEGY_GUIDANCE)}"
        ) from None
    low = max(TARGET_BAND[0], pass_mark + 0.05)
    high = min(0.95, max(TARGET_BAND[1], low + 0.1))
    own = own.format(high=percent(high), low=percent(pass_mark), band_low=percent(low), band_high=percent(high))
    return f"{_COMMON}\n\n{own}"


# ---------------------------------------------------------------------------- base modules
class _Module(dspy.Module):
    """One ``dspy.Predict`` over a signature: ``messages(x)`` formats what the model is asked,
    ``parse(text)`` reads its reply back."""

    # Where set, the module asks for its replies in the plain format (:class:`PlainAdapter`,
    # with these field kinds, e.g. {"program": "code"}) and never for structured output.
    plain_kinds: dict[str, str] | None = None
    # Inputs a demonstration leaves out (:class:`~skate.llm.adapters.CompactDemos`): the same long text in every one.
    demo_skip: tuple[str, ...] = ()

    def __init__(self, signature: type[dspy.Signature], plain_counts: dict[str, int] | None = None) -> None:
        super().__init__()
        self.predict = dspy.Predict(signature)
        self.adapter: dspy.ChatAdapter = (
            PlainAdapter(self.plain_kinds, plain_counts, self.demo_skip)
            if self.plain_kinds is not None
            else CompactChatAdapter(self.demo_skip)
            if self.demo_skip
            else _ADAPTER
        )
        self._format = _Formatter(self.adapter)
        self._format_json = _Formatter(_JSON_ADAPTER)
        self._schema: tuple[Any, dict[str, Any]] | None = None

    @property
    def plain(self) -> bool:
        return self.plain_kinds is not None

    @property
    def structured_ok(self) -> bool:
        """Whether the module may ask for structured output (not in the plain format)."""
        return not self.plain

    @abstractmethod
    def inputs(self, x: Any) -> dict[str, Any]:
        """The signature's input fields for ``x``."""

    def messages(self, x: Any, structured: bool = False) -> list[dict[str, Any]]:
        """The chat messages asking the model about ``x``: the output fields as
        ``[[ ## name ## ]]`` sections, or (``structured``) as one JSON object."""
        return (self._format_json if structured and not self.plain else self._format)(self.predict, self.inputs(x))

    def stop_sequences(self) -> list[str]:
        """Where the server should stop a reply to this module (sent as ``stop``): for the plain
        format, where a reply begins copying the request's sections or template, or has given
        every field (:func:`skate.llm.plain.stop_sequences`); none for the other formats (a JSON
        reply under a schema ends where its object does)."""
        if not self.plain:
            return []
        sig = self.predict.signature
        kinds = self.adapter.field_kinds(sig)
        return plain.stop_sequences(
            list(kinds.items()), self.adapter.counts, plain.opening_words(textwrap.dedent(sig.instructions))
        )

    def response_format(self) -> dict[str, Any]:
        """OpenAI's ``response_format`` asking for the signature's output fields as one JSON
        object (:func:`output_schema`, strict)."""
        sig = self.predict.signature
        if self._schema is None or self._schema[0] is not sig:
            rf = {
                "type": "json_schema",
                "json_schema": {"name": _schema_name(sig), "schema": output_schema(sig), "strict": True},
            }
            self._schema = (sig, rf)
        return self._schema[1]

    @abstractmethod
    def parse(self, text: str) -> Any:
        """The game's reading of a reply in ChatAdapter's ``[[ ## name ## ]]`` format."""

    def sections_text(self, text: str) -> str:
        """``text`` in ChatAdapter's format: as it is when it has an output field's section,
        else the JSON object it holds (:func:`find_json_object`) turned into sections, else as
        it is (for the game's lenient reading)."""
        fields = self.predict.signature.output_fields
        if _has_output_sections(text, fields):
            return text
        if self.plain:
            got, whole = plain.read_reply(text, self.adapter.field_kinds(self.predict.signature))
            if got:
                return json_to_sections(got, fields, whole)
        found = find_json_object(text, fields)
        return json_to_sections(found[0], fields, found[1]) if found else text

    def read_reply(self, text: str) -> Any:
        """A reply in either format (sections, or a JSON object even in a code fence or prose),
        read by the game's :meth:`parse`."""
        return self.parse(self.sections_text(text))

    def finished(self, text: str) -> bool:
        """Whether a reply holds its whole answer: ChatAdapter's ``[[ ## completed ## ]]``
        marker after the fields, or a whole JSON object with every output field. (A reply cut
        at the token limit counts only if it was already finished.)"""
        fields = self.predict.signature.output_fields
        if _has_output_sections(text, fields):
            return "completed" in MARKER.findall(text)
        if self.plain:
            # Only the text says where a plain reply ends: a cut one is finished when every field
            # is there, programs fenced, and its last field is one whose end is known: a list that
            # has the items it needs, a number, a choice (a text or a list of no known length may
            # have been cut inside).
            kinds = self.adapter.field_kinds(self.predict.signature)
            got, whole = plain.read_reply(text, kinds)
            if not got:
                return False
            counts, last = self.adapter.counts, list(fields)[-1]
            lists_full = all(
                isinstance(v := got.get(k, ()), Sized) and len(v) >= counts[k]
                for k in kinds
                if kinds[k] == "list" and k in counts
            )
            last_known = kinds[last] in ("code", "number", "choice") or (kinds[last] == "list" and last in counts)
            return whole and lists_full and last_known
        found = find_json_object(text, fields)
        return found is not None and found[1] and set(fields) <= set(found[0])

    def field(self, text: str, name: str) -> str:
        """One output field of a reply: DSPy's parse of the whole reply, else (leniently) that
        field's ``[[ ## name ## ]]`` section; "" when the reply has neither."""
        try:
            return str(_ADAPTER.parse(self.predict.signature, text)[name])
        except Exception:  # noqa: BLE001 - a reply missing other fields still has this one
            return sections(text).get(name, "")

    def forward(self, **inputs: Any) -> dspy.Prediction:  # for DSPy tooling with its own LM
        """DSPy's call of the module. An optimiser's item may carry :data:`ITEM_SEED`: its calls
        are then samples of their own (a rollout of that seed), as a game's setting requests are
        per round, so items whose inputs are the same (every COP setter's round-1 situation) are
        not one cached reply."""
        seed = inputs.pop(ITEM_SEED, None)
        if seed is None:
            return self.predict(**inputs)
        lm = dspy.settings.lm  # an optimiser's own rollout (a fresh round of samples) is kept
        outer = getattr(lm, "kwargs", {}).get("rollout_id") if lm is not None else None
        rollout = f"item-{seed}" if outer is None else f"item-{seed}/{outer}"
        return self.predict(**inputs, config={"rollout_id": rollout})


class SetterModule(_Module):
    """Asks a model for a task: ``messages(ctx)`` out for a
    :class:`~skate.runlog.records.SetterContext`, ``parse(text)`` back into the game's proposal (an empty
    proposal saying why, if the reply is unreadable).

    Every game's setter signature has a ``guidance`` input (:func:`guidance_field`), filled by
    :meth:`guidance` from the context's augmentation strategy: how to aim the task for what the
    history shows (:func:`render_guidance`)."""

    pass_mark: float = PASS_MARK  # set by the game's setter: p(correct) that counts as solving a task
    demo_skip = ("rules", "guidance", "history")  # a demonstration shows its situation (and assignment)

    def __init__(self, signature: type[dspy.Signature], plain_counts: dict[str, int] | None = None) -> None:
        super().__init__(signature, plain_counts)
        self._replies: dict[tuple[int, int], str] = {}  # (round, attempt) -> the model's reply

    def guidance(self, ctx: SetterContext) -> str:
        return render_guidance(ctx.strategy, self.pass_mark)

    def remember(self, ctx: SetterContext, text: str) -> None:
        """Keep the model's reply to ``ctx``: a plain-format setter shows it its own reply when it
        asks again after a rejection (:meth:`messages`)."""
        if self.plain:
            self._replies = {k: v for k, v in self._replies.items() if k[0] == ctx.round}
            self._replies[(ctx.round, ctx.attempt)] = text

    def messages(self, x: Any, structured: bool = False) -> list[dict[str, Any]]:
        """As :meth:`_Module.messages`; for a plain-format setter asked again after rejections, a
        conversation: the round's first request, then for each rejected attempt the model's own
        reply to it and a user message saying why it was rejected and asking for the whole task
        again. (Small models shown a rejected program inside the request copy it unchanged;
        answering their own reply, they fix it: measured in ``docs/real-models.md``.)"""
        ctx = x
        if not (self.plain and isinstance(ctx, SetterContext) and ctx.failed):
            return super().messages(x, structured)
        first = ctx.failed[0].attempt
        opening = dataclasses.replace(
            ctx, failed=(), attempt=first, attempts_left=ctx.attempts_left + ctx.attempt - first
        )
        out = super().messages(opening)
        kinds = self.adapter.field_kinds(self.predict.signature)
        heads = ", then ".join(plain.heading(n) + ":" for n in kinds)
        for i, f in enumerate(ctx.failed):
            after = ctx.failed[i + 1].attempt if i + 1 < len(ctx.failed) else ctx.attempt
            reply = self._replies.get((ctx.round, f.attempt))
            if reply is None:  # not kept (another process made it): the rejected text as its reply
                reply = plain.render_reply([(next(iter(kinds)), next(iter(kinds.values())), f.text)])
            left = ctx.attempts_left + ctx.attempt - after
            out.append({"role": "assistant", "content": reply})
            out.append(
                {
                    "role": "user",
                    "content": (
                        f"{plain.REPAIR_PREFIX} ({f.reason.value}): {f.detail}\n\nWrite the whole task again with that "
                        f"fixed, in the same form ({heads}). Counting this one you have {left} attempt(s) left this round."
                    ),
                }
            )
        return out

    def label(self, proposal: Any) -> dict[str, Any]:
        """The output fields that give ``proposal`` (the inverse of :meth:`parse`): a labelled
        demonstration's reply, for prompt optimisers."""
        raise NotImplementedError(f"{type(self).__name__} cannot write a proposal as its reply")

    def demonstrated(self) -> list[Any]:
        """The proposals this module's demonstrations show (an optimiser's compiled demos, the
        model's own bootstrapped replies and labelled ones alike), read back as its replies are.
        To the model each is one of its own earlier replies: a task that copies one is no new task."""
        sig = self.predict.signature
        out = []
        for demo in self.predict.demos:
            outputs = {k: demo.get(k) for k in sig.output_fields}
            if any(v is None for v in outputs.values()):
                continue
            out.append(self.read_reply(self.adapter.format_assistant_message_content(sig, outputs)))
        return out

    def unreadable(self, why: str) -> Any:
        """The game's empty proposal (what :meth:`parse` makes of an empty reply), its ``note``
        saying ``why``: the game rejects it as malformed with that reason."""
        empty = self.parse("")
        if (
            dataclasses.is_dataclass(empty)
            and not isinstance(empty, type)
            and any(f.name == "note" for f in dataclasses.fields(empty))
        ):
            return dataclasses.replace(empty, note=why)
        return empty


# The setter signatures' guidance input field (every game's setter has one).
GUIDANCE_DESC = "how to aim this round's task, given what the history shows you"


def guidance_field() -> Any:
    return dspy.InputField(desc=GUIDANCE_DESC)


class AnswererModule(_Module):
    """Asks a model to answer one query: ``messages(query)`` out, ``parse(text)`` back into a
    reply (``None`` when the reply cannot be read).

    An answer that names one of the query's options (``option_labels``, in the options' order)
    can also be read from the model's probabilities: :meth:`label_messages` asks for the label
    alone (:class:`LabelAdapter`), and :mod:`skate.llm.choices` reads each option's probability at
    the reply's first token."""

    option_labels: tuple[str, ...] = ()  # the options' labels, where the answer names an option
    reasoning: bool = False  # the model writes its working before the answer

    @property
    def reads_labels(self) -> bool:
        """Whether the answer can be read from the model's probabilities: it names an option, and
        the model is not asked to reason first (then the label is not its reply's first token)."""
        return bool(self.option_labels) and not self.reasoning

    def label_messages(self, query: Any) -> list[dict[str, Any]]:
        """The chat messages asking for the label of the option the model picks, and nothing
        else (the same instructions, inputs and demonstrations as :meth:`messages`)."""
        if not self.reads_labels:
            raise ValueError(
                f"{type(self).__name__} cannot be read from probabilities: "
                + ("it reasons before its answer" if self.reasoning else "its answer names no option")
            )
        fmt = getattr(self, "_format_label", None)
        if fmt is None:
            fmt = self._format_label = _Formatter(LabelAdapter(self.option_labels))
        return fmt(self.predict, self.inputs(query))

    def label(self, reply: Any) -> dict[str, str]:
        """The output fields that give ``reply`` (the inverse of :meth:`parse`): a labelled
        demonstration's answer, for prompt optimisers."""
        return {"answer": str(reply)}


@dataclass
class GameModules:
    """The modules one language-model player uses for one game."""

    setter: SetterModule
    answerer: AnswererModule


# ------------------------------------------------------------------------ answer formats
REASONING_DESC = "your working, step by step, before the answer"


def with_reasoning(signature: type[dspy.Signature]) -> type[dspy.Signature]:
    """``signature`` with a ``reasoning`` output before its others (chain of thought: the model
    writes its working first; it is not graded)."""
    return signature.prepend("reasoning", dspy.OutputField(desc=REASONING_DESC), type_=str)


_CUE = r"(?i:\banswer\b)(?:\s*(?i:is|:|=|-))?(?:\s*(?i:option))?[\s(\[*\"'`]*"


def read_choice(text: str, token: str, reasoning: bool) -> str | None:
    """The option a reply names, leniently, when DSPy cannot parse it; ``token`` is a regex with
    one group matching one option's name (a letter, a number).

    - an ``answer`` section: the first option named in it;
    - without ``reasoning``: else the last option named anywhere in the reply;
    - with ``reasoning``: a reply with sections but no ``answer`` section was cut inside its
      reasoning (or never concluded), and is unparsable (None); a reply with no sections at all
      counts only through an explicit cue ("the answer is B", "Answer: (B)"), the last one,
      since options named while reasoning are not the answer.
    """
    sec = sections(text)
    if "answer" in sec:
        found = re.findall(token, sec["answer"])
        return found[0] if found else None
    if not reasoning:
        found = re.findall(token, text)
        return found[-1] if found else None
    if sec:
        return None
    found = re.findall(_CUE + token, text)
    return found[-1] if found else None


def render_options(options: tuple[str, ...] | list[str]) -> str:
    return "\n\n".join(f"{LETTERS[i]}:\n```\n{opt}\n```" for i, opt in enumerate(options))


class MultipleChoiceAnswerer(AnswererModule):
    """Multiple choice: the signature's ``answer`` output is one of the option letters.

    ``signature`` has an input for the task's text (``prompt_field``), an ``options`` input and
    an ``answer`` output; its letters are narrowed to ``n_options``. With ``reasoning`` the
    model first writes its working in a ``reasoning`` output (chain of thought), then the letter.
    """

    def __init__(
        self, signature: type[dspy.Signature], n_options: int, prompt_field: str, reasoning: bool = False
    ) -> None:
        letters = tuple(LETTERS[:n_options])
        signature = signature.with_updated_fields("answer", type_=Literal[letters])
        super().__init__(with_reasoning(signature) if reasoning else signature)
        self.letters = self.option_labels = letters
        self.prompt_field = prompt_field
        self.reasoning = reasoning

    def inputs(self, query: Any) -> dict[str, Any]:
        return {self.prompt_field: query.prompt, "options": render_options(query.options)}

    def label(self, reply: Any) -> dict[str, str]:
        return {"answer": self.letters[int(reply)]}

    def parse(self, text: str) -> int | None:
        """The chosen option's index, or None when the reply names no option (or, with
        reasoning, was cut before its answer: :func:`read_choice`)."""
        try:
            letter: str | None = str(_ADAPTER.parse(self.predict.signature, text)["answer"]).strip()
        except Exception:  # noqa: BLE001 - lenient: a bare letter, or "answer: X"
            letter = read_choice(text, rf"(?<![A-Za-z])([{''.join(self.letters)}])(?![A-Za-z])", self.reasoning)
        return self.letters.index(letter) if letter in self.letters else None


class FreeFormAnswerer(AnswererModule):
    """A free-form answer: the signature's ``answer`` output, read by ``read`` (e.g. a number
    normaliser; ``None`` = unreadable). With ``reasoning``, the model first writes its reasoning
    in a field of its own (chain of thought), which is not graded; a reply with sections but no
    ``answer`` section (cut inside its reasoning) is unreadable."""

    def __init__(
        self, signature: type[dspy.Signature], prompt_field: str, read: Callable[[str], Any], reasoning: bool = False
    ) -> None:
        super().__init__(with_reasoning(signature) if reasoning else signature)
        self.prompt_field = prompt_field
        self.read = read
        self.reasoning = reasoning

    def inputs(self, query: Any) -> dict[str, Any]:
        return {self.prompt_field: query.prompt}

    def parse(self, text: str) -> Any:
        try:
            answer = str(_ADAPTER.parse(self.predict.signature, text)["answer"])
        except Exception:  # noqa: BLE001 - lenient: the answer section, else the whole reply
            sec = sections(text)
            answer = sec.get("answer", text if not sec else "")
        return self.read(answer)

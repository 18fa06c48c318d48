"""DSPy adapters for skate's reply formats: compact demonstrations (:class:`CompactDemos`), DSPy's
ChatAdapter with them and a lenient reading of choices (:class:`CompactChatAdapter`), the plain
format (:class:`PlainAdapter`, :mod:`skate.llm.plain`) and a label read's (:class:`LabelAdapter`).
The modules of :mod:`skate.llm.modules` format their requests and read their replies with these."""

from __future__ import annotations

import functools
import re
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, get_origin

import dspy
from dspy.adapters.utils import parse_value
from dspy.utils.exceptions import AdapterParseError

import skate.llm  # noqa: F401  (environment defaults before dspy is imported)
from skate.llm import plain
from skate.llm.choices import label_of


def field_kind(info: Any, kinds: dict[str, str] | None = None, name: str = "") -> str:
    """A field's kind in the plain format (:mod:`skate.llm.plain`): ``kinds[name]`` where given
    (``code`` for a program), else from its type: a list is ``list``, a ``Literal`` ``choice``,
    a number ``number``, anything else ``text``."""
    if kinds and name in kinds:
        return kinds[name]
    ann = info.annotation
    if get_origin(ann) is list:
        return "list"
    if get_origin(ann) is Literal:
        return "choice"
    if ann in (int, float):
        return "number"
    return "text"


# The adapter a CompactDemos is mixed into, as the type checker sees it (DSPy's Adapter, whose
# formatting methods it calls); at run time the mixin is a plain class.
_Adapter: Any = dspy.Adapter if TYPE_CHECKING else object


class CompactDemos(_Adapter):
    """Demonstrations that show only the inputs that make each one what it is: the fields named
    in ``demo_skip`` (a setter's rules, guidance and history: the same long text in every
    demonstration, and in the request itself) are left out of each demonstration's user message.
    Four demonstrations of a setter then cost their replies and a line each, not four copies of
    the rules. With no ``demo_skip``, DSPy's own formatting."""

    demo_skip: tuple[str, ...] = ()

    def format_demos(self, signature: type[dspy.Signature], demos: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if not self.demo_skip:
            return super().format_demos(signature, demos)
        out: list[dict[str, Any]] = []
        for demo in demos:
            outputs = {k: demo.get(k) for k in signature.output_fields}
            if any(v is None for v in outputs.values()):
                continue  # a demonstration without its whole reply shows nothing to copy
            shown = {k: demo[k] for k in signature.input_fields if k not in self.demo_skip and demo.get(k) is not None}
            user = self.format_user_message_content(signature, shown) or "Write this round's task."
            out.append({"role": "user", "content": user})
            out.append({"role": "assistant", "content": self.format_assistant_message_content(signature, outputs)})
        return out


class CompactChatAdapter(CompactDemos, dspy.ChatAdapter):
    """DSPy's ChatAdapter with compact demonstrations (:class:`CompactDemos`), reading a choice
    field leniently (:func:`leading_choice`) where DSPy's own reading fails."""

    def __init__(self, demo_skip: tuple[str, ...] = ()) -> None:
        super().__init__(use_json_adapter_fallback=False)
        self.demo_skip = tuple(demo_skip)

    def parse(self, signature: type[dspy.Signature], completion: str) -> dict[str, Any]:
        try:
            return super().parse(signature, completion)
        except AdapterParseError:
            fixed = completion
            for name, info in signature.output_fields.items():
                if field_kind(info) == "choice":
                    choices = getattr(info.annotation, "__args__", ())
                    fixed = re.sub(
                        rf"(\[\[ ## {re.escape(name)} ## \]\][ \t]*\n?)(.*?)(?=\n\s*\[\[ ## |\Z)",
                        functools.partial(_lead, choices=choices),
                        fixed,
                        flags=re.S,
                    )
            if fixed == completion:
                raise
            return super().parse(signature, fixed)


class PlainAdapter(CompactDemos, dspy.ChatAdapter):
    """DSPy's ChatAdapter with the replies in the plain format (:mod:`skate.llm.plain`): the
    system message is the signature's instructions alone (no field listing, no template with
    ``{placeholders}``), the inputs are ``[[ ## name ## ]]`` sections as usual, and the request
    ends with :data:`skate.llm.plain.REPLY_LINE` and a template of the reply (a heading per
    output field; a program in a fenced block, a list numbered). Demonstrations are written in
    the same form, and :meth:`parse` reads it back, leniently. ``kinds`` names the fields whose
    kind the type does not tell (``{"program": "code"}``)."""

    def __init__(
        self, kinds: dict[str, str] | None = None, counts: dict[str, int] | None = None, demo_skip: tuple[str, ...] = ()
    ) -> None:
        super().__init__(use_json_adapter_fallback=False)
        self.demo_skip = tuple(demo_skip)
        self.kinds = dict(kinds or {})
        self.counts = dict(counts or {})  # how many items a list field needs (numbered in the template)

    def field_kinds(self, signature: type[dspy.Signature]) -> dict[str, str]:
        return {k: field_kind(v, self.kinds, k) for k, v in signature.output_fields.items()}

    def format_system_message(self, signature: type[dspy.Signature]) -> str:
        return textwrap.dedent(signature.instructions).strip()

    def user_message_output_requirements(self, signature: type[dspy.Signature]) -> str:
        fields = []
        kinds = self.field_kinds(signature)
        for name, info in signature.output_fields.items():
            kind = kinds[name]
            hint = str((info.json_schema_extra or {}).get("desc") or "").strip()
            hint = "" if hint.startswith("${") else hint  # DSPy's default desc is "${name}"
            choices = tuple(str(a) for a in getattr(info.annotation, "__args__", ())) if kind == "choice" else ()
            fields.append((name, kind, hint, choices, self.counts.get(name, 0)))
        return plain.request_block(fields)

    def format_assistant_message_content(
        self, signature: type[dspy.Signature], outputs: dict[str, Any], missing_field_message: str | None = None
    ) -> str:
        kinds = self.field_kinds(signature)
        return plain.render_reply(
            [(k, kinds[k], outputs.get(k, missing_field_message)) for k in signature.output_fields]
        )

    def parse(self, signature: type[dspy.Signature], completion: str) -> dict[str, Any]:
        found, _ = plain.read_reply(completion, self.field_kinds(signature))
        if set(found) != set(signature.output_fields):
            raise AdapterParseError(
                adapter_name="PlainAdapter", signature=signature, lm_response=completion, parsed_result=found
            )
        out = {}
        kinds = self.field_kinds(signature)
        for name, info in signature.output_fields.items():
            value = found[name]
            if kinds[name] == "choice" and isinstance(value, str):
                value = leading_choice(value, getattr(info.annotation, "__args__", ()))
            out[name] = value if isinstance(value, list) else parse_value(value, info.annotation)
        return out


def _lead(m: re.Match[str], choices: Sequence[Any]) -> str:
    """A choice field's header and its value read leniently (:func:`leading_choice`)."""
    return m.group(1) + leading_choice(m.group(2), choices)


def leading_choice(value: str, choices: Sequence[Any]) -> str:
    """The choice a ``choice`` field's text begins with, where it is not one exactly: the Qwen
    1.5B wrote ``prediction        # note: the value you produce must exactly match ...`` (a
    choice, then a template's note copied after it), or a word of its stem. Otherwise the text as
    it is."""
    text = value.strip().strip("`'\"*")
    names = [str(c) for c in choices]
    if text in names:
        return text
    for c in sorted(names, key=len, reverse=True):
        if re.match(rf"{re.escape(c)}(?![\w-])", text, re.IGNORECASE):
            return c
    # a word of the same stem: "sequence" for "sequencing" (the 0.5B), when it names one choice only
    word = re.match(r"[A-Za-z]{5,}", text)
    stem = word.group().lower()[:6] if word else ""
    found = [c for c in names if stem and c.lower().startswith(stem)]
    return found[0] if len(found) == 1 else value


class LabelAdapter(PlainAdapter):
    """The plain format for a reply that is one option's label and nothing else (a label read:
    :mod:`skate.llm.choices`): the signature's instructions, the inputs as sections, and the line
    :func:`skate.llm.plain.label_request`; a demonstration's reply is its label alone. The reply's
    first token is then where the labels' probabilities are."""

    def __init__(self, labels: tuple[str, ...]) -> None:
        super().__init__()
        self.labels = labels

    def user_message_output_requirements(self, signature: type[dspy.Signature]) -> str:
        return plain.label_request(self.labels)

    def format_assistant_message_content(
        self, signature: type[dspy.Signature], outputs: dict[str, Any], missing_field_message: str | None = None
    ) -> str:
        return str(outputs.get("answer", missing_field_message))

    def parse(self, signature: type[dspy.Signature], completion: str) -> dict[str, Any]:
        label = next((x for x in (label_of(t, self.labels) for t in completion.split()) if x), None)
        if label is None:
            raise AdapterParseError(adapter_name="LabelAdapter", signature=signature, lm_response=completion)
        return {"answer": label}

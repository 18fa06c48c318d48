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
"""

from __future__ import annotations

import re
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import skate.llm  # noqa: F401  (environment defaults before dspy is imported)
import dspy

from skate.llm.sections import sections
from skate.records import SetterContext

LETTERS = "ABCDEFGHIJ"

_ADAPTER = dspy.ChatAdapter(use_json_adapter_fallback=False)


def adapter() -> dspy.ChatAdapter:
    return _ADAPTER


class _Formatter:
    """``ChatAdapter.format`` with the system message and demos formatted once, not per call.

    They depend only on the predictor's signature (instructions included) and demos, which an
    optimiser may change: the cache is keyed on exactly those.
    """

    def __init__(self) -> None:
        self._key: tuple | None = None
        self._prefix: list[dict[str, Any]] = []

    def __call__(self, predict: dspy.Predict, inputs: dict[str, Any]) -> list[dict[str, Any]]:
        sig, demos = predict.signature, predict.demos
        key = (id(sig), sig.instructions, id(demos), len(demos))
        if key != self._key:
            full = _ADAPTER.format(sig, demos, inputs)
            self._prefix, self._key = full[:-1], key
            return full
        user = _ADAPTER.format_user_message_content(sig, inputs, main_request=True)
        return [*self._prefix, {"role": "user", "content": user}]


def strip_fences(code: str) -> str:
    m = re.search(r"```(?:python|py)?\s*\n(.*?)```", code, flags=re.DOTALL)
    return (m.group(1) if m else code).strip("\n")


# ------------------------------------------------------------------------- setter context
def render_situation(ctx: SetterContext) -> str:
    lines = [f"Round {ctx.round} of {ctx.rounds}. This is attempt {ctx.attempt}; counting it you "
             f"have {ctx.attempts_left} attempt(s) left this round."]
    if ctx.failed:
        lines.append("Your earlier attempts this round were rejected:")
        for f in ctx.failed:
            snippet = f.text if len(f.text) <= 1500 else f.text[:1500] + "\n..."
            lines.append(f"- attempt {f.attempt}: {f.reason.value}: {f.detail}\n{snippet}")
    return "\n".join(lines)


def render_history(ctx: SetterContext) -> str:
    if not ctx.history:
        return "(none)"
    out = []
    for item in ctx.history:
        head = f"Task #{item.number} (round {item.round}, set by {'you' if item.setter == ctx.player else item.setter})"
        if item.p_correct:
            scores = ", ".join(f"{'you' if k == ctx.player else k} {v:.2f}" for k, v in item.p_correct.items())
            head += f"; p(correct): {scores}"
        out.append(f"{head}\n{item.prompt}")
    return "\n\n".join(out)


def percent(p: float) -> str:
    """0.55 -> '55%'."""
    return f"{round(p * 100, 1):g}%"


# ---------------------------------------------------------------------------- base modules
class _Module(dspy.Module):
    """One ``dspy.Predict`` over a signature: ``messages(x)`` formats what the model is asked,
    ``parse(text)`` reads its reply back."""

    def __init__(self, signature: type[dspy.Signature]) -> None:
        super().__init__()
        self.predict = dspy.Predict(signature)
        self._format = _Formatter()

    @abstractmethod
    def inputs(self, x: Any) -> dict[str, Any]:
        """The signature's input fields for ``x``."""

    def messages(self, x: Any) -> list[dict[str, Any]]:
        return self._format(self.predict, self.inputs(x))

    @abstractmethod
    def parse(self, text: str) -> Any: ...

    def field(self, text: str, name: str) -> str:
        """One output field of a reply: DSPy's parse of the whole reply, else (leniently) that
        field's ``[[ ## name ## ]]`` section; "" when the reply has neither."""
        try:
            return str(_ADAPTER.parse(self.predict.signature, text)[name])
        except Exception:  # noqa: BLE001 - a reply missing other fields still has this one
            return sections(text).get(name, "")

    def forward(self, **inputs: Any) -> dspy.Prediction:  # for DSPy tooling with its own LM
        return self.predict(**inputs)


class SetterModule(_Module):
    """Asks a model for a task: ``messages(ctx)`` out for a
    :class:`~skate.records.SetterContext`, ``parse(text)`` back into the game's proposal (an empty
    proposal saying why, if the reply is unreadable)."""


class AnswererModule(_Module):
    """Asks a model to answer one query: ``messages(query)`` out, ``parse(text)`` back into a
    reply (``None`` when the reply cannot be read)."""

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
def render_options(options: tuple[str, ...] | list[str]) -> str:
    return "\n\n".join(f"{LETTERS[i]}:\n```\n{opt}\n```" for i, opt in enumerate(options))


class MultipleChoiceAnswerer(AnswererModule):
    """Multiple choice: the signature's ``answer`` output is one of the option letters.

    ``signature`` has an input for the task's text (``prompt_field``), an ``options`` input and
    an ``answer`` output; its letters are narrowed to ``n_options``.
    """

    def __init__(self, signature: type[dspy.Signature], n_options: int, prompt_field: str) -> None:
        letters = tuple(LETTERS[:n_options])
        super().__init__(signature.with_updated_fields("answer", type_=Literal[letters]))  # type: ignore[valid-type]
        self.letters = letters
        self.prompt_field = prompt_field

    def inputs(self, query: Any) -> dict[str, Any]:
        return {self.prompt_field: query.prompt, "options": render_options(query.options)}

    def label(self, reply: Any) -> dict[str, str]:
        return {"answer": self.letters[int(reply)]}

    def parse(self, text: str) -> int | None:
        """The chosen option's index, or None when the reply names no option."""
        try:
            letter = str(_ADAPTER.parse(self.predict.signature, text)["answer"]).strip()
        except Exception:  # noqa: BLE001 - lenient: a bare letter, or "answer: X"
            sec = sections(text).get("answer", text)
            found = re.findall(rf"(?<![A-Za-z])([{''.join(self.letters)}])(?![A-Za-z])", sec)
            if not found:
                return None
            letter = found[0] if "answer" in sections(text) else found[-1]
        return self.letters.index(letter) if letter in self.letters else None


class FreeFormAnswerer(AnswererModule):
    """A free-form answer: the signature's ``answer`` output, read by ``read`` (e.g. a number
    normaliser; ``None`` = unreadable). With ``reasoning``, the model first writes its reasoning
    in a field of its own (chain of thought), which is not graded."""

    def __init__(self, signature: type[dspy.Signature], prompt_field: str, read: Callable[[str], Any],
                 reasoning: bool = False) -> None:
        if reasoning:
            signature = signature.prepend(
                "reasoning", dspy.OutputField(desc="your working, step by step, before the answer"), type_=str)
        super().__init__(signature)
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

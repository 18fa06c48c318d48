"""The COP setter and answerer as DSPy modules.

Each module holds a ``dspy.Predict`` over a typed signature, so DSPy's prompt optimisers can tune
its instructions and demonstrations. The game does not go through DSPy's LM layer: a module
turns its inputs into chat messages with DSPy's ``ChatAdapter`` (instructions, fields and any
demos), skate's :class:`~skate.llm.client.LLMClient` sends them (cache, retries, void,
accounting), and the module reads the reply back with the same adapter, leniently.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

import skate.llm  # noqa: F401  (environment defaults before dspy is imported)
import dspy

from skate.games.cop import COPProposal
from skate.records import SetterContext

LETTERS = "ABCDEFGHIJ"

COP_RULES = """\
You are one of {n_players} players in a tournament in which the players examine each other. In \
every round each player writes one code-output-prediction task, and then every player, the \
author included, answers every task.

A task is a short, self-contained Python 3 program that uses only the standard library, reads \
no input, files or network, finishes in well under {timeout:g} seconds, and prints the same text \
every time it runs. That printed text is the answer. With the program you give {n_distractors} \
wrong answers that look believable. A solver sees the program and {n_options} options, the true \
output plus {n_shown} of your wrong answers in random order, and must pick the true one.

Scoring: one point for each of your tasks that is accepted, and one point for each task (yours \
or another player's) that you answer correctly at least 55% of the time. The best task is one \
you can trace correctly yourself while the others are likely to get it wrong. A task is rejected \
when the program fails or times out, prints nothing, prints different text on different runs, \
has fewer than {n_distractors} distinct wrong answers, or is too similar to one of your own \
earlier tasks."""


class SetCOPTask(dspy.Signature):
    """Write your task for this round of a code-output-prediction tournament.

    Follow the rules, learn from anything the history shows, and if earlier attempts this round
    were rejected, fix what the rejection names. The program must print its result with print().
    Every wrong answer must be text the program could plausibly print but does not."""

    rules: str = dspy.InputField(desc="how the game is played and scored")
    situation: str = dspy.InputField(desc="the round, attempts left, and any rejected attempts this round")
    history: str = dspy.InputField(desc="earlier tasks of the game you are allowed to see; may be empty")
    program: str = dspy.OutputField(desc="the complete Python program, without Markdown fences")
    wrong_answers: list[str] = dspy.OutputField(desc="the wrong answers, as a JSON list of strings")


class AnswerCOP(dspy.Signature):
    """Work out exactly what the Python program prints when it runs, then choose the option that
    is exactly that output. Exactly one option is right."""

    program: str = dspy.InputField(desc="a Python 3 program")
    options: str = dspy.InputField(desc="candidate outputs, each under its letter")
    answer: Literal["A", "B", "C", "D"] = dspy.OutputField(desc="the letter of the true output")


_ADAPTER = dspy.ChatAdapter(use_json_adapter_fallback=False)


def _adapter() -> dspy.ChatAdapter:
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


def _sections(text: str) -> dict[str, str]:
    """Split a reply on ``[[ ## field ## ]]`` markers (for lenient reading)."""
    parts = re.split(r"\[\[\s*##\s*(\w+)\s*##\s*\]\]", text)
    return {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


def strip_fences(code: str) -> str:
    m = re.search(r"```(?:python|py)?\s*\n(.*?)```", code, flags=re.DOTALL)
    return (m.group(1) if m else code).strip("\n")


# ------------------------------------------------------------------------------------ setter
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


class COPSetter(dspy.Module):
    def __init__(self) -> None:
        super().__init__()
        self.predict = dspy.Predict(SetCOPTask)
        self._format = _Formatter()

    def inputs(self, ctx: SetterContext, *, n_distractors: int, n_options: int, timeout_s: float) -> dict[str, str]:
        rules = COP_RULES.format(n_players=len(ctx.players), timeout=timeout_s, n_distractors=n_distractors,
                                 n_options=n_options, n_shown=n_options - 1)
        return {"rules": rules, "situation": render_situation(ctx), "history": render_history(ctx)}

    def messages(self, inputs: dict[str, str]) -> list[dict[str, Any]]:
        return self._format(self.predict, inputs)

    def parse(self, text: str) -> COPProposal:
        try:
            fields = _adapter().parse(self.predict.signature, text)
            program, wrong = fields["program"], fields["wrong_answers"]
        except Exception:  # noqa: BLE001 - fall back to reading the sections ourselves
            sec = _sections(text)
            program, wrong = sec.get("program", ""), sec.get("wrong_answers", "")
            if not program:
                return COPProposal("", [], note="the reply has no [[ ## program ## ]] section")
            try:
                wrong = json.loads(wrong)
            except ValueError:
                wrong = [line.strip() for line in str(wrong).splitlines() if line.strip()]
        if not isinstance(wrong, list):
            wrong = [wrong]
        return COPProposal(strip_fences(str(program)), [str(w) for w in wrong])

    def forward(self, **inputs: str) -> dspy.Prediction:  # for DSPy tooling with its own LM
        return self.predict(**inputs)


# ---------------------------------------------------------------------------------- answerer
def render_options(options: list[str]) -> str:
    return "\n\n".join(f"{LETTERS[i]}:\n```\n{opt}\n```" for i, opt in enumerate(options))


class MultipleChoiceAnswerer(dspy.Module):
    def __init__(self, n_options: int = 4) -> None:
        super().__init__()
        letters = tuple(LETTERS[:n_options])
        sig = AnswerCOP.with_updated_fields("answer", type_=Literal[letters])  # type: ignore[valid-type]
        self.letters = letters
        self.predict = dspy.Predict(sig)
        self._format = _Formatter()

    def messages(self, program: str, options: list[str]) -> list[dict[str, Any]]:
        return self._format(self.predict, {"program": program, "options": render_options(options)})

    def parse(self, text: str) -> int | None:
        """The chosen option's index, or None when the reply names no option."""
        try:
            letter = str(_adapter().parse(self.predict.signature, text)["answer"]).strip()
        except Exception:  # noqa: BLE001 - lenient: a bare letter, or "answer: X"
            sec = _sections(text).get("answer", text)
            found = re.findall(rf"(?<![A-Za-z])([{''.join(self.letters)}])(?![A-Za-z])", sec)
            if not found:
                return None
            letter = found[0] if "answer" in _sections(text) else found[-1]
        return self.letters.index(letter) if letter in self.letters else None

    def forward(self, **inputs: str) -> dspy.Prediction:
        return self.predict(**inputs)

"""What the fake server (:mod:`skate.llm.fake_server`) does to a reply beyond what a game's fake
player writes: the faults that show what real models do to the format (cut, prose, the small
models' slips), and the log-probabilities of a label request (:func:`token_logprobs`)."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from skate.llm import plain


# What real small models did to the plain format (Qwen2.5-Coder 1.5B and 0.5B, Gemma 3 270M,
# SmolLM2 135M playing COP and PyJail: docs/real-models.md), as faults of a fake model. Each rewrites a
# plain-format reply (other replies pass unchanged), except ``echo``.
def uncalled_main(text: str) -> str:
    """The program put inside ``def main():`` and never called (``uncalled``)."""

    def wrap(m: re.Match) -> str:
        body = "\n".join("    " + line for line in m.group(2).splitlines())
        return f"{m.group(1)}def main():\n{body}\n```"

    return re.sub(r"(```python\n)(.*?)\n```", wrap, text, count=1, flags=re.DOTALL)


def placeholder_items(text: str) -> str:
    """Every numbered item the template's placeholder, copied as it was (``placeholder``)."""
    return re.sub(r"(?m)^(\d+\.) .*$", r"\1 ...", text)


def unclosed_fence(text: str) -> str:
    """The program's fence closed only at the end of the reply, the other fields inside it
    (``unclosed_fence``)."""
    m = re.search(r"```python\n.*?\n```", text, flags=re.DOTALL)
    if not m:
        return text
    return text[: m.end() - 3].rstrip("\n") + "\n" + text[m.end() :].lstrip("\n") + "\n```"


def quoted_code(text: str) -> str:
    """The fenced block's text sent as a Python string literal, quotes and all (``quoted``): the
    1.5B put its PyJail inputs in quotes, so they reached ``eval`` as strings."""
    return re.sub(
        r"(```python\n)(.*?)\n```", lambda m: f"{m.group(1)}{m.group(2)!r}\n```", text, count=1, flags=re.DOTALL
    )


def echo_request(user: str) -> str:
    """The request's own text written back, cut off halfway (``echo``, with ``finish_reason``
    "length"): a tiny model that starts copying its input sections."""
    return cut_in_half(user)


SMALL_MODEL_SLIPS = {
    "uncalled": uncalled_main,
    "placeholder": placeholder_items,
    "unclosed_fence": unclosed_fence,
    "quoted": quoted_code,
    "echo": echo_request,
}


def cut_in_half(text: str) -> str:
    """``text`` cut off halfway (the fault ``cut``)."""
    return text[: max(0, len(text) // 2)] if len(text) > 1 else ""


def wrap_in_prose(text: str, json_reply: bool) -> str:
    """``text`` with chatter around it (the fault ``prose``); a JSON reply in a code fence."""
    body = f"```json\n{text}\n```" if json_reply else text
    return f"Sure! Here is my answer:\n\n{body}\n\nHope this helps! Let me know if you need anything else."


_REASONING = re.compile(r"\[\[ ## reasoning ## \]\]\n")
_JSON_REASONING = re.compile(r'"reasoning":\s*"')


def cut_in_reasoning(text: str) -> str:
    """``text`` cut off halfway through its ``reasoning`` section, or its JSON ``reasoning``
    value (the fault ``cut_reasoning``); a reply without one is returned whole."""
    m = _REASONING.search(text)
    if m is not None:
        end = text.find("[[ ##", m.end())
        body = text[m.end() : end if end >= 0 else len(text)]
        return text[: m.end() + max(1, len(body) // 2)]
    m = _JSON_REASONING.search(text)
    if m is None:
        return text
    try:
        value, end = json.JSONDecoder().raw_decode(text, m.end() - 1)
    except ValueError:
        return text
    return text[: m.end() + max(1, (end - m.end()) // 2)]


# How many answers the fake draws to give a label request its probabilities.
LABEL_DRAWS = 200
# The share of probability the fake leaves to tokens that are no label ("The", "I", a space).
NOT_A_LABEL = 0.02
_LABELS = re.compile(r"of the option you choose: (.*)\.\s*$")


def label_request(user: str) -> tuple[str, ...]:
    """The labels a request asks for one of (``A, B, C or D``), or () when it wants no label."""
    m = _LABELS.search(user.rsplit(plain.LABEL_LINE, 1)[1]) if plain.LABEL_LINE in user else None
    return tuple(x.strip() for x in re.split(r",| or ", m.group(1)) if x.strip()) if m else ()


def token_logprobs(
    text: str, dist: dict[str, float], temperature: float, top_k: int, chatty: bool = False, few: bool = False
) -> list[dict[str, Any]]:
    """OpenAI's ``logprobs.content`` for a reply ``text``. For a label request (``dist``: how often
    the fake answers each label) the first token is the label, and its alternatives give each
    label the probability that, sharpened by the request's ``temperature`` as a client does
    (:mod:`skate.llm.choices`), is how often the fake answers it; :data:`NOT_A_LABEL` goes to tokens
    that are no label. ``chatty``: the reply begins "The", which holds nearly all the probability;
    ``few``: only two alternatives are listed. Any other reply: each word a token, certain."""
    if not dist:
        return [
            {"token": w, "logprob": 0.0, "top_logprobs": [{"token": w, "logprob": 0.0}]}
            for w in re.findall(r"\s*\S+", text)[:64]
        ]
    powered = {k: v**temperature for k, v in dist.items()}
    norm = sum(powered.values())
    share = NOT_A_LABEL if not chatty else 0.9
    q = {k: (1 - share) * v / norm for k, v in powered.items()}
    others = (
        {"The": share * 0.8, " ": share * 0.1, "I": share * 0.1}
        if not chatty
        else {"The": share, "I": NOT_A_LABEL * 0.5}
    )
    alts = sorted([*q.items(), *others.items()], key=lambda kv: -kv[1])
    alts = alts[:2] if few else alts[: top_k or len(alts)]
    first = "The" if chatty else text.strip()
    prob = dict([*q.items(), *others.items()]).get(first, 1e-6)
    tokens = [
        {
            "token": first,
            "logprob": math.log(prob),
            "top_logprobs": [{"token": k, "logprob": math.log(v)} for k, v in alts],
        }
    ]
    if chatty:
        tokens += [
            {"token": w, "logprob": -0.01, "top_logprobs": [{"token": w, "logprob": -0.01}]}
            for w in re.findall(r"\s*\S+", text)[1:]
        ]
    return tokens


# ------------------------------------------------------------------ a request's messages
def count_demos(messages: list[dict[str, Any]]) -> int:
    """How many few-shot demonstrations a chat request carries: its assistant messages before its
    last user message.

    DSPy's ``ChatAdapter.format`` (3.4.1, ``Adapter.format`` / ``format_demos``) lays a request
    out as the system message, then each demonstration as a user message (its input fields) and
    an assistant message (its output fields, then ``[[ ## completed ## ]]``), the "incomplete"
    demos first (their user message starts "This is an example of the task, though some input or
    output fields are not supplied.", a missing output reads "Not supplied for this particular
    example."), then the complete ones, and last the user message of the request itself. So each
    demonstration, complete or not, is exactly one assistant message before the last user
    message. (The turns of a ``dspy.History`` input field, which come after the demos, are laid
    out the same way and count too; no skate signature has one.)
    """
    last = _request_user(messages)
    return 0 if last is None else sum(1 for m in messages[:last] if m.get("role") == "assistant")


def copied_demo(messages: list[dict[str, Any]]) -> str:
    """The reply of a request's last demonstration, word for word (the fault ``copy_demo``)."""
    last = _request_user(messages)
    return next(str(m.get("content", "")) for m in reversed(messages[:last]) if m.get("role") == "assistant")


# What the Qwen 0.5B wrote when MIPROv2's instruction proposer asked it for an instruction (the
# fault ``rambling``): fragments of a JSON object, over and over, and no section DSPy can read.
RAMBLING = (
    '"proposed_instruction": "Predict the correct output based on the input text.",\n  "completed": true,\n  ' * 6
).rstrip()


def repair_turns(messages: list[dict[str, Any]]) -> int:
    """How many repair turns (a rejection and the request to send the task again) follow the
    request's own user message."""
    return sum(
        1 for m in messages if m.get("role") == "user" and str(m.get("content", "")).startswith(plain.REPAIR_PREFIX)
    )


def resent_reply(messages: list[dict[str, Any]]) -> str:
    """The setter's last reply in a repair conversation, word for word (the fault ``resend``)."""
    return next(str(m.get("content", "")) for m in reversed(messages) if m.get("role") == "assistant")


def _request_user(messages: list[dict[str, Any]]) -> int | None:
    """The request's own user message: the last one that is no repair turn (a plain-format setter
    asked again after a rejection gets its reply and then the rejection as a further user message,
    :data:`skate.llm.plain.REPAIR_PREFIX`: :meth:`skate.llm.modules.SetterModule.messages`)."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user" and not str(messages[i].get("content", "")).startswith(
            plain.REPAIR_PREFIX
        ):
            return i
    return None

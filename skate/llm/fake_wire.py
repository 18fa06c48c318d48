"""How the fake server (:mod:`skate.llm.fake_server`) answers as each provider's reasoning models
do on the wire, so that CI tests every path offline.

- **Thinking** (:func:`thinking_text`): a fake model with a thinking style thinks before each
  reply, and its thinking holds decoys that a client reading it as the reply would take: a draft
  of the reply with a wrong answer, and a draft program that does not parse (:func:`decoy`).
  It is returned as each kind of server returns it (``FakeModel.thinking``): ``hidden`` (OpenAI's
  reasoning models: counted in ``completion_tokens_details.reasoning_tokens``, never shown),
  ``reasoning_content`` (DeepSeek's API, llama.cpp's server), ``reasoning`` (vLLM's parser,
  Ollama, OpenRouter), ``inline`` (``<think> … </think>`` before the reply: a model served
  without a parser) and ``inline_bare`` (the same with no opening tag, as a chat template that
  opens the block in the prompt leaves it).
- **OpenAI's rules for reasoning models** (``FakeModel.rules="openai_reasoning"``,
  :func:`openai_refusal`): ``max_tokens``, ``stop``, ``logprobs``/``top_logprobs`` and any
  temperature but 1 are refused with OpenAI's own error bodies; ``max_completion_tokens`` and
  ``reasoning_effort`` are taken.
- **Anthropic's Messages API** (``POST /v1/messages``, :func:`from_anthropic`, :func:`to_anthropic`)
  with extended thinking and its rules (temperature 1, a budget of at least 1,024 tokens below
  ``max_tokens``), and **Gemini's** ``generateContent`` (:func:`from_gemini`, :func:`to_gemini`),
  so that LiteLLM's real clients for both run against it.

A thinking model's limit (``max_tokens``/``max_completion_tokens``, Anthropic's ``max_tokens``,
Gemini's ``maxOutputTokens``) counts its thinking, as the providers count it: a reply whose
thinking runs past it is cut inside its thinking.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from skate.games import seeded_random
from skate.llm.sections import MARKER

THINKING_STYLES = ("hidden", "reasoning_content", "reasoning", "inline", "inline_bare")
# How much longer (or shorter) a model thinks at each reasoning_effort than at its own default.
EFFORT_SCALE = {"none": 0.0, "minimal": 0.1, "low": 0.4, "medium": 1.0, "high": 2.5, "xhigh": 4.0, "max": 6.0}
CHARS_PER_TOKEN = 4  # the fake server counts tokens as characters / 4

_FILLER = (
    "Let me read the request carefully.",
    "First I trace what happens step by step.",
    "The loop runs over every element, so I keep a running total.",
    "I should check the edge cases too.",
    "That gives one value; let me verify it against the others.",
    "Wait, I need to recount that part.",
    "The order of the operations matters here.",
    "So far this looks consistent.",
    "Let me write a first draft and then check it.",
    "I will compare the options one by one.",
)
BROKEN_PROGRAM = "def draft(:\n    return [x for x in\n"


def _wrong_label(value: str) -> str:
    v = value.strip()
    if len(v) == 1 and v.isalpha():
        return chr(ord("A") + (ord(v.upper()) - ord("A") + 1) % 4)
    if re.fullmatch(r"-?\d+", v):
        return str(int(v) + 1)
    return "draft"


def _wrong(name: str, value: Any) -> Any:
    if isinstance(value, str) and (
        "```" in value or "def " in value or "print(" in value or name in ("program", "code", "jail")
    ):
        return f"```python\n{BROKEN_PROGRAM}```" if "```" in value else BROKEN_PROGRAM
    if isinstance(value, str):
        return _wrong_label(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value + 1
    if isinstance(value, list):
        return [_wrong(name, v) for v in value[:1]]
    return value


def decoy(reply: str) -> str:
    """A draft of ``reply`` in the same format with every value wrong: a JSON reply's fields, a
    sectioned reply's sections, a plain reply's fenced programs and one-letter answers. Read as
    the reply, its answer is wrong and its program does not parse."""
    text = reply.strip()
    if text.startswith("{"):
        try:
            obj = json.loads(text)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            return json.dumps({k: _wrong(k, v) for k, v in obj.items()}, ensure_ascii=False)
    if MARKER.search(text):
        parts = MARKER.split(text)
        out = [parts[0]]
        for i in range(1, len(parts) - 1, 2):
            name, value = parts[i], parts[i + 1]
            wrong = value if name == "completed" else "\n" + str(_wrong(name, value.strip())) + "\n\n"
            out += [f"[[ ## {name} ## ]]", wrong]
        return "".join(out).strip()
    draft = re.sub(r"```(\w*)\n.*?```", lambda m: f"```{m.group(1)}\n{BROKEN_PROGRAM}```", text, flags=re.DOTALL)
    return re.sub(r"(?m)^([A-J])\s*$", lambda m: _wrong_label(m.group(1)), draft)


def thinking_text(reply: str, tokens: int, draw: tuple[Any, ...]) -> str:
    """About ``tokens`` tokens of thinking before ``reply``: sentences drawn from ``draw`` (the
    model, seed and choice), then a wrong draft of the reply (:func:`decoy`), then the model
    deciding against its draft. At least the draft, whatever ``tokens``."""
    rng = seeded_random("thinking", *draw)
    draft = "Draft:\n" + decoy(reply) + "\nNo, that draft is wrong. Let me redo it properly."
    words: list[str] = []
    budget = max(0, tokens * CHARS_PER_TOKEN - len(draft))
    while sum(len(w) + 1 for w in words) < budget:
        words.append(rng.choice(_FILLER))
    half = len(words) // 2
    return (
        " ".join(words[:half])
        + ("\n" if half else "")
        + draft
        + ("\n" if words[half:] else "")
        + " ".join(words[half:])
    )


def thinking_budget(body: dict[str, Any], default: int) -> int:
    """The tokens a fake model thinks on a request: its own ``default``, scaled by the request's
    ``reasoning_effort`` (or OpenRouter's ``reasoning.effort``), capped by a thinking budget
    (Anthropic's ``thinking.budget_tokens``, OpenRouter's ``reasoning.max_tokens``); none when the
    request turns thinking off (``chat_template_kwargs.enable_thinking`` or ``think`` false)."""
    kwargs = body.get("chat_template_kwargs")
    if isinstance(kwargs, dict) and kwargs.get("enable_thinking") is False or body.get("think") is False:
        return 0
    effort = body.get("reasoning_effort")
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict):
        effort = reasoning.get("effort", effort)
    tokens = default * EFFORT_SCALE.get(str(effort), 1.0) if effort is not None else default
    cap = None
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and isinstance(thinking.get("budget_tokens"), int):
        cap = thinking["budget_tokens"]
    if isinstance(reasoning, dict) and isinstance(reasoning.get("max_tokens"), int):
        cap = reasoning["max_tokens"]
    return int(min(tokens, cap) if cap is not None else tokens)


@dataclass
class Thought:
    """One choice of a thinking model: its answer and thinking as the server returns them."""

    content: str
    thinking: str | None  # returned apart (reasoning_content / reasoning / a thinking block), else None
    thinking_tokens: int  # counted, shown or not
    finish: str


def think(answer: str, thinking: str, style: str, limit: int | None, finish: str) -> Thought:
    """A thinking model's choice under its completion ``limit`` (tokens; thinking counts in it):
    cut inside its thinking (no answer) when the thinking alone passes it, else the answer cut
    where the limit falls. ``style`` says where the thinking goes (:data:`THINKING_STYLES`)."""
    t_tokens = max(1, len(thinking) // CHARS_PER_TOKEN)
    if limit is not None and t_tokens >= limit:
        thinking, t_tokens, answer, finish = thinking[: limit * CHARS_PER_TOKEN], limit, "", "length"
    elif limit is not None and t_tokens + len(answer) // CHARS_PER_TOKEN > limit:
        answer, finish = answer[: (limit - t_tokens) * CHARS_PER_TOKEN], "length"
    if style == "inline":
        closed = "" if finish == "length" and not answer else "\n</think>\n\n"
        return Thought(f"<think>\n{thinking}{closed}{answer}", None, t_tokens, finish)
    if style == "inline_bare":
        closed = "" if finish == "length" and not answer else "\n</think>\n\n"
        return Thought(f"{thinking}{closed}{answer}", None, t_tokens, finish)
    return Thought(answer, None if style == "hidden" else thinking, t_tokens, finish)


# --------------------------------------------------------------------- OpenAI's reasoning rules
def _openai_error(message: str, param: str, code: str) -> tuple[int, dict[str, Any]]:
    return 400, {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}


def openai_refusal(body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
    """The 400 OpenAI's reasoning models answer a request with (their words), or None when they
    take it: the first of ``max_tokens``, a temperature other than 1, ``stop``, ``logprobs``,
    ``top_logprobs`` and a ``reasoning_effort`` they do not know."""
    if "max_tokens" in body:
        return _openai_error(
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
            "'max_completion_tokens' instead.",
            "max_tokens",
            "unsupported_parameter",
        )
    temperature = body.get("temperature")
    if temperature is not None and temperature != 1:
        return _openai_error(
            f"Unsupported value: 'temperature' does not support {temperature} with this model. Only "
            "the default (1) value is supported.",
            "temperature",
            "unsupported_value",
        )
    for param in ("stop", "logprobs", "top_logprobs"):
        if body.get(param) not in (None, False):
            return _openai_error(
                f"Unsupported parameter: '{param}' is not supported with this model.", param, "unsupported_parameter"
            )
    effort = body.get("reasoning_effort")
    if effort is not None and effort not in ("minimal", "low", "medium", "high"):
        return _openai_error(
            f"Unsupported value: 'reasoning_effort' does not support {effort!r} with this model. "
            "Supported values are: 'minimal', 'low', 'medium', and 'high'.",
            "reasoning_effort",
            "unsupported_value",
        )
    return None


def completion_limit(body: dict[str, Any]) -> int | None:
    """The completion limit an OpenAI-style request sets (``max_completion_tokens`` or ``max_tokens``)."""
    for key in ("max_completion_tokens", "max_tokens"):
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


# ----------------------------------------------------------------------------- Anthropic
def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def anthropic_error(message: str) -> tuple[int, dict[str, Any]]:
    return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


def from_anthropic(body: dict[str, Any]) -> tuple[dict[str, Any], tuple[int, dict[str, Any]] | None]:
    """A Messages API request as the chat-completions body the fake plays, and the 400 Anthropic
    answers it with when it breaks extended thinking's rules (else None)."""
    messages: list[dict[str, Any]] = []
    system = body.get("system")
    if system:
        messages.append({"role": "system", "content": _text_of(system)})
    for m in body.get("messages") or []:
        if isinstance(m, dict):
            messages.append({"role": m.get("role", "user"), "content": _text_of(m.get("content"))})
    out: dict[str, Any] = {
        "model": body.get("model"),
        "messages": messages,
        "max_tokens": body.get("max_tokens"),
        "temperature": body.get("temperature"),
        "stop": body.get("stop_sequences"),
    }
    fmt = body.get("output_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        out["response_format"] = {"type": "json_schema", "json_schema": {"schema": fmt.get("schema")}}
    thinking = body.get("thinking")
    refusal = None
    if isinstance(thinking, dict) and thinking.get("type") == "enabled":
        budget, limit = thinking.get("budget_tokens"), body.get("max_tokens")
        out["thinking"] = thinking
        if not isinstance(budget, int) or budget < 1024:
            refusal = anthropic_error("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
        elif isinstance(limit, int) and budget >= limit:
            refusal = anthropic_error(
                "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
                "documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
                "#max-tokens-and-context-window-size"
            )
        elif body.get("temperature") not in (None, 1, 1.0):
            refusal = anthropic_error(
                "`temperature` may only be set to 1 when thinking is enabled. Please consult our "
                "documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
                "#important-considerations-when-using-extended-thinking"
            )
    return out, refusal


_STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "stop_sequence": "stop_sequence"}


def to_anthropic(name: str, thought: Thought, prompt_tokens: int, stop_sequence: str | None = None) -> dict[str, Any]:
    """A Messages API reply: a thinking block (with a signature) when there was thinking, then the
    text; ``output_tokens`` counts both."""
    content: list[dict[str, Any]] = []
    if thought.thinking is not None:
        content.append({"type": "thinking", "thinking": thought.thinking, "signature": "fake-signature"})
    if thought.content or not content:
        content.append({"type": "text", "text": thought.content})
    reason = "stop_sequence" if stop_sequence is not None else _STOP_REASONS.get(thought.finish, "end_turn")
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": name,
        "content": content,
        "stop_reason": reason,
        "stop_sequence": stop_sequence,
        "usage": {
            "input_tokens": prompt_tokens,
            "output_tokens": thought.thinking_tokens + len(thought.content) // CHARS_PER_TOKEN,
        },
    }


# -------------------------------------------------------------------------------- Gemini
GEMINI_PATH = re.compile(r"^/(?:v1beta/|v1/)?models/([^/:]+):generateContent$")


def from_gemini(name: str, body: dict[str, Any]) -> dict[str, Any]:
    """A ``generateContent`` request as the chat-completions body the fake plays."""
    messages: list[dict[str, Any]] = []
    system = body.get("systemInstruction") or body.get("system_instruction")
    if isinstance(system, dict):
        messages.append(
            {"role": "system", "content": "".join(str(p.get("text", "")) for p in system.get("parts") or ())}
        )
    for c in body.get("contents") or []:
        if isinstance(c, dict):
            text = "".join(str(p.get("text", "")) for p in c.get("parts") or () if isinstance(p, dict))
            messages.append({"role": "assistant" if c.get("role") == "model" else "user", "content": text})
    config = body.get("generationConfig") or body.get("generation_config") or {}
    get = lambda *keys: next((config[k] for k in keys if k in config), None)  # noqa: E731 - both spellings
    out: dict[str, Any] = {
        "model": name,
        "messages": messages,
        "temperature": get("temperature"),
        "max_tokens": get("maxOutputTokens", "max_output_tokens"),
        "n": get("candidateCount", "candidate_count") or 1,
        "seed": get("seed"),
        "stop": get("stopSequences", "stop_sequences"),
    }
    schema = get("responseJsonSchema", "response_json_schema", "responseSchema", "response_schema")
    if isinstance(schema, dict):
        out["response_format"] = {"type": "json_schema", "json_schema": {"schema": schema}}
    thinking = get("thinkingConfig", "thinking_config")
    if isinstance(thinking, dict):
        budget = thinking.get("thinkingBudget", thinking.get("thinking_budget"))
        if isinstance(budget, int) and budget >= 0:
            out["thinking"] = {"type": "enabled", "budget_tokens": budget}
        out["include_thoughts"] = bool(thinking.get("includeThoughts", thinking.get("include_thoughts")))
    return out


_FINISH = {"stop": "STOP", "length": "MAX_TOKENS"}


def to_gemini(name: str, thoughts: list[Thought], prompt_tokens: int, include_thoughts: bool) -> dict[str, Any]:
    """A ``generateContent`` reply: per candidate, a thought part (when asked for) and the text;
    ``thoughtsTokenCount`` apart from ``candidatesTokenCount``, as Gemini counts them."""
    candidates = []
    for i, t in enumerate(thoughts):
        parts: list[dict[str, Any]] = []
        if include_thoughts and t.thinking is not None:
            parts.append({"text": t.thinking, "thought": True})
        parts.append({"text": t.content})
        candidates.append(
            {"content": {"parts": parts, "role": "model"}, "finishReason": _FINISH.get(t.finish, "STOP"), "index": i}
        )
    written = sum(len(t.content) // CHARS_PER_TOKEN for t in thoughts)
    thought_tokens = sum(t.thinking_tokens for t in thoughts)
    return {
        "candidates": candidates,
        "modelVersion": name,
        "usageMetadata": {
            "promptTokenCount": prompt_tokens,
            "candidatesTokenCount": written,
            "thoughtsTokenCount": thought_tokens,
            "totalTokenCount": prompt_tokens + written + thought_tokens,
        },
    }

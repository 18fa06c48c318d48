"""A reasoning model's thinking, taken out of its reply before anything reads the reply.

Reasoning models say what they thought in one of three ways, and skate reads each:

- **A field of its own** beside the reply: ``message.reasoning_content`` (DeepSeek's API,
  llama.cpp's server with ``--reasoning-format``, LiteLLM's view of Anthropic's and Gemini's
  thinking), ``message.reasoning`` (vLLM's reasoning parser, Ollama, OpenRouter), or content
  given as a list of blocks of which some are ``thinking`` (:func:`from_message`).
- **Inline**, in the reply's own text, as a model served without a reasoning parser writes it
  (a DeepSeek-R1 distillation or Qwen3 on llama.cpp, Ollama or a plain vLLM):
  ``<think> ... </think>`` before the answer; the opening tag may be missing (the chat template
  wrote it into the prompt), and a reply cut at ``max_tokens`` may end inside the block
  (:func:`split_inline`).
- **Not at all**: OpenAI's reasoning models keep their thinking to themselves and only count
  it (``usage.completion_tokens_details.reasoning_tokens``, :func:`thinking_tokens`).

What comes out is never read as an answer, a task or a wrong option: the game sees the answer
alone. The thinking is counted apart (``Usage.thinking_tokens``) and, with ``llm.keep_thinking``,
written to the run folder for a person to read (``thinking.jsonl``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# The tags models use around inline thinking (DeepSeek-R1 and its distillations, Qwen3, QwQ:
# <think>; a few fine-tunes: <thinking>).
_OPEN = re.compile(r"\A\s*<(think|thinking)>", re.IGNORECASE)
_CLOSE = {"think": re.compile(r"</think>", re.IGNORECASE), "thinking": re.compile(r"</thinking>", re.IGNORECASE)}
_BARE_CLOSE = re.compile(r"</(think|thinking)>", re.IGNORECASE)

# The message fields that carry thinking beside the content, in the order they are looked for.
THINKING_FIELDS = ("reasoning_content", "reasoning")


@dataclass(frozen=True)
class Split:
    """A reply's text with its inline thinking taken out."""

    answer: str  # what the game reads
    thinking: str | None  # None: the text held none
    open: bool = False  # the thinking was never closed (a reply cut inside it, or one that never ended it)
    bare: bool = False  # closed with no opening tag (the chat template opened the block in the prompt)


def split_inline(text: str, thinks_inline: bool = False) -> Split:
    """``text`` without its inline thinking.

    - ``<think>…</think>`` at the start (after white space) is thinking; so are further blocks
      that follow straight after it.
    - A ``</think>`` with no opening tag before it: everything before it is thinking (the chat
      template opened the block in the prompt, as DeepSeek-R1's distillations' templates do).
    - A block opened and never closed: everything after the tag is thinking, and the answer is
      what came before it (nothing): ``open``. So is a whole reply with neither tag from a model
      known to think inline without an opening tag (``thinks_inline``: it was seen to), which
      the caller passes only for a reply that ended before its thinking could have (cut at
      ``max_tokens``, or stopped by the server at a stop sequence).
    """
    thinking: list[str] = []
    rest = text
    while True:
        m = _OPEN.match(rest)
        if m is None:
            break
        close = _CLOSE[m.group(1).lower()].search(rest, m.end())
        if close is None:
            thinking.append(rest[m.end() :].strip())
            return Split("", "\n\n".join(thinking), open=True)
        thinking.append(rest[m.end() : close.start()].strip())
        rest = rest[close.end() :]
    if not thinking:
        close = _BARE_CLOSE.search(rest)
        if close is not None:
            return Split(rest[close.end() :].lstrip(), rest[: close.start()].strip(), bare=True)
        if thinks_inline:
            return Split("", rest.strip(), open=True)
        return Split(text, None)
    return Split(rest.lstrip(), "\n\n".join(thinking))


def from_message(message: Mapping[str, Any] | Any) -> tuple[Any, str | None]:
    """A chat message's content (text, as the caller reads it) and the thinking given beside it:
    the :data:`THINKING_FIELDS`, and the ``thinking`` blocks of a content given as a list of
    blocks (whose text blocks are joined into the content). Works on a JSON dict and on
    LiteLLM's message objects alike; ``thinking_blocks`` (LiteLLM's Anthropic blocks) are read
    when no field holds the text."""
    get = message.get if isinstance(message, Mapping) else (lambda k, d=None: getattr(message, k, d))
    content = get("content")
    parts: list[str] = []
    for name in THINKING_FIELDS:
        value = get(name)
        if isinstance(value, str) and value.strip():
            parts.append(value.strip())
            break
    if not parts:
        blocks = get("thinking_blocks")
        if isinstance(blocks, list):
            parts += [str(_block(b, "thinking")) for b in blocks if _block(b, "thinking")]
    if isinstance(content, list):  # content as blocks: text blocks are the reply, thinking blocks apart
        texts = []
        for block in content:
            kind = _block(block, "type")
            if kind == "text":
                texts.append(str(_block(block, "text") or ""))
            elif kind in ("thinking", "reasoning"):
                inner = _block(block, "thinking") or _block(block, "text")
                if isinstance(inner, list):  # Mistral's thinking: a list of text chunks
                    inner = "".join(str(_block(x, "text") or "") for x in inner)
                if inner:
                    parts.append(str(inner))
        content = "".join(texts)
    return content, ("\n\n".join(parts) if parts else None)


def _block(block: Any, key: str) -> Any:
    return block.get(key) if isinstance(block, Mapping) else getattr(block, key, None)


def thinking_tokens(usage: Mapping[str, Any] | Any) -> int:
    """The reasoning tokens a reply's usage counts (``completion_tokens_details.reasoning_tokens``:
    OpenAI, DeepSeek, OpenRouter, vLLM, LiteLLM's view of the others); 0 when it says nothing."""
    if usage is None:
        return 0
    get = usage.get if isinstance(usage, Mapping) else (lambda k, d=None: getattr(usage, k, d))
    details = get("completion_tokens_details")
    if details is None:
        return 0
    value = details.get("reasoning_tokens") if isinstance(details, Mapping) else getattr(details, "reasoning_tokens", 0)
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def share_of(completion_tokens: int, thinking: list[str | None], answers: list[str]) -> int:
    """The thinking's part of ``completion_tokens`` where the provider does not count it apart:
    its share of the characters written (thinking and answers of every choice)."""
    t = sum(len(x) for x in thinking if x)
    total = t + sum(len(a) for a in answers)
    return round(completion_tokens * t / total) if total and t else 0

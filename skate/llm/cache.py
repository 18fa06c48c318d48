"""The response cache: successful completions (and embedding vectors) on disk, keyed on the
whole request, its sample index and seed (:class:`ResponseCache`), so that a game run again
replays from it without a model call."""

from __future__ import annotations

import base64
import hashlib
import json
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from skate.llm.spec import ModelSpec


class Cached(NamedTuple):
    """A completion as the response cache keeps it."""

    text: str
    finish_reason: str | None = None
    logprobs: list[dict] | None = None
    thinking: str | None = None
    thinking_cut: bool = False


class ResponseCache:
    """Successful completions on disk (``diskcache``), keyed on request, sample index and seed."""

    def __init__(self, folder: str | Path) -> None:
        import diskcache

        self.folder = Path(folder).expanduser()
        self.folder.mkdir(parents=True, exist_ok=True)
        self._db = diskcache.Cache(str(self.folder))

    @staticmethod
    def key(
        spec: ModelSpec,
        messages: Sequence[dict[str, Any]],
        index: int,
        seed: int,
        response_format: dict[str, Any] | None = None,
        options: dict[str, Any] | None = None,
    ) -> str:
        request: dict[str, Any] = {
            "endpoint": spec.request_identity(),
            "messages": list(messages),
            "sample": index,
            "seed": seed,
        }
        if response_format is not None:  # (absent otherwise: text-format keys are as they were)
            request["response_format"] = response_format
        if options:  # stop sequences, log-probabilities, another max_tokens (absent: keys as they were)
            request["options"] = options
        blob = json.dumps(request, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    def get(self, key: str) -> str | None:
        value = self._db.get(key)
        return value if isinstance(value, str) else None

    def put(self, key: str, text: str) -> None:
        self._db.set(key, text)

    def get_reply(self, key: str) -> Cached | None:
        """A cached completion: its text, finish reason (None: it finished normally), token
        log-probabilities (None: not asked for) and thinking (None: none)."""
        value = self._db.get(key)
        if isinstance(value, str):
            return Cached(value)
        if isinstance(value, dict) and isinstance(value.get("text"), str):
            return Cached(
                value["text"],
                value.get("finish_reason"),
                value.get("logprobs"),
                value.get("thinking"),
                bool(value.get("thinking_cut")),
            )
        return None

    def put_reply(
        self,
        key: str,
        text: str,
        finish_reason: str | None,
        logprobs: list[dict] | None = None,
        thinking: str | None = None,
        thinking_cut: bool = False,
    ) -> None:
        """Cache a completion; one cut at ``max_tokens`` keeps its finish reason, one asked
        for with log-probabilities keeps them and one with thinking keeps it (the text is the
        answer alone), so a replay reads it as the first run did."""
        if finish_reason in (None, "stop") and logprobs is None and thinking is None:
            self._db.set(key, text)
        else:
            self._db.set(
                key,
                {
                    "text": text,
                    "finish_reason": finish_reason,
                    "logprobs": logprobs,
                    **({"thinking": thinking} if thinking is not None else {}),
                    **({"thinking_cut": True} if thinking_cut else {}),
                },
            )

    @staticmethod
    def embedding_key(spec: ModelSpec, text: str) -> str:
        blob = json.dumps({"endpoint": spec.request_identity(), "embed": text}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    def __len__(self) -> int:
        return len(self._db)

    def close(self) -> None:
        self._db.close()


def pack(vector: Sequence[float]) -> str:
    """A vector as float32 in base64: a cache value (a sixth of its JSON)."""
    return base64.b64encode(array("f", vector).tobytes()).decode("ascii")


def unpack(text: str) -> list[float]:
    return array("f", base64.b64decode(text)).tolist()

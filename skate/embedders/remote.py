"""Embeddings from a model provider: OpenAI's text-embedding-3-small (the paper's embedder) or
any OpenAI-compatible ``/v1/embeddings`` endpoint, and other providers through LiteLLM.

Calls go through the run's :class:`skate.llm.client.LLMClient` (:meth:`~LLMClient.embed`):
the same response cache (vectors keyed on the endpoint and the text), retries, concurrency
slots, budget, and usage under the name ``@embedder`` in the run's usage summary. Outside a run
(``skate calibrate``) the embedder makes a client of its own from the same
settings.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from skate.embedders.base import Embedder, EmbedderUnavailable
from skate.embedders.config import OpenAIEmbedderConfig
from skate.errors import ConfigError
from skate.llm.client import EmbeddingFailed, LLMClient, ResponseCache
from skate.llm.endpoints import RetryPolicy
from skate.llm.spec import ModelConfigError, ModelSpec
from skate.llm.transport import _litellm_error, post_json
from skate.llm.usage import Price
from skate.llm.wire import CallFailed

log = logging.getLogger(__name__)

USAGE_NAME = "@embedder"  # the usage summary's key for embedding calls
PROBE = "uniqueness check"


def send_embeddings(spec: Any, texts: list[str]) -> tuple[list[list[float]], int]:
    """One request for these texts' vectors: (vectors in order, prompt tokens). Raises
    :class:`skate.llm.client.CallFailed` classified like a chat request's failures."""
    if spec.openai_compatible:
        return _send_openai(spec, texts)
    return _send_litellm(spec, texts)


def _send_openai(spec: Any, texts: list[str]) -> tuple[list[list[float]], int]:
    body = {"model": spec.name, "input": texts, "encoding_format": "float", **spec.extra_body}
    text = post_json(spec, spec.base_url + "/embeddings", body)  # the chat transport's pool and errors
    try:
        data = json.loads(text)
        rows = sorted(data["data"], key=lambda d: d.get("index", 0))
        vectors = [[float(x) for x in row["embedding"]] for row in rows]
        tokens = int((data.get("usage") or {}).get("prompt_tokens") or 0)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CallFailed("malformed", f"unreadable embeddings body ({exc}): {text[:120]!r}", retryable=True) from exc
    return vectors, tokens


def _send_litellm(spec: Any, texts: list[str]) -> tuple[list[list[float]], int]:
    # skate.llm (imported above) has set LiteLLM's offline price table before this import
    import litellm

    litellm.suppress_debug_info = True
    kwargs: dict[str, Any] = {"model": spec.model, "input": texts, "timeout": spec.timeout_s, **spec.extra_body}
    if spec.api_base:
        kwargs["api_base"] = spec.api_base
    if spec.api_key_env:
        kwargs["api_key"] = spec.api_key()
    try:
        resp = litellm.embedding(**kwargs)
    except Exception as exc:  # LiteLLM's errors do not share one base class
        raise _litellm_error(exc, spec) from exc
    try:
        rows = sorted(resp.data, key=lambda d: d["index"] if isinstance(d, dict) else d.index)
        vectors = [[float(x) for x in (d["embedding"] if isinstance(d, dict) else d.embedding)] for d in rows]
        tokens = int(getattr(getattr(resp, "usage", None), "prompt_tokens", 0) or 0)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise CallFailed("malformed", f"unreadable embeddings reply ({exc})", retryable=True) from exc
    return vectors, tokens


class OpenAIEmbedder(Embedder):
    """Vectors from an embeddings endpoint, from its settings
    (:class:`~skate.embedders.config.OpenAIEmbedderConfig`); ``threshold`` 0.336 is the paper's
    for text-embedding-3-small.

    ``model`` is ``provider/model`` as for players (``openai/text-embedding-3-small``; any
    ``api_base`` speaking OpenAI's protocol, e.g. ``http://127.0.0.1:8000/v1``; or a LiteLLM
    provider). ``price_per_mtok`` (USD per million input tokens) is used unless ``llm.prices``
    names the model. ``cache``, ``cache_dir`` and ``max_retries`` apply only when the embedder
    runs outside a game (in a game the run's client is used, with the ``llm`` settings).
    """

    uses_client = True  # the runner hands it the run's model client (connect)

    schema = OpenAIEmbedderConfig  # registered by import path (skate.embedders.config)
    settings: OpenAIEmbedderConfig

    def __init__(self, settings: OpenAIEmbedderConfig | None = None, /, **values: Any) -> None:
        super().__init__(settings, **values)
        s = self.settings
        if s.batch_size < 1:
            raise ValueError(f"embedder.batch_size={s.batch_size} must be >= 1")
        if s.price_per_mtok < 0:
            raise ValueError(f"embedder.price_per_mtok={s.price_per_mtok} must be >= 0")
        if s.dimensions is not None and s.dimensions < 1:
            raise ValueError(f"embedder.dimensions={s.dimensions} must be >= 1 (or null: the model's own)")
        extra = {"dimensions": int(s.dimensions)} if s.dimensions else {}
        try:
            self.spec = ModelSpec(
                s.model,
                api_base=s.api_base,
                api_key_env=s.api_key_env,
                temperature=0.0,
                max_tokens=1,
                extra_body=extra,
                timeout_s=s.timeout_s,
            )
            self.spec.api_key()  # a hosted model without its key: say so now, not mid-game
        except ModelConfigError as exc:
            raise EmbedderUnavailable(
                f"embedder.model: {exc}".replace("(or api_key_env", "(or embedder.api_key_env")
            ) from None
        self.threshold = s.threshold
        self.batch_size = s.batch_size
        self.price_per_mtok = s.price_per_mtok
        self._client: Any = None
        self._owns_client = False
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        where = f" at {self.spec.base_url}" if self.spec.api_base else ""
        return f"OpenAIEmbedder({self.spec.model}{where}, threshold={self.threshold})"

    # ---------------------------------------------------------------- the client
    def connect(self, client: Any, check: bool = True) -> None:
        """Use ``client`` (the run's) for every call; ``check``: one uncached probe now, so that a
        refused key, a missing model or a dead server stops the run with one line before round 1."""

        client.prices.setdefault(self.spec.model, Price(self.price_per_mtok, 0.0))
        with self._lock:
            self._client = client
        if check:
            self.check()

    def client(self) -> Any:
        with self._lock:
            if self._client is None:
                s = self.settings
                unresolved = [k for k in ("cache", "cache_dir", "max_retries") if str(getattr(s, k)).startswith("${")]
                if unresolved:  # the schema's own defaults follow llm's: settings made outside a game's lack them
                    raise ConfigError(
                        f"embedder.{unresolved[0]}={getattr(s, unresolved[0])!r} refers to settings "
                        "these embedder settings were made without: build them as a game's "
                        "(skate.config(embedder=...).embedder), or give cache, cache_dir and max_retries"
                    )
                self._client = LLMClient(
                    cache=ResponseCache(s.cache_dir) if s.cache else None,
                    retry=RetryPolicy(max_retries=s.max_retries),
                    prices={self.spec.model: Price(self.price_per_mtok, 0.0)},
                )
                self._owns_client = True
            return self._client

    def close(self) -> None:
        with self._lock:
            if self._owns_client and self._client is not None:
                self._client.close()
                self._client, self._owns_client = None, False

    def check(self) -> None:
        """One request, outside the cache and the usage count; raises :class:`EmbedderUnavailable`
        when it cannot succeed (refused key, unknown model, unreachable server, bad request)."""

        try:
            send_embeddings(self.spec, [PROBE])
        except CallFailed as exc:
            if exc.retryable and exc.kind not in ("transport",):
                log.warning("embedder %s: the check failed (%s); the game's calls will retry", self.spec.model, exc)
                return
            raise EmbedderUnavailable(self.explain(exc)) from None

    def explain(self, exc: Any) -> str:
        """One line saying what went wrong with this embedder and what to fix."""
        where = f"{self.spec.model} at {self.spec.base_url or 'its provider'}"
        if exc.status in (401, 403):
            key = self.spec.api_key_env or "the provider's key variable (e.g. OPENAI_API_KEY)"
            return f"embedder {where}: the key was refused ({exc.detail[:160]}); check {key} or embedder.api_key_env"
        if exc.status == 404:
            return (
                f"embedder {where}: the server does not serve this embedding model ({exc.detail[:160]}); "
                "check embedder.model and embedder.api_base"
            )
        if exc.kind == "transport":
            return f"embedder {where}: cannot reach the server ({exc.detail[:160]}); check embedder.api_base"
        return f"embedder {where}: {exc.kind}: {exc.detail[:200]}"

    # ---------------------------------------------------------------- embedding
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not len(texts):
            return np.zeros((0, 0))
        try:
            vectors = self.client().embed(self.spec, list(texts), USAGE_NAME, send_embeddings, self.batch_size)
        except EmbeddingFailed as exc:
            raise EmbeddingFailed(self.explain(exc.error), exc.error) from None
        out = np.asarray(vectors, dtype=np.float64)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


def connect_embedder(embedder: Embedder, client: Any, check: bool = True) -> None:
    """Hand the run's model client to an embedder that makes model calls (no-op for the others)."""
    if getattr(embedder, "uses_client", False):
        embedder.connect(client, check=check)

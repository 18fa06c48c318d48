"""Embeddings and the uniqueness test.

A task is unique for its setter when its embedding distance (1 - cosine similarity) to every
task the same setter set before is above the embedder's threshold. Thresholds belong to the
embedder: a distance scale is a property of one embedding model, and each embedder's default
comes from ``skate calibrate`` (:mod:`skate.tools.calibrate`).

Embedders: :class:`HashingEmbedder` (the fast, dependency-free default), :class:`MiniLMEmbedder`
(all-MiniLM-L6-v2 with numpy, an optional install) and :class:`OpenAIEmbedder`
(text-embedding-3-small or any ``/v1/embeddings`` endpoint, through the run's model client).
The last two are imported on first use, so importing this package stays cheap.
"""

from __future__ import annotations

from typing import Any

from skate.embedders.base import (
    Embedder,
    EmbedderUnavailable,
    HashingEmbedder,
    NoveltyIndex,
    build_embedder,
    cosine_distances,
)

__all__ = [
    "Embedder",
    "EmbedderUnavailable",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "NoveltyIndex",
    "OpenAIEmbedder",
    "build_embedder",
    "connect_embedder",
    "cosine_distances",
]

_LAZY = {
    "MiniLMEmbedder": "skate.embedders.minilm",
    "OpenAIEmbedder": "skate.embedders.remote",
    "connect_embedder": "skate.embedders.remote",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'skate.embedders' has no attribute {name!r}")

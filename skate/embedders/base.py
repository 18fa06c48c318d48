"""Embedders and the uniqueness test (the hashing embedder, the index, the shared errors).

A task is unique for its setter when its embedding distance (1 - cosine similarity) to every
task the same setter set before is above the embedder's threshold. Thresholds belong to the
embedder: a distance scale is a property of one embedding model.
"""

from __future__ import annotations

import re
import threading
import zlib
from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

from skate.errors import ConfigError

_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+|[^\w\s]")


class EmbedderUnavailable(ConfigError):
    """The configured embedder cannot run here (a missing package, weights or key); the message
    says what to install or set."""


class Embedder(ABC):
    """Maps texts to unit-norm vectors; ``threshold`` is its uniqueness cut-off on 1 - cosine."""

    threshold: float

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape (len(texts), dim) with unit-norm rows (zero rows allowed)."""


class HashingEmbedder(Embedder):
    """Hashed bag of token unigrams and bigrams, sub-linear counts, L2-normalised.

    Cheap, offline and deterministic across processes (crc32, not Python's salted ``hash``).
    Numbers are folded into one token class so that changing constants alone does not make a
    task look new.
    """

    def __init__(self, dim: int = 1024, threshold: float = 0.2) -> None:
        if dim < 16:
            raise ValueError(f"embedder.dim={dim} is too small: use at least 16")
        self.dim = dim
        self.threshold = threshold

    def _features(self, text: str) -> list[str]:
        toks = ["<num>" if t[0].isdigit() else t for t in _TOKEN.findall(text)]
        return toks + [f"{a} {b}" for a, b in zip(toks, toks[1:])]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float64)
        for row, text in enumerate(texts):
            for feat in self._features(text):
                out[row, zlib.crc32(feat.encode()) % self.dim] += 1.0
        np.log1p(out, out=out)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


def cosine_distances(query: np.ndarray, bank: np.ndarray) -> np.ndarray:
    """1 - cosine between one unit vector and each row of ``bank``."""
    if bank.size == 0:
        return np.empty(0)
    return 1.0 - bank @ query


class NoveltyIndex:
    """Per-setter memory of accepted tasks' embeddings."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._banks: dict[str, list[np.ndarray]] = {}
        self._lock = threading.Lock()

    def check(self, setter: str, text: str) -> tuple[bool, float, np.ndarray]:
        """Return (unique?, smallest distance to the setter's earlier tasks, embedding)."""
        vec = self.embedder.embed([text])[0]
        with self._lock:
            bank = list(self._banks.get(setter, []))
        if not bank:
            return True, float("inf"), vec
        dmin = float(cosine_distances(vec, np.vstack(bank)).min())
        return dmin > self.embedder.threshold, dmin, vec

    def add(self, setter: str, vec: np.ndarray) -> None:
        with self._lock:
            self._banks.setdefault(setter, []).append(vec)

    def seed(self, setter: str, texts: Sequence[str]) -> None:
        """Count ``texts`` (the blank ones left out, each once) as ``setter``'s earlier tasks,
        embedded in one batch."""
        texts = list(dict.fromkeys(t for t in texts if t.strip()))
        if texts:
            vecs = self.embedder.embed(texts)
            with self._lock:
                self._banks.setdefault(setter, []).extend(vecs)


def build_embedder(cfg: object) -> Embedder:
    """Instantiate an embedder config (Hydra ``_target_``); an embedder that cannot run here, or
    a bad setting, raises a one-line :class:`ConfigError` instead of Hydra's wrapped traceback."""
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate

    try:
        return instantiate(cfg, _convert_="all")
    except InstantiationException as exc:
        cause = exc.__cause__
        if isinstance(cause, ConfigError):
            raise cause from None
        if isinstance(cause, (ValueError, TypeError)):
            raise ConfigError(f"embedder: {cause}") from None
        raise

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
from typing import Any

import numpy as np

from skate.embedders.config import EmbedderConfig, HashingEmbedderConfig
from skate.embedders.config import embedder as embedders
from skate.errors import ConfigError
from skate.registry import Component

_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+|[^\w\s]")


class EmbedderUnavailable(ConfigError):
    """The configured embedder cannot run here (a missing package, weights or key); the message
    says what to install or set."""


class Embedder(Component[EmbedderConfig], ABC):
    """Maps texts to unit-norm vectors; ``threshold`` is its uniqueness cut-off on 1 - cosine.
    Built from its settings (:class:`~skate.registry.Component`: an instance of its schema, or
    the schema's keys as keywords)."""

    threshold: float
    uses_client = False  # True: it calls a model, through the run's client (connect)

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape (len(texts), dim) with unit-norm rows (zero rows allowed)."""

    def connect(self, client: Any, check: bool = True) -> None:
        """Take the run's model client: what an embedder that ``uses_client`` defines."""
        raise NotImplementedError(f"{type(self).__name__} takes no model client")


class HashingEmbedder(Embedder):
    """Hashed bag of token unigrams and bigrams, sub-linear counts, L2-normalised.

    Cheap, offline and deterministic across processes (crc32, not Python's salted ``hash``).
    Numbers are folded into one token class so that changing constants alone does not make a
    task look new.
    """

    schema = HashingEmbedderConfig  # registered by import path (skate.embedders.config)
    settings: HashingEmbedderConfig

    def __init__(self, settings: HashingEmbedderConfig | None = None, /, **values: Any) -> None:
        super().__init__(settings, **values)
        self.dim, self.threshold = self.settings.dim, self.settings.threshold
        if self.dim < 16:
            raise ValueError(f"embedder.dim={self.dim} is too small: use at least 16")

    def _features(self, text: str) -> list[str]:
        toks = ["<num>" if t[0].isdigit() else t for t in _TOKEN.findall(text)]
        return toks + [f"{a} {b}" for a, b in zip(toks, toks[1:], strict=False)]

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


def _room(arr: np.ndarray, need: int) -> np.ndarray:
    """``arr``, or a copy of it with room for ``need`` rows (doubling, so appends cost O(1) each)."""
    if len(arr) >= need:
        return arr
    grown = np.empty((max(need, 2 * len(arr), 16), *arr.shape[1:]), dtype=arr.dtype)
    grown[: len(arr)] = arr
    return grown


class _Bank:
    """One setter's earlier tasks' embeddings, for the smallest distance to a new one.

    Each row is kept in the smaller of two forms: its nonzero (column, value) pairs (the hashing
    embedder's vectors hold about 90 nonzeros of 1,024: a ninth of the memory) or a dense row
    (a neural embedder's). The arrays grow in place by doubling and hold copies, never views of
    a caller's batch, so a check reads the bank without stacking it again and a long game keeps
    only what it needs. Appends never touch the rows a reader already counted, so a reader may
    work on a snapshot (arrays, counts) outside the index's lock.
    """

    def __init__(self, dim: int, dtype: np.dtype) -> None:
        self.dim = dim
        self.cols = np.empty(0, dtype=np.min_scalar_type(max(dim - 1, 0)))
        self.vals = np.empty(0, dtype=dtype)
        self.starts = np.empty(0, dtype=np.int64)  # where each sparse row's pairs begin
        self.dense = np.empty((0, dim), dtype=dtype)
        self.n_pairs = self.n_sparse = self.n_dense = self.n_zero = 0

    def __len__(self) -> int:
        return self.n_sparse + self.n_dense + self.n_zero

    @property
    def nbytes(self) -> int:
        """Bytes the bank's arrays take (the room grown for later rows included)."""
        return self.cols.nbytes + self.vals.nbytes + self.starts.nbytes + self.dense.nbytes

    def add(self, vec: np.ndarray) -> None:
        cols = np.flatnonzero(vec)
        if not len(cols):
            self.n_zero += 1  # a blank text's vector: 1 - cosine with it is 1
        elif len(cols) * (self.cols.itemsize + self.vals.itemsize) < self.dim * self.vals.itemsize:
            end = self.n_pairs + len(cols)
            self.cols, self.vals = _room(self.cols, end), _room(self.vals, end)
            self.cols[self.n_pairs : end], self.vals[self.n_pairs : end] = cols, vec[cols]
            self.starts = _room(self.starts, self.n_sparse + 1)
            self.starts[self.n_sparse] = self.n_pairs
            self.n_pairs, self.n_sparse = end, self.n_sparse + 1
        else:
            self.dense = _room(self.dense, self.n_dense + 1)
            self.dense[self.n_dense] = vec
            self.n_dense += 1

    def snapshot(self) -> tuple:
        return (self.cols, self.vals, self.starts, self.dense, self.n_pairs, self.n_sparse, self.n_dense, self.n_zero)

    @staticmethod
    def min_distance(snap: tuple, query: np.ndarray) -> float:
        """The smallest 1 - cosine between ``query`` and a snapshot's rows (inf for none)."""
        cols, vals, starts, dense, n_pairs, n_sparse, n_dense, n_zero = snap
        best = 1.0 if n_zero else float("inf")
        if n_sparse:
            dots = np.add.reduceat(vals[:n_pairs] * query[cols[:n_pairs]], starts[:n_sparse])
            best = min(best, float((1.0 - dots).min()))
        if n_dense:
            best = min(best, float(cosine_distances(query, dense[:n_dense]).min()))
        return best


class NoveltyIndex:
    """Per-setter memory of accepted tasks' embeddings."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._banks: dict[str, _Bank] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """How many tasks the index holds, over every setter."""
        with self._lock:
            return sum(len(bank) for bank in self._banks.values())

    @property
    def nbytes(self) -> int:
        """Bytes the index's embeddings take, over every setter."""
        with self._lock:
            return sum(bank.nbytes for bank in self._banks.values())

    def check(self, setter: str, text: str) -> tuple[bool, float, np.ndarray]:
        """Return (unique?, smallest distance to the setter's earlier tasks, embedding)."""
        vec = self.embedder.embed([text])[0]
        with self._lock:
            bank = self._banks.get(setter)
            snap = bank.snapshot() if bank is not None else None
        dmin = float("inf") if snap is None else _Bank.min_distance(snap, vec)
        return dmin > self.embedder.threshold, dmin, vec  # no earlier task: inf, unique

    def add(self, setter: str, vec: np.ndarray) -> None:
        self.extend(setter, vec[None, :])

    def extend(self, setter: str, vecs: np.ndarray) -> None:
        """Add each row of ``vecs`` to ``setter``'s earlier tasks."""
        with self._lock:
            bank = self._banks.get(setter)
            if bank is None:
                bank = self._banks[setter] = _Bank(vecs.shape[1], vecs.dtype)
            for vec in vecs:
                bank.add(vec)

    def seed(self, setter: str, texts: Sequence[str]) -> None:
        """Count ``texts`` (the blank ones left out, each once) as ``setter``'s earlier tasks,
        embedded in one batch."""
        texts = list(dict.fromkeys(t for t in texts if t.strip()))
        if texts:
            self.extend(setter, self.embedder.embed(texts))


def build_embedder(settings: EmbedderConfig) -> Embedder:
    """The embedder its settings (the ``embedder`` section) name, built from them (the ``embedder``
    registry); an embedder that cannot run here, or a bad setting, raises a one-line
    :class:`ConfigError`."""
    try:
        return embedders.build(settings)
    except ConfigError:
        raise
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"embedder: {exc}") from None

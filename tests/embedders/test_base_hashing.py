"""Uniqueness: embedding distance against every earlier task by the same setter."""

from __future__ import annotations

import numpy as np
import pytest

from skate.embedders import HashingEmbedder, NoveltyIndex
from skate.embedders.config import HashingEmbedderConfig
from skate.errors import SettingError

LOOP = "total = 0\nfor i in range(10):\n    total += i * i\nprint(total)\n"
STRINGS = "word = 'banana'\nprint(word[::-1].upper().count('A'))\n"


def test_vectors_are_unit_norm_and_deterministic():
    emb = HashingEmbedder(dim=256)
    a, b = emb.embed([LOOP, LOOP])
    assert np.isclose(np.linalg.norm(a), 1.0) and np.array_equal(a, b)


def test_changing_only_constants_is_a_duplicate():
    emb = HashingEmbedder()
    a, b = emb.embed([LOOP, LOOP.replace("10", "37").replace("0\n", "5\n")])
    assert 1 - a @ b < 1e-9


def test_different_programs_are_far_apart():
    emb = HashingEmbedder()
    a, b = emb.embed([LOOP, STRINGS])
    assert 1 - a @ b > 0.6


def test_index_is_per_setter():
    idx = NoveltyIndex(HashingEmbedder(threshold=0.2))
    ok, dist, vec = idx.check("alice", LOOP)
    assert ok and dist == float("inf")
    idx.add("alice", vec)
    ok, dist, _ = idx.check("alice", LOOP)
    assert not ok and dist == pytest.approx(0.0, abs=1e-9)
    ok, _, _ = idx.check("bob", LOOP)  # another setter's tasks do not count
    assert ok
    ok, dist, _ = idx.check("alice", STRINGS)
    assert ok and dist > 0.2


def test_threshold_is_the_embedders_setting():
    emb_strict = HashingEmbedder(threshold=0.99)
    idx = NoveltyIndex(emb_strict)
    idx.add("alice", idx.check("alice", LOOP)[2])
    assert not idx.check("alice", STRINGS)[0]  # nothing is that far away


def test_rejects_tiny_dimension():
    with pytest.raises(ValueError, match="embedder.dim"):
        HashingEmbedder(dim=4)


class Given:
    """An embedder that returns the vectors it is given, text by text."""

    threshold = 0.2

    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self.vectors = vectors

    def embed(self, texts):
        return np.stack([self.vectors[t] for t in texts])


def test_the_index_finds_the_nearest_earlier_task_whatever_its_form():
    """Mostly-zero rows (kept as pairs), dense rows and a zero row, against a brute-force scan."""
    rng = np.random.default_rng(7)
    dim, rows = 64, []
    for i in range(60):
        vec = np.zeros(dim)
        cols = rng.choice(dim, size=dim if i % 3 == 0 else int(rng.integers(1, 8)), replace=False)
        vec[cols] = rng.normal(size=len(cols))
        rows.append(vec / np.linalg.norm(vec))
    rows.append(np.zeros(dim))
    texts = [f"t{i}" for i in range(len(rows))]
    queries = {f"q{i}": (v := rng.normal(size=dim)) / np.linalg.norm(v) for i in range(20)}
    idx = NoveltyIndex(Given({**dict(zip(texts, rows, strict=False)), **queries}))
    idx.seed("alice", texts[:30])
    for text in texts[30:]:
        idx.add("alice", idx.check("alice", text)[2])
    assert len(idx) == len(rows)
    bank = np.stack(rows)
    for text, q in queries.items():
        unique, dist, _ = idx.check("alice", text)
        assert dist == pytest.approx(float((1.0 - bank @ q).min()), abs=1e-12)
        assert unique == (dist > 0.2)


def test_a_long_game_keeps_hashed_tasks_in_a_fraction_of_their_dense_size():
    """The hashing embedder's vectors are mostly zero: the index keeps their nonzero entries only,
    copied out of the batch they came in (a row view would keep the whole batch alive)."""
    emb = HashingEmbedder()
    idx = NoveltyIndex(emb)
    programs = [LOOP.replace("10", str(k)).replace("total", f"total_{k}") for k in range(400)]
    idx.seed("alice", programs[:200])
    for text in programs[200:]:
        idx.add("alice", idx.check("alice", text)[2])
    assert len(idx) == 400
    assert idx.nbytes < 400 * emb.dim * 8 / 4
    ok, dist, _ = idx.check("alice", programs[3])
    assert not ok and dist == pytest.approx(0.0, abs=1e-9)


def test_an_embedder_is_built_from_its_settings_or_their_keys():
    """Its schema's instance, or the schema's keys as keywords (a misspelt one refused, naming the
    setting); every default is the schema's."""
    given, keyed, bare = HashingEmbedder(HashingEmbedderConfig(dim=256)), HashingEmbedder(dim=256), HashingEmbedder()
    assert (given.dim, keyed.dim, given.threshold) == (256, 256, HashingEmbedderConfig.threshold)
    assert bare.settings == HashingEmbedderConfig() and (bare.dim, bare.threshold) == (1024, 0.2)
    assert HashingEmbedder(HashingEmbedderConfig(dim=256), threshold=0.5).settings == HashingEmbedderConfig(
        dim=256, threshold=0.5
    )
    with pytest.raises(SettingError, match="dims"):
        HashingEmbedder(dims=256)

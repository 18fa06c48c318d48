"""Uniqueness: embedding distance against every earlier task by the same setter."""

from __future__ import annotations

import numpy as np
import pytest

from skate.embedders import HashingEmbedder, NoveltyIndex

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

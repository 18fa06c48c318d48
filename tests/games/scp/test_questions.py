"""SCP questions: each type on hand-made fragments, and a full benchmark on the shipped PEPs."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter

import numpy as np
import pytest

from skate.games.scp.corpus import shipped_corpus
from skate.games.scp.fragments import Fragment, paragraphs
from skate.games.scp.questions import (
    ClozeQuestion,
    PredictionQuestion,
    SequencingQuestion,
    build,
    check,
    cloze,
    normalise,
    prediction,
    sequencing,
    similar,
    split_in_three,
)

P1 = (
    "Rivers carry sediment from the mountains to the sea. The heaviest stones settle first. "
    "Sand travels much further downstream."
)
P2 = (
    "Near the mouth the water slows down. Fine clay finally drops out of suspension there. "
    "Over centuries this builds a delta."
)
FRAG = Fragment("rivers.txt", "geo", 3, (P1, P2))


@pytest.fixture(scope="module")
def bench():
    return build(shipped_corpus(), per_doc=4, seed=0)


def test_split_in_three_is_contiguous_and_balanced():
    chunks = split_in_three(["aaaa.", "bb.", "cc.", "dddd.", "e."])
    assert " ".join(chunks) == "aaaa. bb. cc. dddd. e."
    assert chunks == ["aaaa.", "bb. cc.", "dddd. e."]
    assert split_in_three(["one.", "two."]) is None


@pytest.mark.parametrize("seed", range(12))
def test_sequencing_restores_only_with_the_answer(seed):
    q = sequencing(FRAG, seed)
    assert isinstance(q, SequencingQuestion) and check(q) == []
    assert normalise(" ".join(q.chunks)) != normalise(FRAG.text)  # never shown in order
    for i, opt in enumerate(q.options):
        text = " ".join(q.chunks["ABC".index(letter)] for letter in opt.split())
        assert (normalise(text) == normalise(q.original)) == (i == q.answer)
    assert "A: " in q.question and q.original == FRAG.text


@pytest.mark.parametrize("seed", range(12))
def test_cloze_fills_only_with_the_answer(seed):
    q = cloze(FRAG, seed)
    assert isinstance(q, ClozeQuestion) and check(q) == []
    assert len(set(q.options)) == 4
    assert [q.masked.index(f"[MASK_{k}]") for k in (1, 2, 3)] == sorted(
        q.masked.index(f"[MASK_{k}]") for k in (1, 2, 3)
    )
    for i, opt in enumerate(q.options):
        filled = q.masked
        for hole, letter in enumerate(opt.split(), start=1):
            filled = filled.replace(f"[MASK_{hole}]", q.candidates["ABC".index(letter)])
        assert (normalise(filled) == normalise(q.original)) == (i == q.answer)


def test_check_catches_broken_questions():
    q = sequencing(FRAG, 1)
    wrong = dataclasses.replace(q, answer=(q.answer + 1) % 4)
    assert check(wrong)
    assert check(dataclasses.replace(q, options=q.options[:3]))
    c = cloze(FRAG, 1)
    dup = list(c.options)
    dup[(c.answer + 1) % 4] = dup[c.answer]
    assert any("distinct" in p for p in check(dataclasses.replace(c, options=dup)))


def test_similar_ranks_by_tfidf():
    paras = ["cats purr and cats nap", "dogs bark loudly", "cats chase mice", "the stock market"]
    assert similar(paras, "cats purr", 2) == [0, 2]
    assert similar(paras, "cats purr", 2, exclude={0}) == [2, 1]  # tie at 0 -> earlier first
    assert similar(paras, "dogs", 1, exclude={1}) == [0]
    assert similar([], "x", 3) == []


def test_prediction_on_a_small_document():
    paras = [
        "Bees visit many flowers every single day in the warm summer months of the year.",
        "Each bee carries pollen on its legs from one flower to the next flower it visits.",
        "This transfer of pollen lets the flowers make seeds and fruit for the next season.",
        "Farmers rent hives so that their orchards get enough bees during the bloom.",
        "Honey is stored in wax cells and sealed once the water content is low enough.",
        "Winter is spent in a tight cluster that keeps the queen warm until spring returns.",
    ]
    frag = Fragment("bees.txt", "bio", 1, (paras[1],))
    q = prediction(frag, paras, seed=3)
    assert isinstance(q, PredictionQuestion) and check(q) == []
    assert q.original == paras[2] and q.options[q.answer] == paras[2]
    assert q.context == paras[1] and paras[1] not in q.options
    assert len(set(q.options)) == 4


def test_shipped_benchmark_passes_every_check(bench):
    assert len(bench) >= 300
    counts = Counter(q.type for q in bench)
    # 147 / 18 / 152 since issue 25: five paragraphs of unbroken prose are rare in the PEPs
    assert counts["sequencing"] >= 120 and counts["prediction"] >= 120 and counts["cloze"] >= 15, counts
    assert len({q.id for q in bench}) == len(bench)
    for q in bench:
        assert check(q) == [], q.id
        assert len(q.options) == 4 and 0 <= q.answer < 4
        assert q.position > 0 and q.seed == 0


def test_prediction_distractors_are_never_context_or_truth(bench):
    for q in (q for q in bench if q.type == "prediction"):
        others = [normalise(o) for i, o in enumerate(q.options) if i != q.answer]
        assert normalise(q.original) not in others
        assert normalise(q.context) not in others
        assert len(set(others)) == 3


def test_provenance_points_at_the_text(bench):
    docs = {d.id: d for d in shipped_corpus()}
    for q in bench[::7]:
        paras = paragraphs(docs[q.doc].text)
        assert q.domain == docs[q.doc].domain
        if q.type == "prediction":
            assert q.context == paras[q.position] and q.original == paras[q.position + 1]
        else:
            n = 2 if q.type == "sequencing" else 5
            assert q.original == "\n\n".join(paras[q.position : q.position + n])


def test_build_is_deterministic_in_the_seed():
    docs = shipped_corpus()[:10]
    a = [q.to_json() for q in build(docs, 2, seed=5)]
    b = [q.to_json() for q in build(docs, 2, seed=5)]
    c = [q.to_json() for q in build(docs, 2, seed=6)]
    assert a == b and a != c


def test_to_json_record():
    q = cloze(FRAG, 0)
    rec = json.loads(json.dumps(q.to_json()))
    for key in (
        "id",
        "type",
        "domain",
        "doc",
        "position",
        "question",
        "options",
        "answer",
        "original",
        "seed",
        "masked",
        "candidates",
    ):
        assert key in rec
    assert rec["type"] == "cloze" and rec["doc"] == "rivers.txt" and rec["position"] == 3
    seq = sequencing(FRAG, 0).to_json()
    assert "chunks" in seq and "masked" not in seq
    with pytest.raises(ValueError):
        build([], 1, 0, types=("essay",))


def test_similar_can_rank_by_an_embedder():
    paras = ["alpha beta", "gamma delta", "epsilon zeta", "eta theta"]

    def embed(texts):  # the query points at paragraph 3, then 1; TF-IDF would find nothing
        vecs = {
            "alpha beta": [1, 0, 0],
            "gamma delta": [0.5, 0.5, 0],
            "epsilon zeta": [0, 0, 1],
            "eta theta": [0.9, 0.1, 0],
            "query": [1, 0, 0],
        }
        return np.array([vecs[t] for t in texts], dtype=float)

    assert similar(paras, "query", 2, embed=embed) == [0, 3]
    assert similar(paras, "query", 2, exclude={0}, embed=embed) == [3, 1]


def test_prediction_distractors_follow_the_configured_embedder():
    from skate.embedders import HashingEmbedder

    docs = shipped_corpus()[:8]
    tfidf = build(docs, 2, 0, types=("prediction",))
    hashed = build(docs, 2, 0, types=("prediction",), embed=HashingEmbedder().embed)
    assert len(tfidf) == len(hashed) >= 8 and all(not check(q) for q in hashed)
    assert [q.original for q in tfidf] == [q.original for q in hashed]  # same fragments and truths
    assert any(sorted(a.options) != sorted(b.options) for a, b in zip(tfidf, hashed, strict=False))  # other distractors

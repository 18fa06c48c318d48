"""SCP questions: sequencing, cloze and prediction, built from fragments of known text.

Every question has four options and exactly one correct one, which :func:`check` verifies from the
question alone: the correct option restores ``original`` (up to whitespace) and no other does.
Provenance (document, paragraph position, seed) is kept on every question, and :func:`build` is
deterministic in its seed.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import itertools
import math
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from skate.games.scp.corpus import Document
from skate.games.scp.fragments import (
    DEFAULT_SIZES,
    MARKUP_THRESHOLD,
    Fragment,
    acceptable,
    fragments,
    markup_density,
    paragraph_runs,
    sentences,
    starts_badly,
)

TYPES = ("sequencing", "cloze", "prediction")
Embed = Callable[[list[str]], Any]  # texts -> one vector per text
LETTERS = "ABC"
N_OPTIONS = 4


def normalise(text: str) -> str:
    """``text`` with every run of whitespace made one space (the comparison used throughout)."""
    return " ".join(text.split())


@dataclass(kw_only=True)
class Question:
    """Fields common to the three types; ``answer`` indexes ``options``."""

    id: str
    type: str
    domain: str
    doc: str
    position: int
    seed: int
    question: str
    options: list[str]
    answer: int
    original: str

    def to_json(self) -> dict:
        """The JSONL record (a JSON-ready dict) of the issue's benchmark format."""
        return asdict(self)


@dataclass(kw_only=True)
class SequencingQuestion(Question):
    chunks: list[str] = field(default_factory=list)  # in the order shown, the first lettered A


@dataclass(kw_only=True)
class ClozeQuestion(Question):
    masked: str = ""  # the fragment with holes [MASK_1], [MASK_2], [MASK_3] in reading order
    candidates: list[str] = field(default_factory=list)  # masked sentences as shown, A first


@dataclass(kw_only=True)
class PredictionQuestion(Question):
    context: str = ""


# --------------------------------------------------------------------------- rendering


def sequencing_stem(chunks: list[str]) -> str:
    """A sequencing question's text without its options (``chunks`` in the order shown)."""
    return (
        "The passage below was cut into three parts, which are shown out of order.\n\n"
        + "\n\n".join(f"{LETTERS[k]}: {c}" for k, c in enumerate(chunks))
        + "\n\nWhich order of the parts restores the original passage?"
    )


def cloze_stem(masked: str, candidates: list[str]) -> str:
    """A cloze question's text without its options."""
    return (
        "Three sentences were removed from the passage below and replaced by [MASK_1], "
        "[MASK_2] and [MASK_3].\n\n"
        + masked
        + "\n\nThe removed sentences:\n"
        + "\n".join(f"{LETTERS[k]}: {c}" for k, c in enumerate(candidates))
        + "\n\nWhich sentences fill holes 1, 2 and 3, in that order?"
    )


def prediction_stem(context: str) -> str:
    """A prediction question's text without its candidate continuations."""
    return (
        "Read the passage, then choose the paragraph that comes right after it in the "
        "original document.\n\nPassage:\n" + context
    )


def stem(q: Question) -> str:
    """What a player reads before the options: the question without its numbered options."""
    if isinstance(q, SequencingQuestion):
        return sequencing_stem(q.chunks)
    if isinstance(q, ClozeQuestion):
        return cloze_stem(q.masked, q.candidates)
    if isinstance(q, PredictionQuestion):
        return prediction_stem(q.context)
    raise ValueError(f"unknown question type {q.type!r}")


_CLASSES: dict[str, type[Question]] = {}


def from_json(record: dict) -> Question:
    """The question a :meth:`Question.to_json` record describes (ValueError naming what is
    wrong with a record that is not one)."""
    if not isinstance(record, dict):
        raise ValueError(f"a question record is a JSON object, got {type(record).__name__}")  # bad input
    qtype = record.get("type")
    cls = _CLASSES.get(str(qtype))
    if cls is None:
        raise ValueError(f"unknown question type {qtype!r}; known: {', '.join(TYPES)}")
    names = {f.name for f in dataclasses.fields(cls)}
    missing = sorted(names - set(record))
    if missing:
        raise ValueError(f"a {qtype} question needs the fields {missing}")
    q = cls(**{k: record[k] for k in names})
    try:
        problems = check(q)
    except (TypeError, AttributeError, KeyError, IndexError) as exc:
        raise ValueError(
            f"question {record.get('id')!r} has a field of the wrong type ({exc}): options must be "
            "a list of 4 strings and answer an integer index"
        ) from None
    if problems:
        raise ValueError(f"question {record.get('id')!r} fails its checks: {'; '.join(problems)}")
    return q


# --------------------------------------------------------------------------- helpers


def _options_block(options: list[str]) -> str:
    return "\n".join(f"{i + 1}. {opt}" for i, opt in enumerate(options))


def _letter_options(rng: random.Random, correct: tuple[int, ...]) -> tuple[list[str], int]:
    """The correct letter order plus three other permutations, shuffled; (options, answer)."""
    others = [p for p in itertools.permutations(range(3)) if p != correct]
    picked = [correct] + rng.sample(others, N_OPTIONS - 1)
    rng.shuffle(picked)
    options = [" ".join(LETTERS[i] for i in p) for p in picked]
    return options, picked.index(correct)


def _parse_letters(option: str) -> list[int] | None:
    parts = option.split()
    if sorted(parts) != list(LETTERS):
        return None
    return [LETTERS.index(p) for p in parts]


def _derangement_like(rng: random.Random, n: int) -> list[int]:
    """A random permutation of range(n) other than the identity."""
    while True:
        perm = list(range(n))
        rng.shuffle(perm)
        if perm != list(range(n)):
            return perm


def _rng(seed: int, *parts) -> random.Random:
    return random.Random(":".join(str(p) for p in (seed,) + parts))


# --------------------------------------------------------------------------- sequencing


def split_in_three(sents: list[str]) -> list[str] | None:
    """Cut a list of sentences into 3 contiguous chunks of lengths as even as possible."""
    n = len(sents)
    if n < 3:
        return None
    lengths = [len(s) + 1 for s in sents]
    cum = [0] + list(itertools.accumulate(lengths))
    total = cum[-1]
    best, best_cost = (1, 2), math.inf  # n >= 3: the first split is taken
    for i in range(1, n - 1):
        for j in range(i + 1, n):
            parts = (cum[i], cum[j] - cum[i], total - cum[j])
            cost = max(parts) - min(parts)
            if cost < best_cost:
                best, best_cost = (i, j), cost
    i, j = best
    return [" ".join(sents[:i]), " ".join(sents[i:j]), " ".join(sents[j:])]


def sequencing(frag: Fragment, seed: int) -> SequencingQuestion | None:
    sents = [s for p in frag.paragraphs for s in sentences(p)]
    chunks = split_in_three(sents)
    if chunks is None or len({normalise(c) for c in chunks}) < 3:
        return None
    # A chunk that recurs inside another (a paragraph's closing sentence repeated word for word
    # in the next one) cannot be told apart by reading where it stands in the source.
    norm = [normalise(c) for c in chunks]
    if any(i != j and a in b for i, a in enumerate(norm) for j, b in enumerate(norm)):
        return None
    rng = _rng(seed, "sequencing", frag.doc_id, frag.position)
    perm = _derangement_like(rng, 3)  # shown[k] = chunks[perm[k]]
    shown = [chunks[k] for k in perm]
    reading = tuple(perm.index(j) for j in range(3))  # shown letter of the j-th original chunk
    options, answer = _letter_options(rng, reading)
    text = sequencing_stem(shown) + "\n" + _options_block(options)
    return SequencingQuestion(
        id=f"sequencing/{frag.doc_id}/{frag.position}/{seed}",
        type="sequencing",
        domain=frag.domain,
        doc=frag.doc_id,
        position=frag.position,
        seed=seed,
        question=text,
        options=options,
        answer=answer,
        original=frag.text,
        chunks=shown,
    )


# --------------------------------------------------------------------------- cloze


def _hole(k: int) -> str:
    return f"[MASK_{k}]"


def cloze(frag: Fragment, seed: int) -> ClozeQuestion | None:
    per_para = [sentences(p) for p in frag.paragraphs]
    flat = [(pi, si) for pi, ss in enumerate(per_para) for si in range(len(ss))]
    if len(flat) < 4:
        return None
    rng = _rng(seed, "cloze", frag.doc_id, frag.position)
    # Masking needs three distinct sentences that appear nowhere else in the fragment.
    counts = Counter(normalise(s) for ss in per_para for s in ss)
    eligible = [
        ix for ix in flat if counts[normalise(per_para[ix[0]][ix[1]])] == 1 and "[MASK_" not in per_para[ix[0]][ix[1]]
    ]
    if len(eligible) < 3:
        return None
    holes = sorted(rng.sample(eligible, 3))
    hidden = [per_para[pi][si] for pi, si in holes]
    masked_paras = [list(ss) for ss in per_para]
    for k, (pi, si) in enumerate(holes):
        masked_paras[pi][si] = _hole(k + 1)
    masked = "\n\n".join(" ".join(ss) for ss in masked_paras)
    perm = _derangement_like(rng, 3)  # candidates[k] = hidden[perm[k]]
    candidates = [hidden[k] for k in perm]
    fill = tuple(perm.index(h) for h in range(3))  # candidate letter filling hole h
    options, answer = _letter_options(rng, fill)
    text = cloze_stem(masked, candidates) + "\n" + _options_block(options)
    return ClozeQuestion(
        id=f"cloze/{frag.doc_id}/{frag.position}/{seed}",
        type="cloze",
        domain=frag.domain,
        doc=frag.doc_id,
        position=frag.position,
        seed=seed,
        question=text,
        options=options,
        answer=answer,
        original=frag.text,
        masked=masked,
        candidates=candidates,
    )


# --------------------------------------------------------------------------- prediction

_TOKEN = re.compile(r"[a-z0-9]+")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


@functools.lru_cache(maxsize=16)
def _tfidf(doc_paragraphs: tuple[str, ...]) -> tuple[dict[str, int], np.ndarray, np.ndarray, np.ndarray]:
    """A document's TF-IDF matrix (vocabulary, idf, rows, row norms), made once for all the
    queries a build asks of one document."""
    docs = [_tokens(p) for p in doc_paragraphs]
    vocab = {w: i for i, w in enumerate(sorted({w for d in docs for w in d}))}
    tf = np.zeros((len(docs), len(vocab)))
    for r, d in enumerate(docs):
        for w, c in Counter(d).items():
            tf[r, vocab[w]] = c
    df = (tf > 0).sum(axis=0)
    idf = np.log((1 + len(docs)) / (1 + df)) + 1.0
    mat = tf * idf
    norms = np.linalg.norm(mat, axis=1)
    for a in (idf, mat, norms):
        a.flags.writeable = False  # shared by every query of the document
    return vocab, idf, mat, norms


def similar(
    doc_paragraphs: list[str],
    query: str,
    k: int,
    exclude: set[int] | frozenset[int] = frozenset(),
    embed: Embed | None = None,
) -> list[int]:
    """Indices of the ``k`` paragraphs most similar to ``query`` by TF-IDF cosine, best first.

    The vocabulary and document frequencies come from ``doc_paragraphs``; paragraphs whose index
    is in ``exclude`` are never returned; ties go to the earlier paragraph. With ``embed`` (texts
    to an array of vectors, e.g. a :class:`skate.embedders.Embedder`'s ``embed``) the cosine of
    those vectors is used instead.
    """
    if embed is not None:
        if k <= 0 or not doc_paragraphs:
            return []
        mat = np.asarray(embed(list(doc_paragraphs)), dtype=float)
        q = np.asarray(embed([query]), dtype=float)[0]
        norms = np.linalg.norm(mat, axis=1) * (np.linalg.norm(q) or 1.0)
        scores = np.divide(mat @ q, norms, out=np.zeros(len(mat)), where=norms > 0)
        order = sorted(range(len(mat)), key=lambda i: (-scores[i], i))
        return [i for i in order if i not in exclude][:k]
    if k <= 0:
        return []
    vocab, idf, mat, row_norms = _tfidf(tuple(doc_paragraphs))
    if not vocab:
        return []
    n = len(mat)
    q = np.zeros(len(vocab))
    for w, c in Counter(_tokens(query)).items():
        if w in vocab:
            q[vocab[w]] = c
    q *= idf
    norms = row_norms * (np.linalg.norm(q) or 1.0)
    scores = np.divide(mat @ q, norms, out=np.zeros(n), where=norms > 0)
    order = sorted(range(n), key=lambda i: (-scores[i], i))
    return [i for i in order if i not in exclude][:k]


def passage_ok(text: str, threshold: float) -> bool:
    """Whether a paragraph can be a candidate continuation: prose of some length that starts a
    sentence and does not end by introducing something (code, a list) that was removed."""
    return (
        len(text) >= 40
        and markup_density(text) <= threshold
        and not starts_badly(text)
        and not text.rstrip().endswith(":")
    )


def can_start(run: Sequence[str], qtype: str, doc: str, start: int, min_chars: int, threshold: float) -> bool:
    """Whether a question of ``qtype`` can be cut from ``run``, the paragraphs from ``start`` of a
    document (for prediction the fragment and the paragraph after it, its true continuation):
    the fragment passes :func:`~skate.games.scp.fragments.acceptable`, a prediction's
    continuation :func:`passage_ok`, and a sequencing or cloze question can be built from it."""
    n = len(run) - (qtype == "prediction")
    if not acceptable(run[:n], min_chars, threshold):
        return False
    if qtype == "prediction":
        return passage_ok(run[n], threshold)
    frag = Fragment(doc, "", start, tuple(run[:n]))
    builder = sequencing if qtype == "sequencing" else cloze
    return builder(frag, 0) is not None


def prediction(
    frag: Fragment, doc_paras: list[str], seed: int, threshold: float = MARKUP_THRESHOLD, embed: Embed | None = None
) -> PredictionQuestion | None:
    end = frag.position + len(frag.paragraphs)
    if end >= len(doc_paras):
        return None
    truth = doc_paras[end]
    if not passage_ok(truth, threshold):
        return None
    context = frag.text
    taken = {normalise(truth), normalise(context)} | {normalise(p) for p in frag.paragraphs}
    exclude = set(range(frag.position, end + 1))
    distractors: list[str] = []
    for i in similar(doc_paras, context, len(doc_paras), exclude, embed):
        cand = doc_paras[i]
        if normalise(cand) in taken or not passage_ok(cand, threshold):
            continue
        distractors.append(cand)
        taken.add(normalise(cand))
        if len(distractors) == N_OPTIONS - 1:
            break
    if len(distractors) < N_OPTIONS - 1:
        return None
    rng = _rng(seed, "prediction", frag.doc_id, frag.position)
    options = [truth] + distractors
    rng.shuffle(options)
    answer = options.index(truth)
    text = (
        prediction_stem(context) + "\n\nCandidates:\n" + "\n\n".join(f"{i + 1}. {opt}" for i, opt in enumerate(options))
    )
    return PredictionQuestion(
        id=f"prediction/{frag.doc_id}/{frag.position}/{seed}",
        type="prediction",
        domain=frag.domain,
        doc=frag.doc_id,
        position=frag.position,
        seed=seed,
        question=text,
        options=options,
        answer=answer,
        original=truth,
        context=context,
    )


# --------------------------------------------------------------------------- checking


def check(q: Question) -> list[str]:
    """Problems with ``q`` (an empty list when it is sound)."""
    problems = []
    if len(q.options) != N_OPTIONS:
        problems.append(f"{len(q.options)} options instead of {N_OPTIONS}")
    if len({normalise(o) for o in q.options}) != len(q.options):
        problems.append("options are not distinct")
    if not 0 <= q.answer < len(q.options):
        return problems + [f"answer index {q.answer} out of range"]
    original = normalise(q.original)
    if isinstance(q, SequencingQuestion):
        if len(q.chunks) != 3:
            problems.append("sequencing needs 3 chunks")
            return problems
        if normalise(" ".join(q.chunks)) == original:
            problems.append("chunks are shown in the original order")
        restoring = []
        for i, opt in enumerate(q.options):
            order = _parse_letters(opt)
            if order is None:
                problems.append(f"option {i} is not an order of {LETTERS}: {opt!r}")
            elif normalise(" ".join(q.chunks[k] for k in order)) == original:
                restoring.append(i)
        if restoring != [q.answer]:
            problems.append(f"options restoring the text: {restoring}, answer {q.answer}")
    elif isinstance(q, ClozeQuestion):
        holes = re.findall(r"\[MASK_(\d+)\]", q.masked)
        if holes != ["1", "2", "3"] or len(q.candidates) != 3:
            problems.append(f"cloze needs holes 1, 2, 3 in order and 3 candidates: {holes}")
            return problems
        restoring = []
        for i, opt in enumerate(q.options):
            order = _parse_letters(opt)
            if order is None:
                problems.append(f"option {i} is not an assignment of {LETTERS}: {opt!r}")
                continue
            filled = q.masked
            for h, k in enumerate(order):
                filled = filled.replace(_hole(h + 1), q.candidates[k])
            if normalise(filled) == original:
                restoring.append(i)
        if restoring != [q.answer]:
            problems.append(f"options restoring the text: {restoring}, answer {q.answer}")
    elif isinstance(q, PredictionQuestion):
        matches = [i for i, o in enumerate(q.options) if normalise(o) == original]
        if matches != [q.answer]:
            problems.append(f"options equal to the true continuation: {matches}")
        if any(normalise(o) == normalise(q.context) for o in q.options):
            problems.append("an option repeats the context")
    else:
        problems.append(f"unknown question type {q.type!r}")
    return problems


# --------------------------------------------------------------------------- building


def build(
    docs: list[Document],
    per_doc: int,
    seed: int,
    types: tuple[str, ...] = TYPES,
    sizes: dict[str, tuple[int, int]] | None = None,
    threshold: float = MARKUP_THRESHOLD,
    embed: Embed | None = None,
) -> list[Question]:
    """Up to ``per_doc`` questions of each type from each document, deterministic in ``seed``.

    ``sizes`` maps a type to (paragraphs per fragment, minimum characters); ArxivRoll's values
    by default; ``embed`` ranks prediction distractors by embedding instead of TF-IDF
    (:func:`similar`). A question's pieces are one run of continuous prose in the source
    (:func:`~skate.games.scp.fragments.paragraph_runs`: a heading, list, code block or directive
    ends a run), a prediction's true continuation included. Fragments of one type and document
    do not overlap; questions that fail :func:`check` are dropped.
    """
    unknown = set(types) - set(TYPES)
    if unknown:
        raise ValueError(f"unknown question types {sorted(unknown)}; known: {TYPES}")
    sizes = {**DEFAULT_SIZES, **(sizes or {})}
    if embed is not None:
        return _build(docs, per_doc, seed, tuple(types), sizes, threshold, embed)
    # The same documents and settings give the same questions: built once per process (each
    # game, and each job of a sweep run in one process, builds its benchmark), a fresh copy each call.
    key_sizes = tuple(sorted((t, tuple(size)) for t, size in sizes.items()))
    return copy.deepcopy(list(_built(tuple(docs), per_doc, seed, tuple(types), key_sizes, threshold)))


@functools.lru_cache(maxsize=8)
def _built(
    docs: tuple[Document, ...],
    per_doc: int,
    seed: int,
    types: tuple[str, ...],
    sizes: tuple[tuple[str, tuple[int, int]], ...],
    threshold: float,
) -> tuple[Question, ...]:
    return tuple(_build(list(docs), per_doc, seed, types, dict(sizes), threshold, None))


def _build(
    docs: list[Document],
    per_doc: int,
    seed: int,
    types: tuple[str, ...],
    sizes: dict[str, tuple[int, int]],
    threshold: float,
    embed: Embed | None,
) -> list[Question]:
    out: list[Question] = []
    for doc in sorted(docs, key=lambda d: d.id):
        runs = paragraph_runs(doc.text)
        paras = [p for run in runs for p in run]
        for qtype in types:
            n, min_chars = sizes[qtype]
            # A prediction's continuation follows its context in the same run of prose.
            pool = fragments(doc, n, min_chars, threshold, runs=runs, follow=int(qtype == "prediction"))
            rng = _rng(seed, "pick", qtype, doc.id)
            rng.shuffle(pool)
            used: set[int] = set()
            made = 0
            q: Question | None
            for frag in pool:
                if made >= per_doc:
                    break
                span = set(range(frag.position, frag.position + n + (qtype == "prediction")))
                if span & used:
                    continue
                if qtype == "sequencing":
                    q = sequencing(frag, seed)
                elif qtype == "cloze":
                    q = cloze(frag, seed)
                else:
                    q = prediction(frag, paras, seed, threshold, embed)
                if q is None or check(q):
                    continue
                used |= span
                out.append(q)
                made += 1
    return out


_CLASSES.update(sequencing=SequencingQuestion, cloze=ClozeQuestion, prediction=PredictionQuestion)

__all__ = [
    "TYPES",
    "ClozeQuestion",
    "PredictionQuestion",
    "Question",
    "SequencingQuestion",
    "build",
    "check",
    "cloze",
    "cloze_stem",
    "from_json",
    "normalise",
    "prediction",
    "prediction_stem",
    "sequencing",
    "sequencing_stem",
    "similar",
    "split_in_three",
    "stem",
]

"""Reading SCP questions against their corpus: where text comes from, which option is right,
and how hard a question is.

Simulated players (and the fake server's models) answer by *reading the source document*: a
:class:`Reader` finds each shown piece of text in the corpus and so knows the true order, the
true filling of the holes or the true continuation; how often a player uses that knowledge is
its skill (:mod:`skate.players.simulated`). Whether a question is hard is measured from the
question itself (:func:`difficulty`), on the [0, 1] scale skills are on:

* **sequencing and cloze**: how many wrong options differ from the right one by a single swap
  of two neighbouring letters (near misses), and how short the pieces are (less to go on);
* **prediction**: how close the best distractor comes to the context, relative to the true
  continuation (TF-IDF-like cosine over content words), and how short the context is;
* a fixed offset per question drawn from its text (±0.12), standing for what the features miss.

Each type has its own base; the weights were chosen so that the shipped corpus's questions
spread over about 0.1–0.9 (median: sequencing 0.41, cloze 0.57, prediction 0.73), the range the
default cohort's skills (0.30–0.90) cover.
"""

from __future__ import annotations

import functools
import math
import re
import zlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from skate.answers.choice import ChoiceQuery
from skate.games.scp.corpus import Document, shipped_corpus
from skate.games.scp.fragments import paragraphs
from skate.games.scp.questions import LETTERS, normalise

# Words too common to say anything about what a passage is about.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "may",
        "might",
        "more",
        "most",
        "must",
        "no",
        "not",
        "of",
        "on",
        "one",
        "or",
        "our",
        "out",
        "she",
        "should",
        "so",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "too",
        "under",
        "up",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "will",
        "with",
        "would",
        "you",
        "your",
        "also",
        "other",
        "any",
        "each",
        "only",
        "over",
        "some",
        "very",
        "all",
        "can",
    ]
)
_WORD = re.compile(r"[a-z][a-z0-9_]+")

BASE = {"sequencing": 0.14, "cloze": 0.36, "prediction": 0.02}
JITTER = 0.12


@dataclass(frozen=True)
class SCPQuery(ChoiceQuery):
    """One SCP answer sample: the question's text and its four options in the order shown, plus
    the pieces a reader needs (what a language model sees is ``prompt`` and ``options`` only).

    ``parts``: sequencing, the chunks as shown (A first); cloze, the removed sentences as shown;
    prediction, the context alone.
    """

    type: str = ""
    parts: tuple[str, ...] = ()
    masked: str = ""


def content_words(text: str) -> Counter:
    return Counter(w for w in _WORD.findall(text.lower()) if w not in STOPWORDS)


def cosine(a: str, b: str) -> float:
    """Cosine similarity of the content-word counts of two texts (0: nothing shared)."""
    ca, cb = content_words(a), content_words(b)
    dot = sum(c * cb[w] for w, c in ca.items() if w in cb)
    norm = math.sqrt(sum(c * c for c in ca.values())) * math.sqrt(sum(c * c for c in cb.values()))
    return dot / norm if norm else 0.0


@functools.lru_cache(maxsize=256)
def _flat(text: str) -> str:
    """A document's prose as one whitespace-normalised line (once per text: every game's reader
    reads the same documents)."""
    return " ".join(normalise(p) for p in paragraphs(text))


class Reader:
    """Finds shown text in a corpus (whitespace-insensitive) and answers questions from it."""

    def __init__(self, docs: Sequence[Document]) -> None:
        self.docs = {d.id: d for d in docs}
        self.texts = {d.id: _flat(d.text) for d in docs}
        self._cache: dict[tuple[str, str | None, int], tuple[str, int] | None] = {}
        self._holders: dict[str, frozenset[str]] = {}

    def locate(self, snippet: str, doc: str | None = None, start: int = 0) -> tuple[str, int] | None:
        """(document id, character offset) of ``snippet`` in the corpus (in ``doc`` from
        ``start`` when given), or None when it is nowhere."""
        key = (snippet, doc, start)
        if key not in self._cache:
            needle = normalise(snippet)
            found = None
            if needle:
                for doc_id in [doc] if doc is not None else self.texts:
                    at = self.texts.get(doc_id, "").find(needle, start)
                    if at >= 0:
                        found = (doc_id, at)
                        break
            if len(self._cache) > 200_000:
                self._cache.clear()
            self._cache[key] = found
        return self._cache[key]

    def holders(self, snippet: str) -> frozenset[str]:
        """Every document holding ``snippet`` (short sentences can recur across documents)."""
        found = self._holders.get(snippet)
        if found is None:
            needle = normalise(snippet)
            found = frozenset(d for d, t in self.texts.items() if needle and needle in t)
            if len(self._holders) > 200_000:
                self._holders.clear()
            self._holders[snippet] = found
        return found

    def domain(self, q: SCPQuery) -> str | None:
        """The domain of the document the question comes from (None: not in this corpus)."""
        docs = frozenset.intersection(*(self.holders(p) for p in q.parts)) if q.parts else frozenset()
        return self.docs[min(docs)].domain if docs else None

    def solve(self, q: SCPQuery) -> int | None:
        """The index of the option the source document says is right, or None when the
        question's text is not in the corpus."""
        if q.type in ("sequencing", "cloze"):
            if not q.parts:
                return None
            common = frozenset.intersection(*(self.holders(p) for p in q.parts))
            if not common:
                return None
            doc, anchor = min(common), 0
            if q.type == "cloze" and q.masked:
                head = q.masked.split("[MASK_1]")[0]
                where = self.locate(head, doc) if head.strip() else None
                if where:
                    anchor = where[1]
            found = [self.locate(p, doc, anchor) for p in q.parts]
            spots = [s for s in found if s is not None]
            if len(spots) < len(found):
                return None
            order = sorted(range(len(q.parts)), key=lambda k: spots[k][1])
            right = " ".join(LETTERS[k] for k in order)
            return q.options.index(right) if right in q.options else None
        if q.type == "prediction" and q.parts:
            where = self.locate(q.parts[0])
            if where is None:
                return None
            doc, at = where
            end = at + len(normalise(q.parts[0]))
            hits = [(s[1], i) for i, o in enumerate(q.options) if (s := self.locate(o, doc, end)) is not None]
            return min(hits)[1] if hits else None
        return None


def _near_misses(q: SCPQuery, right: int | None) -> float:
    """The fraction of wrong options one neighbouring swap away from the right one."""
    if right is None:
        return 0.5
    good = q.options[right].split()
    near = 0
    for i, o in enumerate(q.options):
        if i == right:
            continue
        bad = o.split()
        diff = [k for k in range(min(len(bad), len(good))) if bad[k] != good[k]]
        near += len(diff) == 2 and diff[1] == diff[0] + 1
    return near / max(1, len(q.options) - 1)


def _jitter(q: SCPQuery) -> float:
    u = zlib.crc32((q.prompt + "\x00" + "\x00".join(sorted(q.options))).encode()) / 0xFFFFFFFF
    return (2 * u - 1) * JITTER


def difficulty(q: SCPQuery, right: int | None) -> float:
    """How hard ``q`` is, in [0, 1] (see the module's docstring); ``right`` is the index of the
    correct option when known."""
    base = BASE.get(q.type, 0.5)
    if q.type in ("sequencing", "cloze"):
        length = sum(len(p) for p in q.parts)
        short = 1.0 - min(1.0, length / (900 if q.type == "sequencing" else 450))
        d = base + 0.3 * _near_misses(q, right) + 0.35 * short
    else:
        context = q.parts[0] if q.parts else q.prompt
        sims = [cosine(context, o) for o in q.options]
        if right is not None:
            truth = sims[right]
            best_wrong = max(s for i, s in enumerate(sims) if i != right)
            lure = min(1.0, best_wrong / (truth + 0.05))
        else:
            lure = 0.5
        short = 1.0 - min(1.0, len(context) / 700)
        d = base + 0.6 * lure**2 + 0.2 * short
    return float(min(0.98, max(0.02, d + _jitter(q))))


@functools.lru_cache(maxsize=8)
def shipped_reader() -> Reader:
    """A reader over the corpus that ships with the package (built once per process)."""
    return Reader(shipped_corpus())

"""SCP questions are contiguous in their source (issue 25): each question's pieces, put back in
the right order, are one run of the raw file that a reader sees as continuous prose.

The check works on words. The raw source file is reduced to its lower-case words, leaving out
only what the cleaner legitimately strips *inside* a paragraph (hyperlink targets
``<https://...>``, role names such as ``:class:``, citation references ``[1]_``, a ``:pep:``
role's ``#anchor``); line wrapping, backticks, asterisks and other punctuation carry no words.
A question's pieces (sequencing: the chunks in the answer's order; cloze: the masked text with
the answer's sentences in its holes; prediction: the context, then the true continuation) are
reduced to words the same way and must occur as one unbroken stretch of the source's words: a
single skipped word (a heading, a list item, a line of code between two paragraphs) flags the
question, and so does a stretch whose source lines hold a section title (a line with an
underline of ``=``, ``-``, ``~``... under it, which has no words of its own to skip). For a
flagged question the words it skips are found by aligning it with the source (difflib).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from skate.games.scp import questions as questions_module
from skate.games.scp.config import SCPConfig
from skate.games.scp.corpus import Document, shipped_corpus
from skate.games.scp.fragments import Fragment, fragments, paragraph_runs, paragraphs
from skate.games.scp.questions import (
    LETTERS,
    ClozeQuestion,
    Question,
    SequencingQuestion,
    build,
    check,
    cloze,
    prediction,
    sequencing,
)

# What the cleaner strips inside a paragraph, as spans of the raw text that hold no shown words.
_DROPPED = [
    re.compile(r"\s*<[^<>`]*>(?=`)"),  # `text <target>`_, :role:`x <target>`
    re.compile(r":(?!(?:pep|rfc):`\d)[\w.+-]+:(?=`)", re.IGNORECASE),  # :class:`x` reads x (:pep:`8`, PEP 8)
    re.compile(r"(?<=\d)#[^`]*(?=`)"),  # :pep:`8#naming` reads PEP 8
    re.compile(r"\[(?:\d+|#[\w-]*|\*)\]_"),  # [1]_, [#note]_, [*]_
]
_WORD = re.compile(r"[^\W_]+")
_ADORNMENT = re.compile(r"^([=\-~^\"'`#*+:.<>_])\1{2,}\s*$")  # a section title's underline


@dataclass
class Source:
    """A raw source file as words, with where each word starts."""

    raw: str
    words: list[str]
    starts: list[int]

    @classmethod
    def of(cls, raw: str) -> Source:
        hidden = bytearray(len(raw))  # 1 where the cleaner strips the character
        for rx in _DROPPED:
            for m in rx.finditer(raw):
                hidden[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
        found = [m for m in _WORD.finditer(raw) if not hidden[m.start()]]
        return cls(raw, [m.group().lower() for m in found], [m.start() for m in found])


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def pieces(q: Question) -> list[str]:
    """The question's pieces in source order, put together from what the question shows."""
    order = [LETTERS.index(x) for x in q.options[q.answer].split()] if q.type != "prediction" else []
    if isinstance(q, SequencingQuestion):
        return [q.chunks[k] for k in order]
    if isinstance(q, ClozeQuestion):
        filled = q.masked
        for hole, k in enumerate(order, start=1):
            filled = filled.replace(f"[MASK_{hole}]", q.candidates[k])
        return [filled]
    return [q.context, q.options[q.answer]]


def _gaps(run: list[str], source: list[str]) -> list[str]:
    """The source words the best alignment of ``run`` skips (or says are missing), per gap."""
    head = run[:6]
    starts = [i for i in range(len(source) - len(head) + 1) if source[i : i + len(head)] == head] or [0]
    best: tuple[tuple[int, int], list[str]] | None = None
    for start in starts:
        window = source[start : start + 3 * len(run) + 400]
        blocks = [b for b in difflib.SequenceMatcher(None, run, window, autojunk=False).get_matching_blocks() if b.size]
        gaps = [
            " ".join(window[a.b + a.size : b.b]) for a, b in zip(blocks, blocks[1:], strict=False) if b.b > a.b + a.size
        ]
        missing = len(run) - sum(b.size for b in blocks)
        if missing:
            gaps.append(f"({missing} words not in the source)")
        score = (missing, sum(len(g.split()) for g in gaps))
        if best is None or score < best[0]:
            best = (score, gaps)
    return best[1] if best and best[1] else ["(not found)"]


def problems(run: list[str], source: Source) -> list[str]:
    """Why ``run`` is not one stretch of continuous prose in ``source`` (empty when it is):
    the source words it skips, or the section titles inside the stretch it covers."""
    if not run:
        return ["(no words)"]
    joined = f" {' '.join(source.words)} "
    at = joined.find(f" {' '.join(run)} ")
    if at < 0:
        return _gaps(run, source.words)
    first = joined.count(" ", 0, at)  # index of the stretch's first word
    last = first + len(run) - 1
    lines = source.raw.split("\n")
    top = source.raw.count("\n", 0, source.starts[first])
    bottom = source.raw.count("\n", 0, source.starts[last])
    titles = [
        lines[k].strip()
        for k in range(top, bottom + 1)
        if lines[k].strip() and k + 1 < len(lines) and _ADORNMENT.match(lines[k + 1]) and not _ADORNMENT.match(lines[k])
    ]
    return [f"(section title {t!r})" for t in titles]


def spanning(questions: list[Question], docs: dict[str, Document]) -> list[tuple[str, list[str]]]:
    """(id, problems) of every question whose pieces are not one stretch of its source's prose."""
    sources = {
        d: Source.of(Path(docs[d].path).read_text(encoding="utf-8") if Path(docs[d].path).is_file() else docs[d].text)
        for d in {q.doc for q in questions}
    }
    out = []
    for q in questions:
        found = problems(words("\n\n".join(pieces(q))), sources[q.doc])
        if found:
            out.append((q.id, found))
    return out


@pytest.fixture(scope="module")
def shipped():
    return {d.id: d for d in shipped_corpus()}


@pytest.fixture(scope="module")
def bench(shipped):
    """The default build: what ``skate scp build shipped --out b.jsonl`` writes."""
    return build(list(shipped.values()), SCPConfig.per_doc, SCPConfig.build_seed)


def test_every_shipped_question_is_one_stretch_of_its_source(bench, shipped):
    counts = Counter(q.type for q in bench)
    assert len(bench) >= 300 and set(counts) == {"sequencing", "cloze", "prediction"}, counts
    assert all(check(q) == [] for q in bench)
    bad = spanning(bench, shipped)
    assert not bad, f"{len(bad)} of {len(bench)} questions span removed material, e.g. {bad[:3]}"


# --------------------------------------------------------------------------- the check can fail

PARA = (
    "{0} one is the first sentence here. {0} two follows it with more words. {0} three closes the paragraph politely."
)
HEADED = "\n\n".join(
    [
        "Title\n=====",
        PARA.format("Alpha"),
        PARA.format("Bravo"),
        PARA.format("Charlie"),
        "Rejected Ideas\n--------------",
        PARA.format("Delta"),
        PARA.format("Echo"),
        PARA.format("Foxtrot"),
        PARA.format("Golf"),
    ]
)
HEADED_DOC = Document(id="headed.rst", domain="test", title="Title", text=HEADED, path="headed.rst")


def test_runs_end_at_a_heading():
    assert [len(r) for r in paragraph_runs(HEADED)] == [3, 4]
    assert paragraphs(HEADED) == [p for r in paragraph_runs(HEADED) for p in r]
    assert [f.position for f in fragments(HEADED_DOC, 2, 0)] == [1, 3, 4, 5]  # never 2 (Charlie, Delta)
    assert [f.position for f in fragments(HEADED_DOC, 1, 0, follow=1)] == [1, 3, 4, 5]
    assert [f.position for f in fragments(HEADED_DOC, 5, 0)] == []


@pytest.mark.parametrize("qtype", ["sequencing", "cloze", "prediction"])
def test_the_check_flags_a_question_joining_paragraphs_across_a_heading(qtype):
    paras = paragraphs(HEADED)
    docs = {HEADED_DOC.id: HEADED_DOC}
    if qtype == "sequencing":
        q = sequencing(Fragment("headed.rst", "test", 2, tuple(paras[2:4])), 0)
        fine = sequencing(Fragment("headed.rst", "test", 3, tuple(paras[3:5])), 0)
    elif qtype == "cloze":
        q = cloze(Fragment("headed.rst", "test", 1, tuple(paras[1:6])), 0)
        fine = cloze(Fragment("headed.rst", "test", 3, tuple(paras[3:7])), 0)
    else:
        q = prediction(Fragment("headed.rst", "test", 2, (paras[2],)), paras, 0)
        fine = prediction(Fragment("headed.rst", "test", 4, (paras[4],)), paras, 0)
    assert q is not None and fine is not None and not check(q) and not check(fine)
    assert spanning([fine], docs) == []
    ((qid, gaps),) = spanning([q], docs)
    assert qid == q.id and gaps == ["rejected ideas"]


def test_the_check_flags_a_section_title_taken_for_a_paragraph():
    """A title's words are not skipped when the title is in the question itself; its underline
    gives it away (how ``Prerogatives`` of PEP 8016 once ended a cloze passage)."""
    paras = paragraphs(HEADED)
    frag = Fragment("headed.rst", "test", 2, (paras[2], "Rejected Ideas", paras[3]))
    q = sequencing(frag, 0)
    assert q is not None and not check(q)
    assert spanning([q], {HEADED_DOC.id: HEADED_DOC}) == [(q.id, ["(section title 'Rejected Ideas')"])]


def test_a_tilde_underline_is_a_section_title_not_a_code_fence():
    text = (
        "Intro\n=====\n\nFirst paragraph of prose.\n\nPowers\n~~~~~~\n\nThe council has broad "
        "authority.\n\nIt acts rarely.\n\n~~~~\nTerm\n~~~~\n\nA term lasts one release.\n\n"
        "~~~\ncode = 'fenced'\n~~~\n\nLast words.\n"
    )
    assert paragraph_runs(text) == [
        ["First paragraph of prose."],
        ["The council has broad authority.", "It acts rarely."],
        ["A term lasts one release."],
        ["Last words."],
    ]


def test_the_check_flags_the_issues_examples_as_the_old_builder_made_them(shipped):
    docs = {d: shipped[d] for d in ("pep-3151.rst", "pep-0236.rst")}
    p3151, p0236 = paragraphs(docs["pep-3151.rst"].text), paragraphs(docs["pep-0236.rst"].text)
    seq = sequencing(Fragment("pep-3151.rst", "language", 60, tuple(p3151[60:62])), 0)
    pred = prediction(Fragment("pep-0236.rst", "language", 43, (p0236[43],)), p0236, 0)
    flagged = dict(spanning([seq, pred], docs))
    assert set(flagged) == {seq.id, pred.id}
    assert "what about incompatibilities due to changes in the python virtual machine" in flagged[pred.id]
    assert any(len(g.split()) >= 4 for g in flagged[seq.id])
    # The builder no longer offers either fragment.
    assert 60 not in {f.position for f in fragments(docs["pep-3151.rst"], 2, 250)}
    assert 43 not in {f.position for f in fragments(docs["pep-0236.rst"], 1, 100, follow=1)}


def test_in_paragraph_markup_and_wrapping_are_not_skipped_words():
    raw = (
        "Intro\n=====\n\nFirst prose paragraph that sets the scene for the rest of it.\n\n"
        "Some ``code`` and *emphasis*, see :pep:`8#naming` and\n`the docs <https://example.org/x>`_,\n"
        "the :class:`~pkg.Thing <pkg.Thing>` class and a note [1]_. It ends here::\n\n"
        "    print('a literal block')\n\nAfter the code, more prose follows.\n"
    )
    doc = Document(id="m.rst", domain="test", title="Intro", text=raw, path="m.rst")
    runs = paragraph_runs(raw)
    assert [len(r) for r in runs] == [2, 1]  # the literal block ends the run
    joined = words("\n\n".join(runs[0]))
    assert "pep" in joined and "https" not in joined and "naming" not in joined
    assert problems(joined, Source.of(raw)) == []
    across = words(runs[0][1] + " " + runs[1][0])
    assert problems(across, Source.of(raw)) == ["print a literal block"]
    assert [f.position for f in fragments(doc, 1, 0)] == [2]  # "...It ends here:" introduces code


def test_the_old_runs_would_span_removed_material(shipped, monkeypatch):
    """Built as before issue 25 (a document's paragraphs as one run), many questions skip words:
    39 of 94 on the first ten documents (187 of 401 on the whole corpus)."""
    monkeypatch.setattr(questions_module, "paragraph_runs", lambda text: [paragraphs(text)])
    old = build([shipped[d] for d in sorted(shipped)[:10]], SCPConfig.per_doc, SCPConfig.build_seed)
    bad = spanning(old, shipped)
    assert len(bad) >= 25, len(bad)
    assert sum(any(len(g.split()) >= 4 for g in gaps) for _, gaps in bad) >= 15

"""Paragraphs, sentences and fragments: the raw material of SCP questions.

:func:`paragraphs` turns a document's text (plain, Markdown or reStructuredText) into clean prose
paragraphs, one line each: headings, directives and their bodies, comments, literal and fenced
code blocks, tables, field lists and bullet lists are left out. :func:`paragraph_runs` groups them
into runs that are continuous prose in the source: whatever was left out ends a run (issue 25).
:func:`fragments` then offers the spans of consecutive paragraphs within one run a question may
be cut from, following ArxivRoll's rules (never the first paragraph of a document, long enough,
not heavy with markup, not starting mid-sentence or with a caption). :func:`sentences` is a
small regex splitter aware of common abbreviations, initials, decimals and version numbers.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, fields

from skate.games.scp.config import FragmentSizes, SCPConfig
from skate.games.scp.corpus import Document


def fragment_sizes(sizes: FragmentSizes) -> dict[str, tuple[int, int]]:
    """``(paragraphs, min_chars)`` per question type of the settings' fragment sizes (``game.fragments``)."""
    return {f.name: (getattr(sizes, f.name).paragraphs, getattr(sizes, f.name).min_chars) for f in fields(sizes)}


# ArxivRoll's fragment sizes, (number of paragraphs, minimum total characters) per question type,
# and the markup threshold: the defaults of the game's config (game.fragments, game.markup_threshold).
DEFAULT_SIZES = fragment_sizes(FragmentSizes())
MARKUP_CHARS = frozenset("`*|_={}[]<>\\#~^$+")
MARKUP_THRESHOLD = SCPConfig.markup_threshold


@dataclass(frozen=True)
class Fragment:
    """``paragraphs`` of document ``doc_id`` starting at paragraph index ``position``."""

    doc_id: str
    domain: str
    position: int
    paragraphs: tuple[str, ...]

    @property
    def text(self) -> str:
        return "\n\n".join(self.paragraphs)

    def __len__(self) -> int:
        return sum(len(p) for p in self.paragraphs)


# --------------------------------------------------------------------------- paragraphs

_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:.<>_])\1{2,}\s*$")
_SIMPLE_TABLE = re.compile(r"^=+(\s+=+)+\s*$")
_GRID_TABLE = re.compile(r"^\s*\+[-=+]+\+\s*$")
_DIRECTIVE = re.compile(r"^\.\.(\s|$)")
_FIELD = re.compile(r"^:[^:\s][^:]*:(\s|$)")
_HEADER_FIELD = re.compile(r"^[A-Za-z][\w-]*:\s")
_BULLET = re.compile(r"^\s*([-*+\u2022]|\d+[.)]|#\.|\(?[a-zA-Z0-9]\))\s+")
_FENCE = re.compile(r"^\s*(```|~~~)")
_MD_HEADING = re.compile(r"^#{1,6}\s")
_ROLE = re.compile(r":[\w-]+:`([^`<]*?)(?:\s*<[^`>]*>)?`")
_LINK = re.compile(r"`([^`<]+?)\s*<[^`>]*>`__?")
_REF = re.compile(r"(?<![`\w])`([^`]+)`__?(?!\w)")
_CITATION = re.compile(r"\s*\[(\d+|#[\w-]*|\*)\]_")
_PEP_ROLE = re.compile(r":(pep|rfc):`(\d+)(?:#[^`]*)?`", re.IGNORECASE)


def _indented(line: str) -> bool:
    return bool(line) and line[0] in " \t"


def _adornment(lines: list[str], k: int, current: list[str]) -> bool:
    """Whether ``lines[k]`` (a run of ``~`` or backticks, which could open a Markdown fence) is a
    reStructuredText section title's underline or overline instead: right under a one-line
    title (and its overline, if any), or above a one-line title with the same line under it;
    either at least as long as the title."""
    line = lines[k].rstrip()
    if not _UNDERLINE.match(line):
        return False
    if current:  # under a title, or under an overline and its title
        title = current[-1].strip()
        return (len(current) == 1 or (len(current) == 2 and current[0].rstrip() == line)) and len(line) >= len(title)
    return (
        k + 2 < len(lines)
        and bool(lines[k + 1].strip())
        and lines[k + 2].rstrip() == line
        and len(line) >= len(lines[k + 1].strip())
    )


def _blocks(text: str) -> list[list[str] | None]:
    """Blank-line separated blocks of lines, with code and directive regions removed.

    Where a region was removed (a directive or comment with its body, a literal block after
    ``::``, a fenced code block) the list holds ``None``, so that the paragraphs on either side
    are not taken for neighbours.
    """
    lines = text.replace("\r\n", "\n").replace("\t", "    ").split("\n")
    blocks: list[list[str] | None] = []
    current: list[str] = []
    skip_indented = False  # inside a directive body or a literal block
    in_fence = False

    def close():
        nonlocal current, skip_indented
        if current:
            blocks.append(current)
            last = current[-1].rstrip()
            if last.endswith("::"):
                skip_indented = True
                blocks.append(None)
        current = []

    for k, line in enumerate(lines):
        if in_fence:
            if _FENCE.match(line):
                in_fence = False
            continue
        if _FENCE.match(line) and not _adornment(lines, k, current):
            close()
            in_fence = True
            blocks.append(None)
            continue
        if skip_indented:
            if not line.strip() or _indented(line):
                continue
            skip_indented = False
        if not line.strip():
            close()
            continue
        if not current and _DIRECTIVE.match(line):
            # A directive or comment: the line itself and its indented body go.
            skip_indented = True
            blocks.append(None)
            continue
        current.append(line.rstrip())
    close()
    return blocks


def _unwrap(block: list[str]) -> str:
    text = " ".join(line.strip() for line in block)
    text = _LINK.sub(r"\1", text)
    text = _PEP_ROLE.sub(lambda m: f"{m.group(1).upper()} {m.group(2)}", text)
    text = _REF.sub(r"\1", text)
    text = _CITATION.sub("", text)
    text = _ROLE.sub(r"\1", text)
    text = text.replace(" ::", "").replace("::", ":")
    return " ".join(text.split())


def _is_prose(block: list[str], first: bool) -> bool:
    head = block[0]
    if _indented(head):  # block quotes, continuation of lists, doctest output
        return False
    if any(_UNDERLINE.match(line) or _SIMPLE_TABLE.match(line) or _GRID_TABLE.match(line) for line in block):
        return False  # section titles (with their underline) and tables
    if any(line.lstrip().startswith(("|", ">>>", "...")) for line in block):
        return False
    if _FIELD.match(head) or _MD_HEADING.match(head) or _BULLET.match(head):
        return False
    if head.startswith("__ "):
        return False  # anonymous hyperlink targets (``__ https://...``), a directive's short form
    # An RFC-822 style header such as a PEP's preamble is not prose either.
    return not (first and all(_HEADER_FIELD.match(line) or _indented(line) for line in block))


def paragraph_runs(text: str) -> list[list[str]]:
    """The prose paragraphs of ``text`` in runs a reader sees as continuous prose.

    Each run is a list of paragraphs (unwrapped onto one line) that follow each other in the
    source with nothing between them but blank lines; a heading, a list, a table, a field list,
    a block quote, a code or literal block, a directive or a comment ends the run.
    """
    return [list(run) for run in _runs(text)]


@functools.lru_cache(maxsize=256)
def _runs(text: str) -> tuple[tuple[str, ...], ...]:
    """:func:`paragraph_runs`, found once per text: a game's build, its reader and its setters each
    split the same documents."""
    runs: list[list[str]] = [[]]
    blocks = _blocks(text)
    first = next((b for b in blocks if b is not None), None)  # may be a header, not prose
    for block in blocks:
        para = _unwrap(block) if block is not None and _is_prose(block, block is first) else ""
        if para:
            runs[-1].append(para)
        elif runs[-1]:
            runs.append([])
    return tuple(tuple(run) for run in runs if run)


def paragraphs(text: str) -> list[str]:
    """The prose paragraphs of ``text``, each unwrapped onto one line (all runs, in order)."""
    return [p for run in paragraph_runs(text) for p in run]


# --------------------------------------------------------------------------- sentences

_ABBREVIATIONS = frozenset(
    """
e.g. i.e. mr. mrs. ms. dr. prof. sr. jr. st. vs. v. cf. fig. figs. eq. eqs. no. nos. al.
approx. resp. ca. viz. sec. ch. vol. pp. p. ed. eds. inc. ltd. co. corp. dept. est. jan. feb.
mar. apr. jun. jul. aug. sep. sept. oct. nov. dec.
""".split()
)
_BOUNDARY = re.compile(r"[.!?]+[\"')\]]*(\s+)(?=[\"'(\[`*]?[A-Z0-9])")


def sentences(text: str) -> list[str]:
    """Split ``text`` into sentences; joining them with spaces gives ``text`` up to whitespace.

    A boundary is sentence-final punctuation followed by whitespace and a capital letter or digit,
    unless the word ending there is a known abbreviation (``e.g.``, ``vs.``, ``Mr.``, ...), a
    single initial (``D.``) or a dotted acronym (``U.S.``). Decimals and version numbers have no
    space after their dots, so they never split.
    """
    text = " ".join(text.split())
    out = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        head = text[start : match.start(1)]
        words = head.split()
        last = words[-1].strip("\"'()[]") if words else ""
        if last.lower() in _ABBREVIATIONS:
            continue
        if re.fullmatch(r"[A-Z]\.", last) or re.fullmatch(r"(?:[A-Za-z]\.){2,}", last):
            continue
        out.append(head.strip())
        start = match.end(1)
    rest = text[start:].strip()
    if rest:
        out.append(rest)
    return out


# --------------------------------------------------------------------------- fragments

_CAPTION = re.compile(r"^(figure|fig\.|table|listing|algorithm)\s*[0-9IVX]+", re.IGNORECASE)


_SPACE = re.compile(r"\s+")  # str.isspace()'s characters: re's \s on str is the same test
_NO_MARKUP = str.maketrans("", "", "".join(MARKUP_CHARS))


def markup_density(text: str) -> float:
    """Share of the non-space characters of ``text`` that are markup or formula characters."""
    visible = _SPACE.sub("", text)
    if not visible:
        return 0.0
    return (len(visible) - len(visible.translate(_NO_MARKUP))) / len(visible)


def starts_badly(text: str) -> bool:
    """True when ``text`` starts mid-sentence (lower case or punctuation) or with a caption."""
    text = text.lstrip()
    if not text:
        return True
    first = text[0]
    if first.islower() or not (first.isalnum() or first in "\"'(`"):
        return True
    return bool(_CAPTION.match(text))


def acceptable(paragraphs_: Sequence[str], min_chars: int, threshold: float = MARKUP_THRESHOLD) -> bool:
    """Whether a run of paragraphs may be a fragment (length, markup, start, ending)."""
    if sum(len(p) for p in paragraphs_) < min_chars:
        return False
    if starts_badly(paragraphs_[0]):
        return False
    if any(p.rstrip().endswith(":") for p in paragraphs_):
        return False  # introduces something (code, a list) that was removed
    return all(markup_density(p) <= threshold for p in paragraphs_)


def fragments(
    doc: Document,
    n_paragraphs: int,
    min_chars: int,
    threshold: float = MARKUP_THRESHOLD,
    runs: list[list[str]] | None = None,
    follow: int = 0,
) -> list[Fragment]:
    """Every acceptable span of ``n_paragraphs`` consecutive paragraphs, never starting at the
    document's first paragraph.

    A fragment never reaches across a heading, list, code block or anything else that is not
    prose: its paragraphs, and the ``follow`` paragraphs after it (a prediction's continuation),
    lie in one of :func:`paragraph_runs`. ``runs`` are the document's runs when already known;
    a fragment's ``position`` counts paragraphs over the whole document (:func:`paragraphs`).
    """
    if n_paragraphs < 1:
        raise ValueError("a fragment needs at least one paragraph")
    if follow < 0:
        raise ValueError("follow counts paragraphs after a fragment; it cannot be negative")
    runs = paragraph_runs(doc.text) if runs is None else runs
    out = []
    start = 0  # index of the run's first paragraph in the document
    for paras in runs:
        for offset in range(len(paras) - n_paragraphs - follow + 1):
            pos = start + offset
            run = tuple(paras[offset : offset + n_paragraphs])
            if pos >= 1 and acceptable(run, min_chars, threshold):
                out.append(Fragment(doc.id, doc.domain, pos, run))
        start += len(paras)
    return out

"""Documents for SCP: read a folder of text files, each with a domain label.

Supported files: ``.txt``, ``.md``, ``.rst`` (kept as written), ``.html``/``.htm`` (reduced to
text, scripts and styles dropped) and ``.pdf`` (pypdf's text of each page, pages separated by a
blank line; needs the optional extra ``skate[pdf]``). A domain comes from a sidecar
``index.tsv`` in the folder (tab-separated, a header naming at least ``file`` and ``domain``,
optionally ``title``; other columns are ignored), else from the name of the subfolder holding
the file, else ``"general"``.

Every document has a date (``Document.date``, ``YYYY-MM-DD``), and ``Document.date_source`` says
where it came from, first found of:

* ``index.tsv:<column>``: the index's ``date`` column, else ``submitted`` (the first version's
  date in a folder ``skate scp arxiv`` wrote), ``published`` or ``created``; a value
  that is not a date is an error naming the file;
* ``header:<Field>``: the document's own header block, RFC 822 style as PEPs open
  (``Created: 13-Jul-2000``; ``Created`` or ``Date``), or a Markdown front matter between
  ``---`` lines (``date:`` or ``created:``);
* ``mtime``: the file's modification time (UTC), which says when the copy was made, not when it
  was written: give dates in ``index.tsv`` where it matters.
"""

from __future__ import annotations

import csv
import datetime as dt
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

TEXT_SUFFIXES = (".txt", ".md", ".rst")
HTML_SUFFIXES = (".html", ".htm")
PDF_SUFFIXES = (".pdf",)
SUFFIXES = TEXT_SUFFIXES + HTML_SUFFIXES + PDF_SUFFIXES
DEFAULT_DOMAIN = "general"
INDEX_NAME = "index.tsv"
SHIPPED_DIR = Path(__file__).parent / "data" / "peps"


@dataclass(frozen=True)
class Document:
    """One source document; ``id`` is its path relative to the corpus folder, with ``/``."""

    id: str
    domain: str
    title: str
    text: str
    path: str
    date: str = ""  # YYYY-MM-DD; "" for documents not read by load_folder
    date_source: str = ""  # where the date came from: index.tsv:<column>, header:<Field> or mtime


_BLOCK_TAGS = {
    "p",
    "div",
    "section",
    "article",
    "br",
    "li",
    "ul",
    "ol",
    "table",
    "tr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "pre",
    "header",
    "footer",
    "figure",
    "figcaption",
    "main",
    "nav",
    "aside",
    "dd",
    "dt",
    "dl",
}
_SKIPPED_TAGS = {"script", "style", "noscript", "template"}


class _TextExtractor(HTMLParser):
    """Collects the visible text of an HTML page, a blank line at every block boundary."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title_parts: list[str] = []
        self._skipping = 0
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        if tag in _SKIPPED_TAGS:
            self._skipping += 1
        elif tag == "title":
            self._in_title = True
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n\n")

    def handle_endtag(self, tag):
        if tag in _SKIPPED_TAGS:
            self._skipping = max(0, self._skipping - 1)
        elif tag == "title":
            self._in_title = False
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n\n")

    def handle_data(self, data):
        if self._skipping:
            return
        if self._in_title:
            self.title_parts.append(data)
            return
        self.parts.append(data)


def html_to_text(html: str) -> tuple[str, str]:
    """(title, text) of an HTML page: paragraphs separated by blank lines, spaces collapsed."""
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    raw = "".join(parser.parts)
    blocks = []
    for block in raw.split("\n\n"):
        line = " ".join(block.split())
        if line:
            blocks.append(line)
    return " ".join("".join(parser.title_parts).split()), "\n\n".join(blocks)


def _read_index(folder: Path) -> dict[str, dict[str, str]]:
    index_path = folder / INDEX_NAME
    if not index_path.exists():
        return {}
    try:
        with index_path.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"cannot read {index_path}: {exc}") from exc
    if rows and ("file" not in rows[0] or "domain" not in rows[0]):
        raise ValueError(f"{index_path} needs columns 'file' and 'domain' in its header")
    return {row["file"].strip(): row for row in rows if row.get("file")}


def _title_from_text(text: str, fallback: str) -> str:
    for line in text.splitlines():
        if line.lower().startswith("title:"):
            return line.split(":", 1)[1].strip()
    for line in text.splitlines():
        stripped = line.strip().lstrip("#").strip()
        if stripped and not set(stripped) <= set("=-~^*#+`'\""):
            return stripped
    return fallback


DATE_COLUMNS = ("date", "submitted", "published", "created")  # index.tsv, first one set wins
HEADER_DATE_FIELDS = ("created", "date")
_DATE_FORMATS = ("%Y-%m-%d", "%d-%b-%Y", "%d %b %Y", "%d %B %Y", "%b %d, %Y", "%B %d, %Y", "%Y/%m/%d", "%d-%B-%Y")
_ISO_PREFIX = re.compile(r"^(\d{4}-\d{2}-\d{2})[T ]")
_HEADER_LINE = re.compile(r"^([A-Za-z][\w-]*):\s*(.*)$")


def parse_date(value: str) -> dt.date | None:
    """A date written as YYYY-MM-DD (a timestamp after it allowed), 13-Jul-2000, 13 July 2000,
    July 13, 2000 or YYYY/MM/DD; None when it is none of these."""
    text = " ".join(str(value).split())
    iso = _ISO_PREFIX.match(text)
    if iso:
        text = iso[1]
    for fmt in _DATE_FORMATS:
        try:
            return dt.datetime.strptime(text, fmt).date()
        except ValueError:
            pass
    return None


def header_date(text: str) -> tuple[dt.date, str] | None:
    """(date, field) from a document's own header: the block of ``Field: value`` lines it opens
    with (as PEPs and e-mails do; indented lines continue a field), or a Markdown front matter
    between ``---`` lines. Only ``Created`` and ``Date`` count, the first that parses."""
    lines = text.lstrip("\ufeff").splitlines()
    if lines and lines[0].strip() == "---":
        block = []
        for line in lines[1:]:
            if line.strip() == "---":
                break
            block.append(line)
        else:
            block = []
    else:
        block = []
        for line in lines:
            if not line.strip():
                break
            if line[0] in " \t" and block:
                continue
            if not _HEADER_LINE.match(line):
                return None  # prose, not a header block
            block.append(line)
    for line in block:
        m = _HEADER_LINE.match(line.strip())
        if m and m[1].lower() in HEADER_DATE_FIELDS:
            day = parse_date(m[2].strip().strip("'\""))
            if day is not None:
                return day, m[1]
    return None


def _date_of(file: Path, text: str, row: dict[str, str], index_path: Path) -> tuple[str, str]:
    """(YYYY-MM-DD, source) of one document: its index row, its own header, else its mtime."""
    for column in DATE_COLUMNS:
        value = (row.get(column) or "").strip()
        if value:
            day = parse_date(value)
            if day is None:
                raise ValueError(
                    f"{index_path}: {row.get('file')} has {column} {value!r}, which is not a "
                    "date: write it as YYYY-MM-DD"
                )
            return day.isoformat(), f"{INDEX_NAME}:{column}"
    found = header_date(text)
    if found is not None:
        return found[0].isoformat(), f"header:{found[1]}"
    mtime = dt.datetime.fromtimestamp(file.stat().st_mtime, tz=dt.UTC).date()
    return mtime.isoformat(), "mtime"


def pdf_to_text(file: Path) -> str:
    """The text of a PDF, page by page (pypdf's extraction), pages separated by a blank line."""
    try:
        from pypdf import PdfReader
    except ImportError as exc:
        raise ValueError(
            f"{file} is a PDF and reading PDFs needs pypdf: pip install "
            "'skate[pdf]' (or remove the PDF from the folder)"
        ) from exc
    try:
        pages = [page.extract_text() or "" for page in PdfReader(file).pages]
    except Exception as exc:  # pypdf raises many kinds on damaged or encrypted files
        raise ValueError(f"cannot read {file} as a PDF: {exc}") from exc
    return "\n\n".join(p.strip() for p in pages if p.strip())


def load_folder(path: str | Path) -> list[Document]:
    """Every supported file under ``path`` (recursively), sorted by id.

    README files and ``index.tsv`` are not documents. Raises ``ValueError`` if the folder does not
    exist, holds no supported file, or a file cannot be read as UTF-8 text (or as a PDF, or
    pypdf is missing for a PDF).
    """
    folder = Path(path)
    if not folder.is_dir():
        raise ValueError(f"{folder} is not a folder")
    index = _read_index(folder)
    files = sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and p.suffix.lower() in SUFFIXES and not p.name.lower().startswith("readme")
    )
    if not files:
        raise ValueError(f"{folder} holds no documents (looked for {', '.join(SUFFIXES)})")
    docs = []
    for file in files:
        rel = file.relative_to(folder).as_posix()
        if file.suffix.lower() in PDF_SUFFIXES:
            raw = pdf_to_text(file)
        else:
            try:
                raw = file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ValueError(f"cannot read {file} as UTF-8 text: {exc}") from exc
        html_title = ""
        if file.suffix.lower() in HTML_SUFFIXES:
            html_title, text = html_to_text(raw)
        else:
            text = raw.replace("\r\n", "\n")
        row = index.get(rel) or index.get(file.name) or {}
        if row.get("domain", "").strip():
            domain = row["domain"].strip()
        elif len(file.relative_to(folder).parts) > 1:
            domain = file.relative_to(folder).parts[0]
        else:
            domain = DEFAULT_DOMAIN
        title = (row.get("title") or "").strip() or html_title or _title_from_text(text, file.stem)
        date, date_source = _date_of(file, text, row, folder / INDEX_NAME)
        docs.append(
            Document(id=rel, domain=domain, title=title, text=text, path=str(file), date=date, date_source=date_source)
        )
    return docs


def docs_folder(docs: str | Path) -> Path:
    """The folder a ``docs`` setting names: ``shipped`` is the corpus in the package."""
    return SHIPPED_DIR if str(docs) == "shipped" else Path(docs).expanduser()


def shipped_corpus() -> list[Document]:
    """The 46 public-domain Python Enhancement Proposals that ship with the project."""
    return load_folder(SHIPPED_DIR)

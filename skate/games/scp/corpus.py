"""Documents for SCP: read a folder of text files, each with a domain label.

Supported files: ``.txt``, ``.md``, ``.rst`` (kept as written), ``.html``/``.htm`` (reduced to
text, scripts and styles dropped) and ``.pdf`` (pypdf's text of each page, pages separated by a
blank line; needs the optional extra ``skate[pdf]``). A domain comes from a sidecar
``index.tsv`` in the folder (tab-separated, a header naming at least ``file`` and ``domain``,
optionally ``title``; other columns are ignored), else from the name of the subfolder holding
the file, else ``"general"``.
"""

from __future__ import annotations

import csv
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


_BLOCK_TAGS = {"p", "div", "section", "article", "br", "li", "ul", "ol", "table", "tr",
               "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "header", "footer",
               "figure", "figcaption", "main", "nav", "aside", "dd", "dt", "dl"}
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


def pdf_to_text(file: Path) -> str:
    """The text of a PDF, page by page (pypdf's extraction), pages separated by a blank line."""
    try:
        from pypdf import PdfReader
    except ImportError as exc:
        raise ValueError(f"{file} is a PDF and reading PDFs needs pypdf: pip install "
                         "'skate[pdf]' (or remove the PDF from the folder)") from exc
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
    files = sorted(p for p in folder.rglob("*")
                   if p.is_file() and p.suffix.lower() in SUFFIXES
                   and not p.name.lower().startswith("readme"))
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
        docs.append(Document(id=rel, domain=domain, title=title, text=text, path=str(file)))
    return docs


def docs_folder(docs: str | Path) -> Path:
    """The folder a ``docs`` setting names: ``shipped`` is the corpus in the package."""
    return SHIPPED_DIR if str(docs) == "shipped" else Path(docs).expanduser()


def shipped_corpus() -> list[Document]:
    """The 46 public-domain Python Enhancement Proposals that ship with the project."""
    return load_folder(SHIPPED_DIR)

"""Recent arXiv papers as an SCP corpus folder (issue 12).

:func:`fetch_arxiv` lists the papers of one category submitted in a date window through arXiv's
public API (an Atom feed, paged with ``start``/``max_results``), fetches each paper's HTML full
text (``https://arxiv.org/html/<id>``; papers without an HTML version answer 404 and are skipped
and counted), reduces it to text with :func:`skate.games.scp.corpus.html_to_text` and writes a
folder :func:`skate.games.scp.corpus.load_folder` reads: one ``<id>.txt`` per paper and an
``index.tsv`` with the columns ``file``, ``domain`` (the paper's primary category), ``title`` and,
as provenance, ``arxiv_id``, ``version``, ``submitted`` (the first version's date),
``updated``, ``url`` (the abstract page), ``html_url``, ``categories`` and ``chars``. Rows of an
existing ``index.tsv`` for other files are kept, so several categories may share one folder.
``submitted`` is each document's date when the folder is read (``index.tsv:submitted``): the day
the paper first became public, from which a benchmark's age is counted (benchmarks expire, see
:mod:`skate.games.scp.rules`).

Politeness, as arXiv asks: at most one request every ``delay_s`` seconds (default 3), a
User-Agent naming skate, and only the standard library (``urllib.request``). The network being
unreachable, or the API answering with an HTTP error, raises one :class:`ArxivError` saying what
could not be reached and what to do instead; bad arguments raise ``ValueError``.

Papers on arXiv carry their authors' licences: a fetched folder is for building benchmarks
locally, not for redistribution as is.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import http.client
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from skate.games.scp.corpus import INDEX_NAME, html_to_text

API_URL = "http://export.arxiv.org/api/query"
HTML_URL = "https://arxiv.org/html"
USER_AGENT = "skate-scp/0.1 (SCP benchmark builder; https://arxiv.org/help/api)"
PAGE_SIZE = 100
INDEX_COLUMNS = (
    "file",
    "domain",
    "title",
    "arxiv_id",
    "version",
    "submitted",
    "updated",
    "url",
    "html_url",
    "categories",
    "chars",
)
LOCAL_ALTERNATIVE = "build from a local folder of documents instead: skate scp build DOCS_DIR --out bench.jsonl"
# Consecutive network failures on paper pages after which the HTML host counts as unreachable.
MAX_NETWORK_FAILURES = 3

_ATOM = "{http://www.w3.org/2005/Atom}"
_ARXIV = "{http://arxiv.org/schemas/atom}"
_OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
_CATEGORY = re.compile(r"^[A-Za-z][A-Za-z-]*(\.[A-Za-z][A-Za-z-]*)?$")
_VERSIONED = re.compile(r"^(?P<id>.+?)(?P<version>v\d+)?$")


class ArxivError(RuntimeError):
    """arXiv could not be reached or answered with an error; the message says what to do."""


@dataclass
class Paper:
    """One entry of the API's feed."""

    arxiv_id: str  # without version, e.g. "2605.01234"
    version: str  # e.g. "v2", "" if the feed does not say
    title: str
    primary_category: str
    categories: tuple[str, ...]
    submitted: str  # the first version's timestamp, as the feed gives it
    updated: str
    url: str  # the abstract page

    @property
    def versioned_id(self) -> str:
        return self.arxiv_id + self.version

    @property
    def file_name(self) -> str:
        return self.versioned_id.replace("/", "_") + ".txt"


@dataclass
class FetchReport:
    """What :func:`fetch_arxiv` did. ``total`` is the API's count of papers in the window."""

    category: str
    date_from: str
    date_to: str
    out_dir: str
    total: int = 0
    listed: int = 0
    written: int = 0
    skipped_no_html: int = 0
    errors: int = 0
    error_messages: list[str] = field(default_factory=list)

    def summary(self) -> str:
        first = f" (first: {self.error_messages[0]})" if self.error_messages else ""
        return (
            f"wrote {self.written} papers of {self.category} submitted {self.date_from} to "
            f"{self.date_to} to {self.out_dir} (listed {self.listed} of {self.total}; "
            f"skipped {self.skipped_no_html} without an HTML version; "
            f"{self.errors} errors{first})"
        )


# --------------------------------------------------------------------------- arguments


def parse_date(value: str | dt.date) -> dt.date:
    """``YYYY-MM-DD`` or ``YYYYMMDD`` (or a ``date``) as a date; ``ValueError`` otherwise."""
    if isinstance(value, dt.date):
        return value
    text = str(value).strip()
    for fmt in ("%Y-%m-%d", "%Y%m%d"):
        try:
            return dt.datetime.strptime(text, fmt).date()
        except ValueError:
            pass
    raise ValueError(f"unknown date {value!r}: write it as YYYY-MM-DD, e.g. 2026-05-01")


def search_query(category: str, date_from: dt.date, date_to: dt.date) -> str:
    """The API's ``search_query``: the category and the submission window (whole days, GMT)."""
    return f"cat:{category} AND submittedDate:[{date_from:%Y%m%d}0000 TO {date_to:%Y%m%d}2359]"


def _check(
    category: str, date_from, date_to, max_papers: int, delay_s: float, timeout_s: float, page_size: int
) -> tuple[str, dt.date, dt.date]:
    category = (category or "").strip()
    if not category:
        raise ValueError("the category is empty: give an arXiv category such as cs.CL")
    if not _CATEGORY.match(category):
        raise ValueError(f"{category!r} is not an arXiv category: write it like cs.CL, math.AG or hep-th")
    start, end = parse_date(date_from), parse_date(date_to)
    if start > end:
        raise ValueError(f"the window starts after it ends ({start} > {end}): swap the dates")
    if isinstance(max_papers, bool) or not isinstance(max_papers, int) or max_papers < 1:
        raise ValueError(f"max_papers must be a whole number of at least 1, got {max_papers!r}")
    if isinstance(page_size, bool) or not isinstance(page_size, int) or page_size < 1:
        raise ValueError(f"page_size must be a whole number of at least 1, got {page_size!r}")
    if delay_s < 0:
        raise ValueError(f"delay_s must be 0 or more seconds, got {delay_s}")
    if timeout_s <= 0:
        raise ValueError(f"timeout_s must be more than 0 seconds, got {timeout_s}")
    return category, start, end


# --------------------------------------------------------------------------- HTTP


class _Client:
    """GET with a User-Agent, a timeout and at least ``delay_s`` seconds between requests."""

    def __init__(self, delay_s: float, timeout_s: float, sleep: Callable[[float], None] = time.sleep) -> None:
        self.delay_s = delay_s
        self.timeout_s = timeout_s
        self.sleep = sleep
        self._last: float | None = None
        self.requests = 0

    def get(self, url: str) -> bytes:
        if self._last is not None and self.delay_s > 0:
            wait = self._last + self.delay_s - time.monotonic()
            if wait > 0:
                self.sleep(wait)
        request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
        self.requests += 1
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return response.read()
        except urllib.error.HTTPError as exc:
            exc.close()
            raise
        finally:
            self._last = time.monotonic()


def _reason(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code} {exc.reason}".rstrip()
    if isinstance(exc, urllib.error.URLError):
        if not isinstance(exc.reason, BaseException):
            return str(exc.reason)
        exc = exc.reason
    if isinstance(exc, TimeoutError):
        return "timed out"
    return str(exc) or type(exc).__name__


_NETWORK_ERRORS = (urllib.error.URLError, OSError, http.client.HTTPException)


def _unreachable(what: str, url: str, exc: BaseException) -> ArxivError:
    if isinstance(exc, urllib.error.HTTPError):
        return ArxivError(
            f"{what} at {url} answered {_reason(exc)}. Try again later (arXiv "
            f"may be busy or down), or {LOCAL_ALTERNATIVE}"
        )
    return ArxivError(
        f"cannot reach {what} at {url}: {_reason(exc)}. Check the network "
        f"(a proxy goes in HTTPS_PROXY/HTTP_PROXY), or {LOCAL_ALTERNATIVE}"
    )


# --------------------------------------------------------------------------- feed


def _text(element: ET.Element | None) -> str:
    return " ".join((element.text or "").split()) if element is not None else ""


def parse_feed(xml_bytes: bytes) -> tuple[int | None, list[Paper]]:
    """(totalResults, papers) of one page of the API's Atom feed. ``ValueError`` if malformed;
    ``ArxivError`` for the API's own error entries."""
    try:
        root = ET.fromstring(xml_bytes)
    except ET.ParseError as exc:
        raise ValueError(f"not an Atom feed ({exc})") from exc
    if root.tag != f"{_ATOM}feed":
        raise ValueError(f"not an Atom feed (root element {root.tag})")
    total_text = _text(root.find(f"{_OPENSEARCH}totalResults"))
    total = int(total_text) if total_text.isdigit() else None
    papers = []
    for entry in root.findall(f"{_ATOM}entry"):
        entry_id = _text(entry.find(f"{_ATOM}id"))
        if "/api/errors" in entry_id:
            raise ArxivError(f"the arXiv API rejected the query: {_text(entry.find(f'{_ATOM}summary')) or entry_id}")
        alternate = ""
        for link in entry.findall(f"{_ATOM}link"):
            if link.get("rel") == "alternate" and link.get("href"):
                alternate = link.get("href", "")
        abs_part = (entry_id or alternate).rstrip("/").split("/abs/")[-1]
        match = _VERSIONED.match(abs_part)
        if not abs_part or match is None:
            continue
        arxiv_id, version = match["id"], match["version"] or ""
        if not version:
            alt = _VERSIONED.match(alternate.rstrip("/").split("/abs/")[-1])
            version = (alt["version"] or "") if alt and alt["id"] == arxiv_id else ""
        categories = tuple(c.get("term", "") for c in entry.findall(f"{_ATOM}category") if c.get("term"))
        primary = entry.find(f"{_ARXIV}primary_category")
        primary_term = (primary.get("term", "") if primary is not None else "") or (categories[0] if categories else "")
        papers.append(
            Paper(
                arxiv_id=arxiv_id,
                version=version,
                title=_text(entry.find(f"{_ATOM}title")),
                primary_category=primary_term,
                categories=categories,
                submitted=_text(entry.find(f"{_ATOM}published")),
                updated=_text(entry.find(f"{_ATOM}updated")),
                url=alternate or entry_id,
            )
        )
    return total, papers


# --------------------------------------------------------------------------- HTML

_ARTICLE = re.compile(r"<article\b.*</article\s*>", re.IGNORECASE | re.DOTALL)
_MATH = re.compile(r"<math\b([^>]*)>.*?</math\s*>", re.IGNORECASE | re.DOTALL)
_ALTTEXT = re.compile(r"""\balttext\s*=\s*("([^"]*)"|'([^']*)')""", re.IGNORECASE)
_HTML_TITLE = re.compile(r"<title\b[^>]*>.*?</title\s*>", re.IGNORECASE | re.DOTALL)


def _math_as_tex(match: re.Match) -> str:
    alt = _ALTTEXT.search(match[1])
    if not alt:
        return " "
    return f" ${alt[2] if alt[2] is not None else alt[3]}$ "


def paper_text(html: str) -> tuple[str, str]:
    """(title, text) of an arXiv HTML paper: the ``<article>`` only when there is one (no site
    header, footer or conversion banner), each MathML formula as its TeX ``$alttext$`` rather
    than its MathML tokens and TeX annotation both; then :func:`html_to_text`."""
    title_tag = _HTML_TITLE.search(html)
    article = _ARTICLE.search(html)
    body = article[0] if article else html
    body = _MATH.sub(_math_as_tex, body)
    if title_tag and article:
        body = title_tag[0] + body
    return html_to_text(body)


# --------------------------------------------------------------------------- index


def _read_existing_index(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            return [row for row in csv.DictReader(fh, delimiter="\t") if row.get("file")]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"cannot read the existing {path}: {exc}; choose another --out") from exc


def _write_index(path: Path, rows: list[dict[str, str]]) -> None:
    """Our columns first, then any other column an existing index had (kept, not dropped)."""
    columns = list(INDEX_COLUMNS)
    for row in rows:
        columns += [c for c in row if c and c not in columns]
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(
            fh, fieldnames=columns, delimiter="\t", extrasaction="ignore", restval="", lineterminator="\n"
        )
        writer.writeheader()
        writer.writerows(rows)
    tmp.replace(path)


def _index_row(paper: Paper, html_url: str, chars: int) -> dict[str, str]:
    return {
        "file": paper.file_name,
        "domain": paper.primary_category,
        "title": paper.title,
        "arxiv_id": paper.arxiv_id,
        "version": paper.version,
        "submitted": paper.submitted,
        "updated": paper.updated,
        "url": paper.url,
        "html_url": html_url,
        "categories": " ".join(paper.categories),
        "chars": str(chars),
    }


# --------------------------------------------------------------------------- fetch


def fetch_arxiv(
    category: str,
    date_from: str | dt.date,
    date_to: str | dt.date,
    out_dir: str | Path,
    max_papers: int = 50,
    api_url: str = API_URL,
    html_url: str = HTML_URL,
    delay_s: float = 3.0,
    timeout_s: float = 30,
    page_size: int = PAGE_SIZE,
    progress: Callable[[str], None] | None = None,
) -> FetchReport:
    """Write up to ``max_papers`` papers of ``category`` submitted from ``date_from`` to
    ``date_to`` (inclusive, ``YYYY-MM-DD``) into ``out_dir`` as a corpus folder.

    Papers are listed newest first, ``page_size`` per API request; papers without an HTML
    version do not count towards ``max_papers`` (listing goes on until ``max_papers`` are
    written or the window is exhausted). A paper page failing with another HTTP error is counted
    in ``errors`` and skipped. Raises ``ValueError`` for bad arguments and :class:`ArxivError`
    when the API cannot be reached, answers with an HTTP error or something that is not a feed,
    or the HTML host cannot be reached (several network failures in a row). Papers written
    before an error stay listed in ``index.tsv``.
    """
    category, start, end = _check(category, date_from, date_to, max_papers, delay_s, timeout_s, page_size)
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out} exists and is not a folder: choose another output folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"cannot create {out}: {exc.strerror or exc}; choose another output folder") from exc
    index_path = out / INDEX_NAME
    rows = {row["file"]: row for row in _read_existing_index(index_path)}
    report = FetchReport(category=category, date_from=start.isoformat(), date_to=end.isoformat(), out_dir=str(out))
    client = _Client(delay_s, timeout_s)
    query = search_query(category, start, end)
    html_base = html_url.rstrip("/")
    say = progress or (lambda _message: None)
    seen: set[str] = set()
    offset = 0
    network_failures = 0
    changed = False
    try:
        while report.written < max_papers:
            params = urllib.parse.urlencode(
                {
                    "search_query": query,
                    "start": offset,
                    "max_results": page_size,
                    "sortBy": "submittedDate",
                    "sortOrder": "descending",
                }
            )
            url = f"{api_url}?{params}"
            try:
                body = client.get(url)
            except _NETWORK_ERRORS as exc:
                raise _unreachable("the arXiv API", api_url, exc) from exc
            try:
                total, papers = parse_feed(body)
            except ValueError as exc:
                raise ArxivError(
                    f"the arXiv API at {api_url} answered with something that is "
                    f"not its Atom feed: {exc}. Try again later, or "
                    f"{LOCAL_ALTERNATIVE}"
                ) from exc
            if total is not None:
                report.total = total
            if not papers:
                break
            offset += len(papers)
            for paper in papers:
                if report.written >= max_papers:
                    break
                if paper.versioned_id in seen:
                    continue
                seen.add(paper.versioned_id)
                report.listed += 1
                page_url = f"{html_base}/{paper.versioned_id}"
                try:
                    raw = client.get(page_url)
                except urllib.error.HTTPError as exc:
                    network_failures = 0
                    if exc.code in (404, 410):
                        report.skipped_no_html += 1
                        say(f"{paper.versioned_id}: no HTML version, skipped")
                    else:
                        report.errors += 1
                        report.error_messages.append(f"{page_url}: {_reason(exc)}")
                        say(f"{paper.versioned_id}: {_reason(exc)}")
                    continue
                except _NETWORK_ERRORS as exc:
                    report.errors += 1
                    report.error_messages.append(f"{page_url}: {_reason(exc)}")
                    network_failures += 1
                    say(f"{paper.versioned_id}: {_reason(exc)}")
                    if network_failures >= MAX_NETWORK_FAILURES:
                        raise _unreachable("arXiv's HTML papers", html_base, exc) from exc
                    continue
                network_failures = 0
                html_title, text = paper_text(raw.decode("utf-8", errors="replace"))
                if not text.strip():
                    report.skipped_no_html += 1
                    say(f"{paper.versioned_id}: empty HTML version, skipped")
                    continue
                if not paper.title:
                    paper.title = html_title
                try:
                    (out / paper.file_name).write_text(text + "\n", encoding="utf-8")
                except OSError as exc:
                    raise ValueError(
                        f"cannot write {out / paper.file_name}: {exc.strerror or exc}; choose another output folder"
                    ) from exc
                rows[paper.file_name] = _index_row(paper, page_url, len(text))
                changed = True
                report.written += 1
                say(f"{paper.versioned_id}: {len(text)} characters ({report.written}/{max_papers})")
            if total is not None and offset >= total:
                break
    finally:
        if changed:
            _write_index(index_path, list(rows.values()))
    return report


# --------------------------------------------------------------------------- command line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``arxiv`` subcommand's arguments."""
    parser.add_argument(
        "--category", required=True, help="arXiv category, e.g. cs.CL (the papers' domain is their primary category)"
    )
    parser.add_argument(
        "--from", dest="date_from", required=True, metavar="YYYY-MM-DD", help="first submission day (GMT), inclusive"
    )
    parser.add_argument(
        "--to", dest="date_to", required=True, metavar="YYYY-MM-DD", help="last submission day (GMT), inclusive"
    )
    parser.add_argument("--max", dest="max_papers", type=int, default=50, help="papers to write, at most (default 50)")
    parser.add_argument(
        "--out", type=Path, required=True, help="folder to write (created if missing; an index.tsv there is extended)"
    )
    parser.add_argument(
        "--delay", dest="delay_s", type=float, default=3.0, help="seconds between requests (default 3, as arXiv asks)"
    )
    parser.add_argument(
        "--timeout", dest="timeout_s", type=float, default=30.0, help="seconds to wait for each answer (default 30)"
    )
    parser.add_argument(
        "--page-size",
        dest="page_size",
        type=int,
        default=PAGE_SIZE,
        help=f"papers listed per API request (default {PAGE_SIZE})",
    )
    parser.add_argument("--api-url", default=API_URL, help=f"default {API_URL}")
    parser.add_argument("--html-url", default=HTML_URL, help=f"default {HTML_URL}")


def _stderr_printer(prog: str) -> Callable[[str], None]:
    def say(message: str) -> None:
        print(f"{prog}: {message}", file=sys.stderr)

    return say


def main_from_args(args: argparse.Namespace, prog: str = "skate.scp") -> int:
    """Run the fetch; print one summary line (0) or one error line on stderr (2)."""
    progress = _stderr_printer(prog) if sys.stderr.isatty() else None
    try:
        report = fetch_arxiv(
            args.category,
            args.date_from,
            args.date_to,
            args.out,
            max_papers=args.max_papers,
            api_url=args.api_url,
            html_url=args.html_url,
            delay_s=args.delay_s,
            timeout_s=args.timeout_s,
            page_size=args.page_size,
            progress=progress,
        )
    except (ArxivError, ValueError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    print(report.summary())
    return 0


__all__ = [
    "API_URL",
    "HTML_URL",
    "ArxivError",
    "FetchReport",
    "Paper",
    "add_arguments",
    "fetch_arxiv",
    "main_from_args",
    "paper_text",
    "parse_date",
    "parse_feed",
    "search_query",
]

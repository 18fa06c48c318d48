"""The arXiv source against a loopback server: canned Atom feed, canned HTML papers, no network."""

from __future__ import annotations

import argparse
import csv
import socket
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from skate.games.scp.corpus import load_folder
from skate.tools.scp import arxiv
from skate.tools.scp.arxiv import ArxivError, fetch_arxiv, parse_feed

FEED_HEAD = """<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <link href="http://arxiv.org/api/query?search_query%3Dcat%3Acs.CL" rel="self"
        type="application/atom+xml"/>
  <title type="html">ArXiv Query: search_query=cat:cs.CL</title>
  <id>http://arxiv.org/api/Xq9Vh3l2c0mXc3ZpA1b8yDhLr2E</id>
  <updated>2026-11-02T00:00:00-05:00</updated>
  <opensearch:totalResults xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/"
    >{total}</opensearch:totalResults>
  <opensearch:startIndex xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/"
    >{start}</opensearch:startIndex>
  <opensearch:itemsPerPage xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/"
    >{per_page}</opensearch:itemsPerPage>
"""

ENTRIES = [
    """  <entry>
    <id>http://arxiv.org/abs/2610.04417v1</id>
    <updated>2026-10-28T17:59:02Z</updated>
    <published>2026-10-28T17:59:02Z</published>
    <title>Sparse Retrieval Heads in Long-Context
  Language Models</title>
    <summary>  We find that a handful of attention heads carry most of the retrieval in
long-context models.</summary>
    <author><name>Ana Ribeiro</name></author>
    <author><name>Tomasz Wolny</name></author>
    <arxiv:comment xmlns:arxiv="http://arxiv.org/schemas/atom">18 pages, 6 figures</arxiv:comment>
    <link href="http://arxiv.org/abs/2610.04417v1" rel="alternate" type="text/html"/>
    <link title="pdf" href="http://arxiv.org/pdf/2610.04417v1" rel="related"
          type="application/pdf"/>
    <arxiv:primary_category xmlns:arxiv="http://arxiv.org/schemas/atom" term="cs.CL"
        scheme="http://arxiv.org/schemas/atom"/>
    <category term="cs.CL" scheme="http://arxiv.org/schemas/atom"/>
    <category term="cs.AI" scheme="http://arxiv.org/schemas/atom"/>
  </entry>
""",
    """  <entry>
    <id>http://arxiv.org/abs/2609.11873v2</id>
    <updated>2026-10-30T09:12:44Z</updated>
    <published>2026-09-14T13:20:05Z</published>
    <title>Curriculum Schedules for Small Translation Models</title>
    <summary>We compare curriculum schedules for training small translation models.</summary>
    <author><name>Li Wei</name></author>
    <link href="http://arxiv.org/abs/2609.11873v2" rel="alternate" type="text/html"/>
    <link title="pdf" href="http://arxiv.org/pdf/2609.11873v2" rel="related"
          type="application/pdf"/>
    <arxiv:primary_category xmlns:arxiv="http://arxiv.org/schemas/atom" term="cs.LG"
        scheme="http://arxiv.org/schemas/atom"/>
    <category term="cs.LG" scheme="http://arxiv.org/schemas/atom"/>
    <category term="cs.CL" scheme="http://arxiv.org/schemas/atom"/>
  </entry>
""",
    """  <entry>
    <id>http://arxiv.org/abs/2608.00912v1</id>
    <updated>2026-08-03T11:00:00Z</updated>
    <published>2026-08-03T11:00:00Z</published>
    <title>A PDF-only Note on Tokenisers</title>
    <summary>A short note.</summary>
    <author><name>R. Okafor</name></author>
    <link href="http://arxiv.org/abs/2608.00912v1" rel="alternate" type="text/html"/>
    <arxiv:primary_category xmlns:arxiv="http://arxiv.org/schemas/atom" term="cs.CL"
        scheme="http://arxiv.org/schemas/atom"/>
    <category term="cs.CL" scheme="http://arxiv.org/schemas/atom"/>
  </entry>
""",
]

ERROR_FEED = """<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title type="html">ArXiv Query: search_query=&amp;id_list=1234</title>
  <id>http://arxiv.org/api/QlwZ1xqK1z7sYpTvM5vWcmJv4kE</id>
  <opensearch:totalResults xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/"
    >1</opensearch:totalResults>
  <entry>
    <id>http://arxiv.org/api/errors#incorrect_id_format_for_1234</id>
    <title>Error</title>
    <summary>incorrect id format for 1234</summary>
  </entry>
</feed>
"""

PARAGRAPHS = [
    (
        "Long-context language models are routinely evaluated on retrieval tasks in which a "
        "single fact is hidden in a long document and must be recalled at the end."
    ),
    (
        "We trace which attention heads move the hidden fact to the final position and find that "
        "a small set of them, fewer than two percent of all heads, carries most of that traffic."
    ),
    (
        "Ablating these heads drops retrieval accuracy to chance while leaving perplexity on "
        "ordinary text almost unchanged, which suggests a specialised circuit."
    ),
]


def _paper_html(title: str) -> str:
    paras = "\n".join(f'<div class="ltx_para"><p class="ltx_p">{p}</p></div>' for p in PARAGRAPHS)
    return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>{title}</title><style>.ltx_p {{ margin: 0 }}</style></head><body>
<header class="desktop_header"><a href="https://arxiv.org/">Back to arXiv</a> Why HTML?
Report Issue</header>
<div class="ltx_page_main"><div class="ltx_page_content">
<article class="ltx_document ltx_authors_1line">
<h1 class="ltx_title ltx_title_document">{title}</h1>
<div class="ltx_abstract"><h6 class="ltx_title">Abstract</h6>
<p class="ltx_p">We study retrieval heads with loss
<math alttext="\\mathcal{{L}}_{{ret}}" class="ltx_Math" display="inline"><semantics>
<msub><mi>ℒ</mi><mi>ret</mi></msub>
<annotation encoding="application/x-tex">\\mathcal{{L}}_{{ret}}</annotation></semantics></math>
over &lt;10% of heads.</p></div>
<section class="ltx_section"><h2 class="ltx_title">1 Introduction</h2>
{paras}
</section></article></div></div>
<footer class="ltx_page_footer">Generated by LaTeXML</footer>
<script>console.log("feedback")</script></body></html>"""


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep the test output quiet
        pass

    def _send(self, status: int, body: str, content_type: str = "text/html"):
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", f"{content_type}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        server = self.server
        parsed = urllib.parse.urlsplit(self.path)
        server.requests.append((parsed.path, urllib.parse.parse_qs(parsed.query), self.headers.get("User-Agent", "")))
        if parsed.path == "/api/query":
            query = urllib.parse.parse_qs(parsed.query)
            start = int(query["start"][0])
            per_page = int(query["max_results"][0])
            page = ENTRIES[start : start + per_page]
            head = FEED_HEAD.format(total=len(ENTRIES), start=start, per_page=per_page)
            self._send(200, head + "".join(page) + "</feed>\n", "application/atom+xml")
        elif parsed.path == "/api/broken":
            self._send(500, "Internal Server Error", "text/plain")
        elif parsed.path == "/api/error-entry":
            self._send(200, ERROR_FEED, "application/atom+xml")
        elif parsed.path == "/html/2610.04417v1":
            self._send(200, _paper_html("Sparse Retrieval Heads in Long-Context Language Models"))
        elif parsed.path == "/html/2609.11873v2":
            self._send(200, _paper_html("Curriculum Schedules for Small Translation Models"))
        else:
            self._send(404, "<html><body>No HTML for this paper</body></html>")


@pytest.fixture(scope="module")
def _running_server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    httpd.requests = []
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield httpd, f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture
def server(_running_server):
    """(server, base URL); ``server.requests`` lists this test's requests only."""
    _running_server[0].requests.clear()
    return _running_server


@pytest.fixture
def closed_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def _fetch(base, out, **kwargs):
    kwargs.setdefault("max_papers", 50)
    return fetch_arxiv(
        "cs.CL",
        "2026-05-01",
        "2026-11-01",
        out,
        api_url=f"{base}/api/query",
        html_url=f"{base}/html",
        delay_s=0,
        timeout_s=5,
        **kwargs,
    )


def _api_requests(httpd):
    return [(q, ua) for path, q, ua in httpd.requests if path.startswith("/api/")]


def test_fetch_writes_a_folder_load_folder_reads(server, tmp_path):
    _, base = server
    report = _fetch(base, tmp_path / "corpus", page_size=2)
    assert (report.total, report.listed, report.written) == (3, 3, 2)
    assert (report.skipped_no_html, report.errors) == (1, 0)
    docs = {d.id: d for d in load_folder(tmp_path / "corpus")}
    assert sorted(docs) == ["2609.11873v2.txt", "2610.04417v1.txt"]
    # the domain is the primary category, even for a paper cross-listed to cs.CL
    assert docs["2610.04417v1.txt"].domain == "cs.CL"
    assert docs["2609.11873v2.txt"].domain == "cs.LG"
    assert docs["2610.04417v1.txt"].title == ("Sparse Retrieval Heads in Long-Context Language Models")
    text = docs["2610.04417v1.txt"].text
    for paragraph in PARAGRAPHS:
        assert f"\n\n{paragraph}\n\n" in f"\n\n{text}\n\n"
    # only the article: no site header, footer or script; formulas as their TeX, once
    assert "Back to arXiv" not in text and "LaTeXML" not in text and "console" not in text
    assert "$\\mathcal{L}_{ret}$ over <10% of heads." in text and text.count("ret}") == 1


def test_index_records_provenance(server, tmp_path):
    _, base = server
    _fetch(base, tmp_path)
    with (tmp_path / "index.tsv").open(encoding="utf-8", newline="") as fh:
        rows = {r["file"]: r for r in csv.DictReader(fh, delimiter="\t")}
    assert sorted(rows) == ["2609.11873v2.txt", "2610.04417v1.txt"]
    row = rows["2609.11873v2.txt"]
    assert row["arxiv_id"] == "2609.11873" and row["version"] == "v2"
    assert row["submitted"] == "2026-09-14T13:20:05Z" and row["updated"] == "2026-10-30T09:12:44Z"
    assert row["url"] == "http://arxiv.org/abs/2609.11873v2"
    assert row["html_url"] == f"{base}/html/2609.11873v2"
    assert row["categories"] == "cs.LG cs.CL" and row["domain"] == "cs.LG"
    assert int(row["chars"]) == len((tmp_path / "2609.11873v2.txt").read_text().strip())
    # the documents' dates: each paper's first version, from the index (benchmarks expire)
    dates = {d.id: (d.date, d.date_source) for d in load_folder(tmp_path)}
    assert dates == {
        "2609.11873v2.txt": ("2026-09-14", "index.tsv:submitted"),
        "2610.04417v1.txt": ("2026-10-28", "index.tsv:submitted"),
    }


def test_query_names_category_window_sort_and_pages(server, tmp_path):
    httpd, base = server
    _fetch(base, tmp_path, page_size=2)
    api = _api_requests(httpd)
    assert [(q["start"], q["max_results"]) for q, _ in api] == [(["0"], ["2"]), (["2"], ["2"])]
    for query, user_agent in api:
        assert query["search_query"] == ["cat:cs.CL AND submittedDate:[202605010000 TO 202611012359]"]
        assert query["sortBy"] == ["submittedDate"]
        assert "skate" in user_agent
    html = [path for path, _, _ in httpd.requests if path.startswith("/html/")]
    assert html == ["/html/2610.04417v1", "/html/2609.11873v2", "/html/2608.00912v1"]


def test_max_papers_stops_listing_early(server, tmp_path):
    httpd, base = server
    report = _fetch(base, tmp_path, max_papers=1, page_size=1)
    assert (report.listed, report.written) == (1, 1)
    assert len(_api_requests(httpd)) == 1 and len(httpd.requests) == 2


def test_existing_index_rows_are_kept(server, tmp_path):
    _, base = server
    (tmp_path / "notes.txt").write_text("Some local notes.\n\nMore notes.\n", encoding="utf-8")
    (tmp_path / "index.tsv").write_text(
        "file\tdomain\ttitle\tsource\nnotes.txt\tlocal\tNotes\tdesk\n", encoding="utf-8"
    )
    _fetch(base, tmp_path)
    domains = {d.id: d.domain for d in load_folder(tmp_path)}
    assert domains == {"notes.txt": "local", "2610.04417v1.txt": "cs.CL", "2609.11873v2.txt": "cs.LG"}
    with (tmp_path / "index.tsv").open(encoding="utf-8", newline="") as fh:
        rows = {r["file"]: r for r in csv.DictReader(fh, delimiter="\t")}
    assert rows["notes.txt"]["source"] == "desk"


def test_unreachable_api_is_one_clear_error(closed_port, tmp_path):
    url = f"http://127.0.0.1:{closed_port}/api/query"
    with pytest.raises(ArxivError) as info:
        fetch_arxiv("cs.CL", "2026-05-01", "2026-11-01", tmp_path, api_url=url, delay_s=0, timeout_s=5)
    message = str(info.value)
    assert isinstance(info.value, RuntimeError)
    assert message.startswith(f"cannot reach the arXiv API at {url}: ")
    assert "skate scp build DOCS_DIR" in message and "network" in message


def test_api_http_500_is_an_arxiv_error(server, tmp_path):
    _, base = server
    with pytest.raises(ArxivError, match=r"answered HTTP 500 .*skate scp build"):
        fetch_arxiv("cs.CL", "2026-05-01", "2026-11-01", tmp_path, api_url=f"{base}/api/broken", delay_s=0, timeout_s=5)


def test_api_error_entry_is_an_arxiv_error(server, tmp_path):
    _, base = server
    with pytest.raises(ArxivError, match="incorrect id format for 1234"):
        fetch_arxiv(
            "cs.CL", "2026-05-01", "2026-11-01", tmp_path, api_url=f"{base}/api/error-entry", delay_s=0, timeout_s=5
        )


def test_unreachable_html_host_is_an_arxiv_error(server, closed_port, tmp_path):
    _, base = server
    with pytest.raises(ArxivError, match="cannot reach arXiv's HTML papers at http://127.0.0.1"):
        fetch_arxiv(
            "cs.CL",
            "2026-05-01",
            "2026-11-01",
            tmp_path,
            api_url=f"{base}/api/query",
            html_url=f"http://127.0.0.1:{closed_port}/html",
            delay_s=0,
            timeout_s=5,
        )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"category": " "}, "category is empty"),
        ({"category": "cs CL"}, "not an arXiv category"),
        ({"date_from": "01/05/2026"}, "unknown date .*YYYY-MM-DD"),
        ({"date_to": "2026-13-01"}, "unknown date"),
        ({"date_from": "2026-11-02"}, "starts after it ends"),
        ({"max_papers": 0}, "max_papers must be .* at least 1"),
        ({"page_size": 0}, "page_size"),
        ({"delay_s": -1}, "delay_s"),
    ],
)
def test_bad_arguments_are_value_errors(tmp_path, kwargs, match):
    args = {
        "category": "cs.CL",
        "date_from": "2026-05-01",
        "date_to": "2026-11-01",
        "out_dir": tmp_path,
        "api_url": "http://127.0.0.1:9/never-called",
        "delay_s": 0,
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        fetch_arxiv(**args)


def test_dates_accept_both_spellings():
    assert arxiv.parse_date("20260501") == arxiv.parse_date("2026-05-01")


def test_requests_are_spaced_by_the_delay(server):
    _, base = server
    waits = []
    client = arxiv._Client(delay_s=5.0, timeout_s=5, sleep=waits.append)
    client.get(f"{base}/html/2610.04417v1")
    client.get(f"{base}/html/2610.04417v1")
    assert len(waits) == 1 and 4.0 < waits[0] <= 5.0


def test_parse_feed_reads_entries():
    total, papers = parse_feed((FEED_HEAD.format(total=3, start=0, per_page=3) + "".join(ENTRIES) + "</feed>").encode())
    assert total == 3 and [p.versioned_id for p in papers] == ["2610.04417v1", "2609.11873v2", "2608.00912v1"]
    assert papers[0].title == "Sparse Retrieval Heads in Long-Context Language Models"
    assert papers[0].categories == ("cs.CL", "cs.AI")


def _cli(argv):
    parser = argparse.ArgumentParser()
    arxiv.add_arguments(parser)
    return arxiv.main_from_args(parser.parse_args(argv))


def test_cli_prints_one_summary_line(server, tmp_path, capsys):
    _, base = server
    status = _cli(
        [
            "--category",
            "cs.CL",
            "--from",
            "2026-05-01",
            "--to",
            "2026-11-01",
            "--max",
            "5",
            "--out",
            str(tmp_path),
            "--delay",
            "0",
            "--api-url",
            f"{base}/api/query",
            "--html-url",
            f"{base}/html",
        ]
    )
    out, err = capsys.readouterr()
    assert status == 0 and err == ""
    assert out.count("\n") == 1 and out.startswith("wrote 2 papers of cs.CL")
    assert "skipped 1 without an HTML version" in out


def test_cli_errors_are_one_line_and_status_2(closed_port, tmp_path, capsys):
    status = _cli(
        [
            "--category",
            "cs.CL",
            "--from",
            "2026-05-01",
            "--to",
            "2026-11-01",
            "--out",
            str(tmp_path),
            "--delay",
            "0",
            "--api-url",
            f"http://127.0.0.1:{closed_port}/api/query",
        ]
    )
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("skate.scp: cannot reach the arXiv API")
    status = _cli(["--category", "cs.CL", "--from", "2026-11-05", "--to", "2026-11-01", "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    assert status == 2 and err.startswith("skate.scp: the window starts after it ends")

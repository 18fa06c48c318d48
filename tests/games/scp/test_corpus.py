"""The folder loader, paragraph cleaning, sentence splitting and fragment rules."""

from __future__ import annotations

import pytest

from skate.games.scp.corpus import Document, html_to_text, load_folder, shipped_corpus
from skate.games.scp.fragments import Fragment, fragments, markup_density, paragraphs, sentences, starts_badly

PROSE = (
    "The quick brown fox had a long day in the meadow and wanted to rest before dusk. "
    "It found a quiet spot under an old oak tree, far from the noisy road."
)


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_index_tsv_gives_domain_and_title(tmp_path):
    _write(tmp_path / "a.txt", PROSE)
    _write(tmp_path / "b.md", "# Heading\n\n" + PROSE)
    _write(tmp_path / "index.tsv", "file\tdomain\ttitle\tchars\na.txt\tbiology\tFoxes\t10\n")
    _write(tmp_path / "README.md", "not a document")
    docs = {d.id: d for d in load_folder(tmp_path)}
    assert sorted(docs) == ["a.txt", "b.md"]
    assert docs["a.txt"].domain == "biology" and docs["a.txt"].title == "Foxes"
    assert docs["b.md"].domain == "general" and docs["b.md"].title == "Heading"
    assert docs["a.txt"].text == PROSE and docs["a.txt"].path.endswith("a.txt")


def test_subfolder_names_are_domains(tmp_path):
    _write(tmp_path / "physics" / "x.rst", PROSE)
    _write(tmp_path / "law" / "deep" / "y.txt", PROSE)
    docs = {d.id: d.domain for d in load_folder(tmp_path)}
    assert docs == {"physics/x.rst": "physics", "law/deep/y.txt": "law"}


def test_html_is_reduced_to_text(tmp_path):
    html = (
        "<html><head><title>Fox  page</title><style>p {color: red}</style>"
        "<script>var x = 1;</script></head><body><h1>Foxes</h1><p>First &amp; one\n"
        "wrapped.</p><p>Second.</p></body></html>"
    )
    _write(tmp_path / "p.html", html)
    (doc,) = load_folder(tmp_path)
    assert doc.title == "Fox page"
    assert doc.text == "Foxes\n\nFirst & one wrapped.\n\nSecond."
    assert "color" not in doc.text and "var x" not in doc.text
    assert html_to_text("<p>a</p><p>b</p>") == ("", "a\n\nb")


def test_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="no documents"):
        load_folder(tmp_path)
    with pytest.raises(ValueError, match="not a folder"):
        load_folder(tmp_path / "missing")
    (tmp_path / "bad.txt").write_bytes(b"\xff\xfe\xfa not utf-8 \x80")
    with pytest.raises(ValueError, match="cannot read"):
        load_folder(tmp_path)


def test_shipped_corpus():
    docs = shipped_corpus()
    assert len(docs) == 46
    assert {d.domain for d in docs} >= {"language", "packaging", "typing"}
    assert all(d.id.endswith(".rst") and d.title for d in docs)


RST = """\
PEP: 999
Title: A Sample
Author: Someone <someone@example.org>
Status: Final

Abstract
========

This PEP proposes
a sample that is
hard-wrapped.

.. note::

   A note body that
   must go.

Here is an example::

    def f():

        return 1

Back to prose, see :pep:`8` and `the docs <https://example.org>`_.

- a bullet
- another bullet

+-----+-----+
| a   | b   |
+-----+-----+

=====  =====
col    col
=====  =====

:Field: value

.. a comment
   spanning lines

```python
print("fenced")
```

Final paragraph.
"""


def test_paragraph_cleaning_on_rst():
    assert paragraphs(RST) == [
        "This PEP proposes a sample that is hard-wrapped.",
        "Here is an example:",
        "Back to prose, see PEP 8 and the docs.",
        "Final paragraph.",
    ]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("One. Two.", ["One.", "Two."]),
        ("Use e.g. lists here. Then stop.", ["Use e.g. lists here.", "Then stop."]),
        ("That is, i.e. Foo works. Yes.", ["That is, i.e. Foo works.", "Yes."]),
        ("Mr. Smith and Kevin D. Jones met. Fine.", ["Mr. Smith and Kevin D. Jones met.", "Fine."]),
        ("Cats vs. Dogs is old. New.", ["Cats vs. Dogs is old.", "New."]),
        ("Pi is 3.14 roughly. Python 3.12 is out. Ok.", ["Pi is 3.14 roughly.", "Python 3.12 is out.", "Ok."]),
        ("Follow PEP 8. It helps.", ["Follow PEP 8.", "It helps."]),
        ("Follow PEP 8.", ["Follow PEP 8."]),
        ("Lists, tuples, etc. and more. End.", ["Lists, tuples, etc. and more.", "End."]),
        ('Really? Yes! "Quoted." Next.', ["Really?", "Yes!", '"Quoted."', "Next."]),
        ("See the U.S. Army rules. Go.", ["See the U.S. Army rules.", "Go."]),
        ("", []),
    ],
)
def test_sentences(text, expected):
    assert sentences(text) == expected


def _doc(paras):
    return Document(id="d.txt", domain="test", title="t", text="\n\n".join(paras), path="d.txt")


def test_fragment_rules():
    paras = [
        PROSE,
        PROSE + " One.",
        "Short one.",
        "lowercase start " + PROSE,
        "Figure 3 shows " + PROSE,
        "Code ``x`` *y* |z| {w} ``a_b = c_d`` " * 3 + PROSE,
        PROSE + " Two.",
        PROSE + " Three.",
    ]
    frags = fragments(_doc(paras), 1, 100)
    assert all(isinstance(f, Fragment) and f.doc_id == "d.txt" for f in frags)
    assert [f.position for f in frags] == [1, 6, 7]  # 0 never; short, lowercase, caption, markup
    pairs = fragments(_doc(paras), 2, 250)
    assert [f.position for f in pairs] == [6]
    assert pairs[0].paragraphs == (paras[6], paras[7])
    assert fragments(_doc(paras), 2, 10_000) == []


def test_fragment_helpers():
    assert markup_density("plain words only") == 0
    assert markup_density("``a`` | *b* | {c}") > 0.3
    assert starts_badly("and then") and starts_badly(", so") and starts_badly("Fig. 2: a")
    assert starts_badly("Table 1 lists") and not starts_badly("Tables are nice.")
    assert not starts_badly("The end.") and not starts_badly("3 things")
    with pytest.raises(ValueError):
        fragments(_doc([PROSE]), 0, 10)

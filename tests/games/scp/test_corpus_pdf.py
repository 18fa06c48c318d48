"""PDF documents in a corpus folder (pypdf, the optional extra ``skate[pdf]``)."""

from __future__ import annotations

import sys

import pytest

from skate.games.scp.corpus import load_folder

PAGE_1 = [
    (720, "Rivers carry sediment from the mountains to the sea."),
    (706, "The heaviest stones settle first, in the upper valleys."),
]
PAGE_2 = [
    (720, "Fine silt travels furthest and builds the delta."),
    (706, "Each flood adds a thin layer (about a millimetre) to the plain."),
]


def _pdf(pages: list[list[tuple[int, str]]]) -> bytes:
    """A minimal valid PDF: one Helvetica text line per (y, text), with a correct xref table."""
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages)))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    for i, lines in enumerate(pages):
        escaped = [t.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") for _, t in lines]
        stream = (
            "BT /F1 11 Tf\n"
            + "".join(f"1 0 0 1 72 {y} Tm ({t}) Tj\n" for (y, _), t in zip(lines, escaped, strict=False))
            + "ET\n"
        ).encode("latin-1")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources "
            f"<< /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>".encode()
        )
        objects.append(f"<< /Length {len(stream)} >>\nstream\n".encode() + stream + b"endstream")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += (f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n").encode()
    return bytes(out)


def test_pdf_text_and_domain(tmp_path):
    (tmp_path / "geology").mkdir()
    (tmp_path / "geology" / "rivers.pdf").write_bytes(_pdf([PAGE_1, PAGE_2]))
    (tmp_path / "note.txt").write_text("A plain note.\n", encoding="utf-8")
    docs = {d.id: d for d in load_folder(tmp_path)}
    assert sorted(docs) == ["geology/rivers.pdf", "note.txt"]
    doc = docs["geology/rivers.pdf"]
    assert doc.domain == "geology"
    # one line per text line, the pages separated by one blank line
    assert doc.text == "\n".join(t for _, t in PAGE_1) + "\n\n" + "\n".join(t for _, t in PAGE_2)
    assert doc.title == PAGE_1[0][1]


def test_pdf_title_and_domain_from_the_index(tmp_path):
    (tmp_path / "rivers.pdf").write_bytes(_pdf([PAGE_1]))
    (tmp_path / "index.tsv").write_text("file\tdomain\ttitle\nrivers.pdf\tearth\tRivers\n", encoding="utf-8")
    [doc] = load_folder(tmp_path)
    assert (doc.domain, doc.title) == ("earth", "Rivers")


def test_damaged_pdf_is_a_clear_error(tmp_path):
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not really a PDF\n")
    with pytest.raises(ValueError, match=r"cannot read .*broken\.pdf as a PDF"):
        load_folder(tmp_path)


def test_pdf_without_pypdf_says_how_to_install_it(tmp_path, monkeypatch):
    (tmp_path / "rivers.pdf").write_bytes(_pdf([PAGE_1]))
    monkeypatch.setitem(sys.modules, "pypdf", None)  # makes "import pypdf" fail
    with pytest.raises(ValueError, match=r"rivers\.pdf is a PDF .*pip install 'skate\[pdf\]'"):
        load_folder(tmp_path)

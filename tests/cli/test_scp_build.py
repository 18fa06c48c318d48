"""``skate scp build``: run as a subprocess on real folders, records checked from JSON alone.

The restore checks here deliberately do not import the library: they apply the issue's format
rules (sequencing, cloze, prediction) to the parsed records, as an outside user would.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

COMMON = (
    "id",
    "type",
    "domain",
    "doc",
    "position",
    "question",
    "options",
    "answer",
    "original",
    "doc_date",
    "doc_date_source",
    "built",
)
# The build date is this day (reproducible builds): files built around midnight still compare equal.
EPOCH = {"SOURCE_DATE_EPOCH": "1793750400"}  # 2026-11-04
BY_TYPE = {"sequencing": ("chunks",), "cloze": ("masked", "candidates"), "prediction": ("context",)}


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "skate", "scp", *args],
        capture_output=True,
        check=False,
        text=True,
        encoding="utf-8",
        cwd=cwd,
        timeout=120,
        env={**os.environ, **EPOCH},
    )


def norm(text: str) -> str:
    return " ".join(text.split())


def letters(option: str) -> list[int]:
    parts = option.split()
    assert sorted(parts) == ["A", "B", "C"], option
    return ["ABC".index(p) for p in parts]


def restore(rec: dict, option: str) -> str:
    """The text obtained by applying ``option`` to the record, by the issue's rules."""
    if rec["type"] == "sequencing":
        return " ".join(rec["chunks"][k] for k in letters(option))
    if rec["type"] == "cloze":
        filled = rec["masked"]
        for hole, k in enumerate(letters(option), start=1):
            filled = filled.replace(f"[MASK_{hole}]", rec["candidates"][k])
        return filled
    return option


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "bench.jsonl"
    proc = run("build", "shipped", "--out", str(out), "--per-doc", "4", "--seed", "0")
    assert proc.returncode == 0, proc.stderr
    return out, proc


def test_build_shipped_writes_sound_records(built):
    out, proc = built
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) >= 300
    records = [json.loads(line) for line in lines]
    assert len({r["id"] for r in records}) == len(records)
    for rec in records:
        for key in COMMON + BY_TYPE[rec["type"]]:
            assert key in rec, (rec["id"], key)
        assert isinstance(rec["position"], int)
        assert len(rec["options"]) == 4 and all(isinstance(o, str) for o in rec["options"])
        assert rec["answer"] in range(4)
        if rec["type"] == "cloze":
            assert re.findall(r"\[MASK_(\d+)\]", rec["masked"]) == ["1", "2", "3"]
            assert len(rec["candidates"]) == 3
        if rec["type"] == "sequencing":
            assert len(rec["chunks"]) == 3
        restored = [norm(restore(rec, opt)) == norm(rec["original"]) for opt in rec["options"]]
        assert restored.index(True) == rec["answer"] and sum(restored) == 1, rec["id"]
    assert {r["type"] for r in records} == set(BY_TYPE)
    # the dates a later export carries: each question's document (the PEP's Created header) and the build
    created = {}
    for path in (Path(__file__).resolve().parents[2] / "skate/games/scp/data/peps").glob("*.rst"):
        head = path.read_text(encoding="utf-8").split("\n\n", 1)[0]
        created[path.name] = re.search(r"^Created: (.+)$", head, re.MULTILINE)[1]
    assert {(r["doc_date_source"], r["built"]) for r in records} == {("header:Created", "2026-11-04")}
    for rec in records:
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", rec["doc_date"])
        day, month, year = created[rec["doc"]].split("-")
        assert rec["doc_date"].startswith(year) and rec["doc_date"].endswith(f"-{day}")
    summary = proc.stdout.strip().splitlines()
    assert len(summary) == 1
    dates = sorted(r["doc_date"] for r in records)
    for word in (
        "sequencing",
        "cloze",
        "prediction",
        str(out),
        f"documents dated {dates[0]} to {dates[-1]}",
        f"header:Created {len(records)}",
        "built 2026-11-04",
    ):
        assert word in summary[0]
    for domain in {r["domain"] for r in records}:
        assert domain in summary[0]


def test_same_seed_same_file_other_seed_different(built, tmp_path):
    out, _ = built
    again, other = tmp_path / "again.jsonl", tmp_path / "other.jsonl"
    assert run("build", "shipped", "--out", str(again), "--per-doc", "4").returncode == 0
    assert run("build", "shipped", "--out", str(other), "--per-doc", "4", "--seed", "1").returncode == 0
    assert again.read_bytes() == out.read_bytes()
    assert other.read_bytes() != out.read_bytes()


def test_types_and_unicode_from_own_folder(tmp_path):
    docs = tmp_path / "docs" / "rivers"
    docs.mkdir(parents=True)
    paras = [
        " ".join(
            f"Sentence {p}.{s} about the río, the delta and café-side erosion number "
            f"{p * 10 + s} keeps going for a while."
            for s in range(6)
        )
        for p in range(12)
    ]
    (docs / "delta.txt").write_text("\n\n".join(paras) + "\n", encoding="utf-8")
    out = tmp_path / "b.jsonl"
    proc = run("build", str(tmp_path / "docs"), "--out", str(out), "--types", "sequencing")
    assert proc.returncode == 0, proc.stderr
    text = out.read_text(encoding="utf-8")
    records = [json.loads(line) for line in text.splitlines()]
    assert records and {r["type"] for r in records} == {"sequencing"}
    assert {r["domain"] for r in records} == {"rivers"}
    assert "río" in text  # ensure_ascii=False


@pytest.mark.parametrize("case", ["missing", "empty", "unwritable", "per_doc", "types"])
def test_bad_input_exits_2_with_one_line(case, tmp_path):
    out = str(tmp_path / "b.jsonl")
    args = {
        "missing": ("build", str(tmp_path / "nope"), "--out", out),
        "empty": ("build", str(tmp_path), "--out", out),
        "unwritable": ("build", "shipped", "--out", str(tmp_path / "no" / "such" / "b.jsonl")),
        "per_doc": ("build", "shipped", "--out", out, "--per-doc", "0"),
        "types": ("build", "shipped", "--out", out, "--types", "sequencing,essay"),
    }[case]
    expected = {
        "missing": "not a folder",
        "empty": "no documents",
        "unwritable": "cannot write",
        "per_doc": "--per-doc must be at least 1",
        "types": "sequencing,cloze,prediction",
    }
    proc = run(*args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("skate.scp: "), proc.stderr
    assert expected[case] in lines[0]
    assert "Traceback" not in proc.stderr
    assert not Path(out).exists()


def test_arxiv_subcommand_says_when_arxiv_cannot_be_reached(tmp_path):
    proc = run(
        "arxiv",
        "--category",
        "cs.CL",
        "--from",
        "2026-05-01",
        "--to",
        "2026-06-01",
        "--out",
        str(tmp_path / "papers"),
        "--api-url",
        "http://127.0.0.1:9/api/query",
        "--delay",
        "0",
        "--timeout",
        "5",
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot reach the arXiv API" in lines[0] and "skate scp build DOCS_DIR" in lines[0]

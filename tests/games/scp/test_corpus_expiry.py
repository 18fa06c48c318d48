"""Benchmarks expire: every document has a date and its source, a built benchmark records its
documents' dates and its build date (JSONL and task events), and the game warns when questions
come from documents older than game.max_doc_age_days."""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import shutil

import pytest

import skate
from skate.games.scp import rules
from skate.games.scp.corpus import SHIPPED_DIR, load_folder, parse_date
from skate.games.scp.rules import SCPGame
from skate.players.config import SimPlayerConfig
from skate.runlog.files import read_events
from skate.runner import run_game
from skate.tools.scp.study import build_benchmark

TODAY = dt.datetime.now(dt.UTC).date()
OLD_PEP, FRESH_PEP = "pep-0616.rst", "pep-0602.rst"  # the first Created 19-Mar-2020; the other dated today


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch):
    """Each test sees its own warning (the game logs each one once per process)."""
    monkeypatch.setattr(rules, "_WARNED", set())


@pytest.fixture
def corpus(tmp_path):
    """An old PEP (dated by its Created header) and another PEP whose index.tsv row dates it today."""
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(SHIPPED_DIR / OLD_PEP, folder / "old.rst")
    shutil.copy(SHIPPED_DIR / FRESH_PEP, folder / "fresh.rst")
    (folder / "index.tsv").write_text(
        f"file\tdomain\tdate\nfresh.rst\tnews\t{TODAY}\nold.rst\tarchive\t\n", encoding="utf-8"
    )
    return folder


@pytest.mark.parametrize(
    "text, day",
    [
        ("2026-05-01", "2026-05-01"),
        ("2026-09-14T13:20:05Z", "2026-09-14"),
        ("13-Jul-2000", "2000-07-13"),
        ("13 July 2000", "2000-07-13"),
        ("July 13, 2000", "2000-07-13"),
        ("soon", None),
    ],
)
def test_dates_in_the_formats_documents_write_them(text, day):
    got = parse_date(text)
    assert (got.isoformat() if got else None) == day


def test_every_document_has_a_date_and_says_where_it_came_from(tmp_path):
    (tmp_path / "index.tsv").write_text(
        "file\tdomain\tdate\tsubmitted\na.txt\tx\t2026-10-01\t2020-01-01\npaper.txt\tcs.CL\t\t2026-09-14T13:20:05Z\n",
        encoding="utf-8",
    )
    for name in ("a.txt", "paper.txt"):
        (tmp_path / name).write_text("Some prose.\n", encoding="utf-8")
    (tmp_path / "pep.rst").write_text(
        "PEP: 9\nTitle: T\nAuthor: A,\n  B\nCreated: 05-Jul-2001\n\nBody.\n", encoding="utf-8"
    )
    (tmp_path / "post.md").write_text("---\ntitle: x\ndate: 2025-01-02\n---\n\n# Post\n\nBody.\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("Created: by hand\n\nNo header date here.\n", encoding="utf-8")
    stamp = dt.datetime(2024, 3, 5, 12, tzinfo=dt.UTC).timestamp()
    os.utime(tmp_path / "notes.txt", (stamp, stamp))
    got = {d.id: (d.date, d.date_source) for d in load_folder(tmp_path)}
    assert got == {
        "a.txt": ("2026-10-01", "index.tsv:date"),
        "paper.txt": ("2026-09-14", "index.tsv:submitted"),
        "pep.rst": ("2001-07-05", "header:Created"),
        "post.md": ("2025-01-02", "header:date"),
        "notes.txt": ("2024-03-05", "mtime"),
    }


def test_an_index_date_that_is_no_date_names_the_file(tmp_path):
    (tmp_path / "index.tsv").write_text("file\tdomain\tdate\na.txt\tx\tlast week\n", encoding="utf-8")
    (tmp_path / "a.txt").write_text("Some prose.\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"a\.txt has date 'last week', which is not a date"):
        load_folder(tmp_path)


def test_a_game_on_old_documents_warns_and_its_task_events_carry_the_dates(corpus, tmp_path, caplog):
    cfg = skate.config(
        values={
            "game.docs": str(corpus),
            "game.rounds": 1,
            "game.per_doc": 1,
            "report": False,
            "players.simulated": [SimPlayerConfig(name="hi", skill=0.8), SimPlayerConfig(name="lo", skill=0.4)],
        },
        game="scp",
        estimator="greedy",
        rating="elo",
        logger="none",
    )
    with caplog.at_level(logging.WARNING, logger="skate"):
        run_game(cfg, tmp_path / "run")
    tasks = [e for e in read_events(tmp_path / "run") if e["event"] == "task"]
    old = [t for t in tasks if t["doc"] == "old.rst"]
    assert old and len(old) < len(tasks)
    for t in tasks:
        assert t["built"] == TODAY.isoformat()
        if t["doc"] == "old.rst":
            assert (t["doc_date"], t["doc_date_source"], t["expired"]) == ("2020-03-19", "header:Created", True)
        else:
            assert (t["doc_date"], t["doc_date_source"]) == (TODAY.isoformat(), "index.tsv:date")
            assert "expired" not in t
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warning.startswith(
        f"game=scp: {len(old)} of {len(tasks)} questions come from documents more than 183 days old on {TODAY}"
    )
    assert f"documents dated 2020-03-19 to {TODAY}" in warning and "game.max_doc_age_days=null" in warning


def test_the_check_can_be_moved_or_turned_off(corpus, caplog):
    with caplog.at_level(logging.WARNING, logger="skate"):
        off = SCPGame(docs=str(corpus), rounds=1, per_doc=1, max_doc_age_days=None)
        far = SCPGame(docs=str(corpus), rounds=1, per_doc=1, max_doc_age_days=100_000)
    assert not caplog.records and off.expired == far.expired == set()
    assert all("expired" not in t.data and t.data["doc_date"] for t in off.provided_tasks(1))
    cfg = skate.preset("scp", "game", values={"max_doc_age_days": 0})
    assert ("max_doc_age_days", 0, "must be >= 1 (days), or null for no check") in SCPGame.check_config(cfg)


def test_the_shipped_corpus_says_it_is_the_demo_corpus(caplog):
    with caplog.at_level(logging.WARNING, logger="skate"):
        SCPGame(mode="player_set")
        SCPGame(mode="player_set")  # once per process
    (record,) = caplog.records
    assert record.getMessage().startswith(
        "game=scp: game.docs=shipped is skate's demo corpus of Python Enhancement "
        "Proposals, public for years: 46 of 46 documents of the corpus are more "
        "than 183 days old"
    )


def test_a_benchmark_file_keeps_the_dates_it_was_built_with(corpus, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1793750400")  # 2026-11-04
    bench = tmp_path / "bench.jsonl"
    summary = build_benchmark(str(corpus), bench, per_doc=1)
    assert f"documents dated 2020-03-19 to {TODAY} (header:Created " in summary and "built 2026-11-04" in summary
    records = [json.loads(line) for line in bench.read_text(encoding="utf-8").splitlines()]
    assert {r["built"] for r in records} == {"2026-11-04"}
    # played against another corpus: the dates are the file's
    game = SCPGame(benchmark=str(bench), rounds=1, max_doc_age_days=None)
    by_id = {r["id"]: r for r in records}
    for t in game.provided_tasks(1):
        record = by_id[t.data["question_id"]]
        assert {k: t.data[k] for k in rules.DATE_FIELDS} == {k: record[k] for k in rules.DATE_FIELDS}
    # a file written before benchmarks recorded dates: the game's corpus dates its documents, by id
    bare = tmp_path / "bare.jsonl"
    bare.write_text(
        "".join(json.dumps({k: v for k, v in r.items() if k not in rules.DATE_FIELDS}) + "\n" for r in records),
        encoding="utf-8",
    )
    game = SCPGame(benchmark=str(bare), docs=str(corpus), rounds=1)
    tasks = game.provided_tasks(1)
    assert {t.data["doc"]: (t.data["doc_date"], "built" in t.data, t.data.get("expired", False)) for t in tasks} == {
        "old.rst": ("2020-03-19", False, True),
        "fresh.rst": (TODAY.isoformat(), False, False),
    }

"""replies.jsonl: every model call's reply tied to the task or attempt it served, every player's
graded samples, what each setter was shown; the same after a resume; nothing when turned off."""

from __future__ import annotations

import collections
import json

import pytest

import skate
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.players.config import LLMPlayerConfig
from skate.runlog.files import read_events
from skate.runlog.replies import (
    REPLIES_FILE,
    ReplyLog,
    answer_tables,
    iter_replies,
    pack_samples,
    scope,
    unpack_samples,
)
from skate.runner import resume_settings, run_game

MODELS = {"ace": FakeModel(0.9), "mid": FakeModel(0.5, thinking="reasoning_content"), "low": FakeModel(0.2)}


def cohort(base):
    return [LLMPlayerConfig(name=n, model=f"hosted_vllm/{n}", api_base=base) for n in MODELS]


def settings(base, cache, values):
    return skate.config(
        values={
            "report": False,
            "players.simulated": [],
            "players.llm": cohort(base),
            "estimator.n": 3,
            "llm.cache_dir": str(cache),
            "llm.structured": "off",
            **values,
        },
        logger="none",
        estimator="fixed_n",
    )


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """A 3-round game of the fake server's models; and the same game stopped after 2 rounds and
    resumed to 3."""
    tmp = tmp_path_factory.mktemp("replies")
    with FakeLLMServer(MODELS) as srv:
        run_game(settings(srv.api_base, tmp / "c1", {"game.rounds": 3}), tmp / "whole")
        run_game(settings(srv.api_base, tmp / "c2", {"game.rounds": 2}), tmp / "resumed")
        run_game(resume_settings(tmp / "resumed", {"game.rounds": 3}), tmp / "resumed", resume=True)
    return tmp


def kinds(run):
    out = collections.defaultdict(list)
    for r in iter_replies(run):
        out[r["kind"]].append(r)
    return out


def test_every_estimate_has_its_samples_and_every_sample_its_reply(played):
    run = played / "whole"
    events = read_events(run)
    got = kinds(run)
    tables = answer_tables(got["value"])
    drawn = {(a["task"], a["player"]): len(unpack_samples(a, tables[a["task"]])) for a in got["answers"]}
    assert len(drawn) == len(got["answers"])  # one line an estimate
    estimates = {(e["task_id"], e["player"]): e["n"] for e in events if e["event"] == "estimate"}
    assert drawn == estimates and sum(drawn.values()) > 0
    replies = {
        (r["task"], r["answerer"], r["call"], r["index"]): r
        for r in got["reply"]
        if r["purpose"] == "answer" and "task" in r
    }
    for a in got["answers"]:
        for s in unpack_samples(a, tables[a["task"]]):
            reply = replies[(a["task"], a["player"], s["call"], s["index"])]
            assert reply["player"] == a["player"] and reply["text"]  # the text the sample was read from
            assert s["answer"] is None or s["answer"] in tables[a["task"]]
    # the thinker's thinking is kept apart from its text
    thought = [r for r in got["reply"] if r["player"] == "mid"]
    assert thought and all("thinking" in r and r["thinking"] not in r["text"] for r in thought)
    assert not any("thinking" in r for r in got["reply"] if r["player"] != "mid")


def test_every_attempt_has_its_setting_reply_and_every_setter_what_it_was_shown(played):
    run = played / "whole"
    events = read_events(run)
    got = kinds(run)
    attempts = collections.Counter((e["round"], e["player"]) for e in events if e["event"] == "attempt")
    set_calls = collections.Counter((r["round"], r["setter"]) for r in got["reply"] if r["purpose"] == "set")
    assert set_calls == attempts
    shown = {(s["round"], s["player"]) for s in got["shown"]}
    assert shown == {(rnd, p) for rnd in (1, 2, 3) for p in MODELS}
    later = [s for s in got["shown"] if s["round"] == 3]
    tasks = {e["task_id"] for e in events if e["event"] == "task"}
    assert any(s["history"] for s in later) and all(h["task"] in tasks for s in later for h in s["history"])


def test_a_resumed_run_keeps_the_same_replies(played):
    def content(run):
        """Every line, cache hits or not, answers as their texts (a task's table numbers them by
        which player answered first)."""
        lines = list(iter_replies(run))
        tables = answer_tables(lines)
        out = collections.Counter()
        for r in lines:
            r.pop("cached", None)
            if r["kind"] == "value":
                continue
            if r["kind"] == "answers":
                r = {"task": r["task"], "player": r["player"], "samples": unpack_samples(r, tables[r["task"]])}
            out[json.dumps(r, sort_keys=True)] += 1
        return out

    assert content(played / "resumed") == content(played / "whole")
    assert (played / "resumed" / "replies.interrupted-1.jsonl").exists()  # what the first run wrote, kept


def test_replies_are_not_kept_when_turned_off(tmp_path):
    with FakeLLMServer(MODELS) as srv:
        run_game(settings(srv.api_base, tmp_path / "c", {"game.rounds": 1, "events.replies": False}), tmp_path / "run")
    assert not (tmp_path / "run" / REPLIES_FILE).exists()
    assert (tmp_path / "run" / "events.jsonl").exists()


def test_samples_pack_and_unpack():
    views = [
        {"ok": True, "answer": "B", "call": 0, "index": 0},
        {"ok": False, "answer": "C", "call": 0, "index": 1},
        {"ok": None, "answer": None, "call": 0, "index": 2},
        {"ok": "void", "call": 0, "index": 3},
    ]
    table = {"A": 0, "B": 1, "C": 2}
    packed = pack_samples(views, table)
    assert packed == {"ok": "10uv", "answer": "12--", "call": 0}
    assert unpack_samples(packed, list(table)) == [{**v, "answer": v.get("answer")} for v in views]
    two_calls = [
        {"ok": True, "answer": "A", "call": 0, "index": 0},
        {"ok": True, "answer": "A", "call": 1, "index": 0},
        {"ok": False, "answer": "B", "call": 1, "index": 1},
    ]
    assert pack_samples(two_calls, table) == {"ok": "110", "answer": "001", "call": [[0, 1], [1, 2]]}
    many = {str(k): k for k in range(100)}  # more answers than one character numbers
    assert pack_samples([{"ok": True, "answer": "99"}, {"ok": False, "answer": None}], many)["answer"] == [99, None]
    assert [s["answer"] for s in unpack_samples(pack_samples([{"ok": True, "answer": "99"}], many), list(many))] == [
        "99"
    ]
    assert unpack_samples(pack_samples(two_calls, table), list(table)) == two_calls
    sessions = [
        {"ok": True, "answer": "A", "calls": [[0, 0], [1, 0]], "tries": [{"input": "x"}]},
        {"ok": False, "answer": None, "calls": [[0, 1]], "tries": []},
    ]

    def given(views):
        return [{k: v for k, v in s.items() if v is not None} for s in views]

    assert given(unpack_samples(pack_samples(sessions, table), list(table))) == given(sessions)


def test_each_task_s_answers_are_written_once_before_they_are_used(tmp_path):
    log = ReplyLog(tmp_path / REPLIES_FILE)
    log.answers("t1", "a", [{"ok": True, "answer": "4"}, {"ok": False, "answer": "5"}])
    log.answers("t1", "b", [{"ok": False, "answer": "5"}, {"ok": False, "answer": "6"}])
    log.answers("t2", "a", [{"ok": True, "answer": "5"}])
    log.close()
    lines = list(iter_replies(tmp_path))
    assert [(r["kind"], r.get("text")) for r in lines] == [
        ("value", "4"),
        ("value", "5"),
        ("answers", None),
        ("value", "6"),
        ("answers", None),
        ("value", "5"),
        ("answers", None),
    ]
    tables = answer_tables(lines)
    assert tables == {"t1": ["4", "5", "6"], "t2": ["5"]}
    assert [s["answer"] for s in unpack_samples(lines[4], tables["t1"])] == ["5", "6"]


def test_a_reply_carries_the_scope_it_was_written_in(tmp_path):
    log = ReplyLog(tmp_path / REPLIES_FILE)
    with scope(round=2, setter="a"):
        with scope(attempt=1):
            log.reply({"player": "a", "text": "hi", "thinking": None, "cached": False})
        log.reply({"player": "a", "text": "again"})
    log.close()
    first, second = iter_replies(tmp_path)
    assert first == {"kind": "reply", "round": 2, "setter": "a", "attempt": 1, "player": "a", "text": "hi"}
    assert second == {"kind": "reply", "round": 2, "setter": "a", "player": "a", "text": "again"}
    log = ReplyLog(tmp_path / "b.jsonl")
    log.reply({"player": "a", "text": "", "void": "timeout"})  # an empty or void reply keeps its (empty) text
    log.close()
    assert json.loads((tmp_path / "b.jsonl").read_text()) == {
        "kind": "reply",
        "player": "a",
        "text": "",
        "void": "timeout",
    }

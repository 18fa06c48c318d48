"""What real models do to the format, shown by the fake server's faults, and what the game does
with each: replies cut at the token limit (``cut``), empty replies (``empty``) and prose around
the fields (``prose``), with structured output and without. Whole games over loopback HTTP."""

from __future__ import annotations

import json
import logging

import pytest

from skate.llm import plain
from skate.llm.fake_replies import cut_in_half, wrap_in_prose
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.runlog.files import read_events
from skate.runner import run_game
from tests.conftest import REQUIRED_SANDBOXES  # noqa: F401  (same sandbox rules as every game)
from tests.llm.conftest import RecordingServer, llm_config
from tests.llm.test_llm_structured import cop_answerer

MODES = ["auto", "off"]  # structured output, and the text format


def _play(tmp_path, fault, mode, replay=False):
    """A 2-round COP game in which ``low`` shows ``fault`` on every reply; with ``replay``, the
    same game again from the response cache (the number of requests it made is returned)."""
    faults = {fault: 1.0} if fault else {}
    models = {"ace": FakeModel(0.9), "mid": FakeModel(0.6), "low": FakeModel(0.3, faults)}
    with FakeLLMServer(models) as srv:
        run = tmp_path / f"run-{fault}-{mode}"
        cfg = llm_config(
            srv.api_base,
            tmp_path / f"cache-{fault}-{mode}",
            {"game.rounds": 2, "estimator.n": 4, "llm.structured": mode},
        )
        run_game(cfg, run)
        if replay:
            before = srv.stats.requests
            run_game(cfg, tmp_path / f"again-{fault}-{mode}")
            return (
                srv,
                run,
                read_events(run),
                srv.stats.requests - before,
                read_events(tmp_path / f"again-{fault}-{mode}"),
            )
    return srv, run, read_events(run)


def _of(events, kind, player):
    return [e for e in events if e["event"] == kind and e.get("player", e.get("setter")) == player]


@pytest.mark.parametrize("mode", MODES)
def test_replies_cut_at_the_token_limit_are_unparsable_answers_and_rejected_attempts(mode, tmp_path):
    srv, run, events, asked, again = _play(tmp_path, "cut", mode, replay=True)
    assert srv.stats.by_fault["cut"] > 0
    est = _of(events, "estimate", "low")
    assert est and all(e["unparsable"] == e["n"] == 4 and e["p"] == 0 for e in est)  # every cut answer: wrong
    attempts = _of(events, "attempt", "low")
    assert attempts and not any(a["valid"] for a in attempts) and not _of(events, "task", "low")
    assert all(
        a["reason"] == "malformed" and "cut off at the length limit" in a["detail"] and "max_tokens=2048" in a["detail"]
        for a in attempts
    )
    others = [e for e in events if e["event"] == "estimate" and e["player"] != "low"]
    assert others and all(e["unparsable"] == 0 for e in others)
    usage = json.loads((run / "usage.json").read_text())["players"]
    assert usage["low"]["cut"] == usage["low"]["calls"] > 0 and usage["ace"]["cut"] == 0
    # the finish reason is cached with the text: a replay reads the cut replies as cut
    assert asked == 0  # all from the cache
    assert [e["unparsable"] for e in _of(again, "estimate", "low")] == [e["unparsable"] for e in est]
    assert [a["detail"] for a in _of(again, "attempt", "low")] == [a["detail"] for a in attempts]


@pytest.mark.parametrize("mode", MODES)
def test_empty_replies_are_unparsable_rejected_and_logged_never_a_crash(mode, tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="skate.llm.client"):
        srv, run, events = _play(tmp_path, "empty", mode)
    assert srv.stats.by_fault["empty"] > 0 and [e for e in events if e["event"] == "run_end"]
    est = _of(events, "estimate", "low")
    assert est and all(e["unparsable"] == e["n"] and e["void"] == 0 for e in est)
    attempts = _of(events, "attempt", "low")
    assert attempts and all(a["reason"] == "malformed" and "the reply was empty" in a["detail"] for a in attempts)
    usage = json.loads((run / "usage.json").read_text())["players"]
    assert usage["low"]["empty"] == usage["low"]["calls"] > 0 and usage["mid"]["empty"] == 0
    warned = [r.getMessage() for r in caplog.records if "empty reply" in r.getMessage()]
    assert len(warned) == 1 and warned[0].startswith("low (openai/low)") and "chat template" in warned[0]


@pytest.mark.parametrize("mode", MODES)
def test_prose_around_the_fields_is_read_as_if_it_were_not_there(mode, tmp_path):
    srv, _, chatty = _play(tmp_path, "prose", mode)
    _, _, plain = _play(tmp_path, None, mode)
    assert srv.stats.by_fault["prose"] > 0
    assert (srv.stats.structured > 0) is (mode == "auto")

    def seen(events):
        return sorted((e["task_id"], e["player"], e["p"], e["unparsable"]) for e in events if e["event"] == "estimate")

    assert seen(chatty) == seen(plain) and seen(chatty)
    assert all(e[3] == 0 for e in seen(chatty))
    assert [e["prompt"] for e in chatty if e["event"] == "task"] == [e["prompt"] for e in plain if e["event"] == "task"]
    assert len(_of(chatty, "task", "low")) == 2  # its wrapped tasks were read and accepted


def test_the_faults_shapes():
    whole = '{"answer": "B"}'
    assert cut_in_half(whole) == '{"answe' and cut_in_half("x") == ""
    wrapped = wrap_in_prose(whole, json_reply=True)
    assert wrapped.startswith("Sure!") and f"```json\n{whole}\n```" in wrapped and wrapped.endswith("else.")
    assert cop_answerer(4).read_reply(wrapped) == 1
    text = "[[ ## answer ## ]]\nB\n\n[[ ## completed ## ]]"
    assert cop_answerer(4).read_reply(wrap_in_prose(text, json_reply=False)) == 1


def test_a_cut_reply_whose_fields_were_complete_is_still_read():
    """A model that finished its fields and went on writing until max_tokens: its answer stands."""
    mc = cop_answerer(4)
    assert mc.finished("[[ ## answer ## ]]\nB\n\n[[ ## completed ## ]]\nAnd another thing: the loop")
    assert mc.finished('{"answer": "B"} and then some more words that were cut')
    assert not mc.finished("[[ ## answer ## ]]\nB")  # no completed marker: perhaps "B or C"


# ------------------------------------------------------------- what real small models did
SLIPS = ("uncalled", "placeholder", "unclosed_fence", "echo")


@pytest.fixture(scope="module")
def slips(tmp_path_factory):
    """One 2-round COP game: ``ace`` plays well, and each of the other four shows one slip on
    every reply (what real small models did to the plain format)."""
    tmp = tmp_path_factory.mktemp("slips")
    models = {"ace": FakeModel(0.9), **{f: FakeModel(0.6, {f: 1.0}) for f in SLIPS}}
    with FakeLLMServer(models) as srv:
        cfg = llm_config(srv.api_base, tmp / "cache", {"game.rounds": 2, "estimator.n": 2}, names=("ace", *SLIPS))
        run_game(cfg, tmp / "run")
    return srv, read_events(tmp / "run")


def test_a_program_never_called_is_rejected_saying_so_and_asked_again(slips):
    srv, events = slips
    attempts = _of(events, "attempt", "uncalled")
    assert attempts and not _of(events, "task", "uncalled")
    assert all(
        a["reason"] == "not_verifiable"
        and "it defines main() but never calls it" in a["detail"]
        and "main()" in a["detail"].rsplit("e.g.", 1)[1]
        for a in attempts
    )
    assert max(a["attempt"] for a in attempts) == 3  # every attempt of the round used (and read: a repair turn)
    assert len(_of(events, "task", "ace")) == 2  # the others unaffected


def test_placeholder_items_leave_too_few_wrong_answers(slips):
    attempts = _of(slips[1], "attempt", "placeholder")
    assert attempts and all(
        a["reason"] == "too_few_distractors" and "only 1 distinct wrong options" in a["detail"] for a in attempts
    )


def test_fields_written_inside_the_programs_fence_are_still_read(slips):
    srv, events = slips
    assert srv.stats.by_fault["unclosed_fence"] > 0
    assert len(_of(events, "task", "unclosed_fence")) == 2


def test_a_model_that_echoes_its_request_is_stopped_and_rejected(slips):
    """A setter's reply that begins copying the request's sections ends there (a stop sequence,
    no token spent on the copy) and is rejected saying so."""
    events = slips[1]
    attempts = _of(events, "attempt", "echo")
    assert attempts and all(
        a["reason"] == "malformed" and "it wrote nothing before it began to copy the request" in a["detail"]
        for a in attempts
    )
    est = _of(events, "estimate", "echo")
    assert est and all(e["unparsable"] == e["n"] for e in est)  # echoed answers are unreadable


def test_a_setter_that_sends_the_same_task_every_round_sets_it_once(tmp_path):
    """``repeat``: the Qwen 1.5B sent its one valid COP program again round after round, whatever
    its history showed. The first is a task; every later attempt is not unique."""
    srv, _, events = _play(tmp_path, "repeat", "off")
    assert srv.stats.by_fault["repeat"] > 0
    tasks, attempts = _of(events, "task", "low"), _of(events, "attempt", "low")
    assert len(tasks) == 1 and tasks[0]["round"] == 1
    later = [a for a in attempts if a["round"] == 2]
    assert later and all(a["reason"] == "not_unique" for a in later)
    assert len({a["text"] for a in attempts}) == 1  # the same program every time
    assert len(_of(events, "task", "ace")) == 2


@pytest.mark.parametrize("repair", ["show", "resample"])
def test_a_setter_that_resends_its_rejected_task_is_asked_anew_with_setter_repair_resample(repair, tmp_path):
    """``resend``: shown a rejection and its own reply, the cohort sent the reply back word for word,
    so every repair turn failed as the first attempt had. ``setter_repair=resample`` asks the
    round's request anew instead: no repair turn to copy, a fresh program each attempt."""
    models = {"ace": FakeModel(0.9), "low": FakeModel(0.3, {"uncalled": 0.7, "resend": 0.3})}
    with RecordingServer(models) as srv:  # (8 rounds: some first attempt fails, whatever order the draws come in)
        cfg = llm_config(
            srv.api_base,
            tmp_path / "cache",
            {"game.rounds": 8, "estimator.n": 1, "players.llm.1.setter_repair": repair},
            names=("ace", "low"),
        )
        run_game(cfg, tmp_path / "run")
    attempts = _of(read_events(tmp_path / "run"), "attempt", "low")
    previous = {(a["round"], a["attempt"]): a["text"] for a in attempts}
    repaired = [a for a in attempts if a["attempt"] > 1]
    assert repaired
    resent = [a for a in repaired if a["text"] == previous[(a["round"], a["attempt"] - 1)]]
    repair_turns = [u for u in srv.users if u.startswith(plain.REPAIR_PREFIX)]
    if repair == "show":
        assert repair_turns  # shown its rejection, it sent the same program back or failed anew
        assert not any(a["valid"] for a in repaired)
    else:
        assert not repair_turns and not resent  # asked anew: each attempt a program of its own

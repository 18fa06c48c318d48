"""A game of three language-model players whose server is killed mid-game (issue 49): back after
a pause longer than the retry budget, the game goes on with no void call and plays as though it
had never gone; down for longer than ``llm.outage_wait_s``, the run stops cleanly (one line, exit
status 75) and ``resume=`` completes it as the uninterrupted game; a signal while it waits stops
the run at once."""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path

import pytest

from skate.cli.play import resume
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.report.console import OUTAGE_STATUS, print_summary
from skate.runlog.files import played_events, read_events
from skate.runner import Signals, run_game, stop_on_signals
from tests.llm.conftest import SKILLS, llm_config

# A small retry budget (a few hundredths of a second): the outage is a second or less here, as
# what happens past the retries does not depend on how long the server stays down.
GAME = {"game.rounds": 4, "estimator.n": 2, "seed": 3, "llm.max_retries": 1}  # of game="mathquiz"


def ratings(run: Path) -> list[dict]:
    return json.loads((run / "ratings.json").read_text())


@pytest.fixture(scope="module")
def server():
    with FakeLLMServer({n: FakeModel(s) for n, s in SKILLS.items()}) as srv:
        yield srv


@pytest.fixture(scope="module")
def reference(server, tmp_path_factory) -> tuple[Path, int]:
    """The game played with no outage, and the requests it took."""
    run = tmp_path_factory.mktemp("reference") / "run"
    before = server.stats.requests
    run_game(llm_config(server.api_base, run.parent / "cache", GAME, game="mathquiz"), run)
    return run, server.stats.requests - before


def kill_after(srv: FakeLLMServer, requests: int) -> threading.Thread:
    """Stop the server once it has taken ``requests`` more requests (mid-game)."""
    target = srv.stats.requests + requests

    def watch():
        while srv.stats.requests < target:
            time.sleep(0.001)
        srv.stop()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def outages(run: Path) -> list[tuple[str, str]]:
    return [(e["state"], e["model"]) for e in read_events(run) if e["event"] == "llm_outage"]


def once_found_down(run: Path, then) -> threading.Thread:
    """``then()`` once the run's log has an outage (the server down past the retry budget)."""

    def watch():
        log, deadline = run / "events.jsonl", time.monotonic() + 30  # (a bound that only catches a hang)
        while not (log.exists() and '"llm_outage"' in log.read_text()) and time.monotonic() < deadline:
            time.sleep(0.005)
        then()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_a_server_killed_mid_game_and_back_is_waited_for_with_no_void_call(server, reference, tmp_path):
    ref, requests = reference
    run = tmp_path / "run"
    kill_after(server, requests // 3)  # in the second of four rounds
    restarter = once_found_down(run, server.start)  # so the pause outlasts the retry budget
    result = run_game(llm_config(server.api_base, tmp_path / "cache", GAME, game="mathquiz"), run)
    restarter.join()
    events = read_events(run)
    assert result.summary.stopped is None and events[-1]["event"] == "run_end"
    assert result.summary.usage["total"]["void"] == 0 and result.summary.void_samples == 0
    assert not [e for e in events if e["event"] == "llm_void"]
    found = outages(run)
    assert ("down", found[0][1]) == found[0]
    assert {m for s, m in found if s == "down"} == {m for s, m in found if s == "up"}  # each came back
    assert "gave_up" not in {s for s, _ in found}
    assert played_events(run) == played_events(ref)
    assert ratings(run) == ratings(ref)


def test_a_server_down_past_the_wait_stops_the_run_in_one_line_and_resume_completes_the_game(
    server, reference, tmp_path, capsys
):
    ref, requests = reference
    run = tmp_path / "run"
    kill_after(server, requests // 3)  # and left down
    cfg = llm_config(server.api_base, tmp_path / "cache", {**GAME, "llm.outage_wait_s": 0.2}, game="mathquiz")
    try:
        result = run_game(cfg, run)
        assert result.summary.stopped.startswith("ModelUnreachable: ")
        assert print_summary(result, run, print_table=False) == OUTAGE_STATUS == 75
        # Resumed while the server is still down: the calls made before the stop come from the
        # cache, then the run stops again, as the command line says it.
        capsys.readouterr()
        assert resume(str(run), []) == OUTAGE_STATUS
        lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("skate:")]
        # With the preflight on, a model still down stops the resume before it plays: the same
        # exit status and command, not a config error.
        assert resume(str(run), ["llm.preflight=true"]) == OUTAGE_STATUS
        checked = capsys.readouterr().err.strip().splitlines()
    finally:
        server.start()
    assert len(checked) == 3 and checked[0].startswith("skate: player ")  # one line per model
    assert "config error" not in " ".join(checked)
    assert all("cannot reach" in x for x in checked)
    assert checked[-1].endswith(f"resume with: skate resume={run} once it answers")
    assert len(lines) == 1
    line = lines[0]
    assert "openai/" in line and f"at {server.api_base} did not answer for " in line
    assert "llm.outage_wait_s=0.2" in line
    assert line.endswith(f"Resume with: skate resume={run} once it answers")
    assert [s for s, _ in outages(run)].count("gave_up") == 2
    before = server.stats.requests
    assert resume(str(run), ["llm.outage_wait_s=30"]) == 0  # the server is back (the wait may change)
    assert server.stats.requests - before < requests  # the calls made before the stops came from the cache
    events = read_events(run)
    assert events[-1]["event"] == "run_end" and not [e for e in events if e["event"] == "llm_void"]
    assert played_events(run) == played_events(ref)
    assert ratings(run) == ratings(ref)
    # The replay went past the outages recorded before the stops, neither comparing nor cutting them.
    assert [s for s, _ in outages(run)].count("gave_up") == 2


def test_a_signal_while_a_model_is_down_stops_the_run_at_once(server, reference, tmp_path):
    """Ctrl-C while calls wait for a model (the setters' calls of round 1 here): they end with the
    run, not when the wait is up."""
    run = tmp_path / "run"
    server.stop()
    once_found_down(run, lambda: signal.pthread_kill(threading.main_thread().ident, signal.SIGINT))
    cfg = llm_config(server.api_base, tmp_path / "cache", {**GAME, "llm.outage_wait_s": 30}, game="mathquiz")
    try:
        with stop_on_signals():
            result = run_game(cfg, run)
    finally:
        Signals.received = None
        server.start()
    assert result.summary.stopped == "Interrupted: stopped by SIGINT"
    found = {s for s, _ in outages(run)}
    assert found == {"down"}  # neither back nor given up: the held calls ended with the run
    assert read_events(run)[-1]["event"] == "run_end"

"""Stopping, crashing and resuming (issue 14): signals stop a game cleanly, and a resumed run's
events and ratings equal those of an uninterrupted run with the same seed."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skate.cli.compose import compose_config
from skate.cli.play import resume
from skate.ratings.trueskill_backend import TrueSkillRating
from skate.runlog.files import EventLog, LogWriteError, comparable, format_table
from skate.runner import run_game
from skate.settings.options import build_settings

ROOT = Path(__file__).resolve().parents[2]
GAME = ["game=mathquiz", "game.rounds=4", "logger=none", "report=false", "seed=5"]


def events(run: Path) -> list[dict]:
    return [comparable(json.loads(line)) for line in (run / "events.jsonl").read_bytes().splitlines()]


def ratings(run: Path) -> list[dict]:
    return json.loads((run / "ratings.json").read_text())


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("ref") / "run"
    run_game(build_settings(compose_config(GAME)), run)
    return run


@pytest.fixture(scope="module")
def short_reference(tmp_path_factory) -> Path:
    """GAME over two rounds: the ten resumes below each replay the game, so a short one."""
    run = tmp_path_factory.mktemp("shortref") / "run"
    run_game(
        build_settings(compose_config([*(o for o in GAME if not o.startswith("game.rounds=")), "game.rounds=2"])), run
    )
    return run


def test_killed_at_ten_random_points_and_resumed_gives_the_uninterrupted_run(short_reference, tmp_path):
    """A SIGKILL (or a power loss) leaves a prefix of the log, possibly with a torn last line:
    cut the reference log at ten random bytes (in both rounds) and resume each."""
    reference = short_reference
    raw = (reference / "events.jsonl").read_bytes()
    first_line = raw.index(b"\n") + 1
    rnd = random.Random(14)
    cuts = sorted(rnd.randrange(first_line, len(raw)) for _ in range(10))
    torn = 0
    for k, cut in enumerate(cuts):
        run = tmp_path / f"kill{k}"
        run.mkdir()
        (run / "events.jsonl").write_bytes(raw[:cut])
        torn += not raw[:cut].endswith(b"\n")
        assert resume(str(run), []) == 0
        assert events(run) == events(reference), f"cut at byte {cut}"
        assert ratings(run) == ratings(reference)
        # what the killed run had written is kept beside the log
        assert (run / "events.interrupted-1.jsonl").read_bytes() == raw[:cut]
    assert torn >= 8  # almost every cut tears a line


def test_a_real_sigkill_then_resume_from_the_command_line(reference, tmp_path):
    run = tmp_path / "run"
    cmd = [sys.executable, "-m", "skate", *GAME, f"hydra.run.dir={run}"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log = run / "events.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and not (log.exists() and log.read_text().count('"round_end"') >= 1):
        time.sleep(0.05)
    proc.kill()
    proc.wait(timeout=30)
    if "run_end" in log.read_text():
        pytest.skip("the game finished before it could be killed")
    res = subprocess.run(
        [sys.executable, "-m", "skate", f"resume={run}"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert events(run) == events(reference)
    assert ratings(run) == ratings(reference)


SIGNALLED = ["game=mathquiz", "game.rounds=12", "logger=none", "seed=2"]  # the report on: a stop writes it


@pytest.fixture(scope="module")
def signalled_reference(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("sigref") / "run"
    run_game(build_settings(compose_config(SIGNALLED)), run)
    return run


def _start(run: Path, rounds: int = 12, extra: tuple[str, ...] = ()) -> subprocess.Popen:
    cmd = [
        sys.executable,
        "-m",
        "skate",
        *SIGNALLED[:1],
        f"game.rounds={rounds}",
        *SIGNALLED[2:],
        *extra,
        f"hydra.run.dir={run}",
    ]
    # A background job of a non-interactive shell ignores SIGINT; give the child the default.
    return subprocess.Popen(
        cmd,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _after_rounds(run: Path, proc: subprocess.Popen, n: int) -> None:
    log = run / "events.jsonl"
    deadline = time.time() + 180
    while time.time() < deadline and proc.poll() is None:
        if log.exists() and log.read_text().count('"round_end"') >= n:
            return
        time.sleep(0.1)
    pytest.fail("the game did not reach the round in time")


def test_sigint_stops_cleanly_and_the_run_resumes_to_the_same_end(tmp_path, signalled_reference):
    run = tmp_path / "run"
    proc = _start(run)
    _after_rounds(run, proc, 1)
    sent = time.time()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    assert time.time() - sent < 60
    assert "Traceback" not in err
    line = [ln for ln in err.splitlines() if ln.startswith("skate: ")]
    assert len(line) == 1 and "stopped by SIGINT" in line[0] and f"resume={run}" in line[0]
    kinds = [json.loads(ln)["event"] for ln in (run / "events.jsonl").read_text().splitlines()]
    assert kinds[-2:] == ["run_stopped", "run_end"]
    assert (run / "ratings.json").exists() and (run / "report" / "index.html").exists()
    # resumed, it ends as the same game played without a stop
    assert resume(str(run), []) == 0
    assert events(run) == events(signalled_reference)
    assert ratings(run) == ratings(signalled_reference)


def test_sigterm_stops_cleanly_with_status_143(tmp_path):
    run = tmp_path / "run"
    proc = _start(run, extra=("report=false",))
    _after_rounds(run, proc, 1)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err[-2000:]
    assert "Traceback" not in err and "stopped by SIGTERM" in err
    kinds = [json.loads(ln)["event"] for ln in (run / "events.jsonl").read_text().splitlines()]
    assert kinds[-2:] == ["run_stopped", "run_end"] and (run / "ratings.json").exists()


def test_a_second_sigint_exits_at_once(tmp_path):
    run = tmp_path / "run"
    proc = _start(run, rounds=40)
    _after_rounds(run, proc, 1)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    assert proc.returncode == 130


def test_resume_refuses_overrides_that_change_the_game(reference, tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "events.jsonl").write_bytes((reference / "events.jsonl").read_bytes()[:5000])
    assert resume(str(run), ["seed=6"]) == 2
    assert "cannot change 'seed' when resuming" in capsys.readouterr().err
    assert resume(str(tmp_path / "nothing"), []) == 2
    assert "holds no run to resume" in capsys.readouterr().err


def test_a_finished_run_resumes_only_to_play_more_rounds(reference, tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "events.jsonl").write_bytes((reference / "events.jsonl").read_bytes())
    assert resume(str(run), []) == 0
    assert "finished; nothing to resume" in capsys.readouterr().err
    assert resume(str(run), ["game.rounds=6"]) == 0
    longer = events(run)
    start = longer[0]
    assert start["rounds"] == 6 and start["config"]["game"]["rounds"] == 6
    ref = events(reference)
    # the first four rounds are the recorded ones; two more follow
    cut = next(i for i, e in enumerate(ref) if e["event"] == "run_end")
    assert longer[1:cut] == ref[1:cut]
    assert sum(e["event"] == "round_end" for e in longer) == 6


def test_players_with_no_rated_game_are_not_ranked():
    r = TrueSkillRating()
    r.add_players(["a", "b", "dead"])
    r.update("t1", {"a": 0.9, "b": 0.2})
    rows = [row.as_dict() for row in r.table()]
    assert [x["player"] for x in rows] == ["a", "b", "dead"]
    assert [x["rank"] for x in rows] == [1, 2, None] and rows[2]["no_data"] is True
    text = format_table(rows)
    assert "no data" in text.splitlines()[-1] and text.splitlines()[-1].lstrip().startswith("-")


def test_a_full_disk_stops_the_run_with_a_clear_error(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "events.jsonl").symlink_to("/dev/full")
    with pytest.raises(LogWriteError, match="No space left on device"):
        run_game(build_settings(compose_config(GAME)), run)
    res = subprocess.run(
        [sys.executable, "-m", "skate", *GAME, f"hydra.run.dir={run}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "No space left on device" in res.stderr and f"resume={run}" in res.stderr


def test_the_log_is_synced_and_appended(tmp_path):
    from skate.runlog import events as ev

    log = EventLog(tmp_path / "events.jsonl")
    log.write(ev.RunStopped(round=1, reason="x"))
    log.sync()
    log.close()
    assert json.loads((tmp_path / "events.jsonl").read_text())["event"] == "run_stopped"


def test_a_run_logged_per_pair_before_the_option_existed_resumes_per_pair(short_reference, tmp_path):
    """A run from before events.rating_updates (its config has no such key, its log one `rating`
    line per pairwise update) is resumed in its own kind of log: the result is the log an
    uninterrupted run per pair writes, line for line."""
    pair = tmp_path / "pair"
    run_game(
        build_settings(
            compose_config(
                [*(o for o in GAME if not o.startswith("game.rounds=")), "game.rounds=2", "events.rating_updates=pair"]
            )
        ),
        pair,
    )
    lines = (pair / "events.jsonl").read_bytes().splitlines(keepends=True)
    start = json.loads(lines[0])
    del start["config"]["events"]  # as an old run recorded its config
    old = json.dumps(start).encode() + b"\n"
    kinds = [json.loads(line)["event"] for line in lines]
    cut = len(kinds) - 1 - kinds[::-1].index("rating") - 2  # inside the last task's updates
    run = tmp_path / "old"
    run.mkdir()
    (run / "events.jsonl").write_bytes(old + b"".join(lines[1:cut]))
    assert resume(str(run), []) == 0
    assert events(run)[1:] == events(pair)[1:]
    assert ratings(run) == ratings(pair) == ratings(short_reference)  # per task or per pair: the same table

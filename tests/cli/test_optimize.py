"""``skate optimize`` as a user runs it: a subprocess against the fake server on loopback
(``players=fake_local``, the server's address from ``FAKE_LLM_API_BASE``), the prompt store and the
response cache in a temporary folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.runlog.files import read_events

MODELS = {"ace": FakeModel(0.9), "mid": FakeModel(0.6), "low": FakeModel(0.1, demo_gain=0.8)}


def optimize(tmp_path: Path, out: str, *overrides: str, api_base: str = "http://127.0.0.1:9/v1"):
    env = {**os.environ, "FAKE_LLM_API_BASE": api_base, "SKATE_CACHE_DIR": str(tmp_path / "skate-cache")}
    args = [
        sys.executable,
        "-m",
        "skate",
        "optimize",
        "game=mathquiz",
        "optimizer.train=6",
        "optimizer.val=4",
        f"optimizer.store={tmp_path / 'programs'}",
        f"llm.cache_dir={tmp_path / 'cache'}",
        "llm.preflight=false",
        f"hydra.run.dir={tmp_path / out}",
        *overrides,
    ]
    return subprocess.run(args, check=False, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture
def srv():
    with FakeLLMServer(MODELS) as s:
        yield s


def table_rows(stdout: str) -> dict[str, list[str]]:
    """The before/after table's rows by player (the lines after the dashes, up to a blank line)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("---")) + 1
    rows = {}
    for line in lines[start:]:
        if not line.strip():
            break
        cells = line.split()
        rows[cells[0]] = cells
    return rows


def test_the_command_optimises_prints_the_table_and_reuses_on_a_second_run(srv, tmp_path):
    done = optimize(tmp_path, "first", "players=fake_local", "optimizer=bootstrap_fewshot", api_base=srv.api_base)
    assert done.returncode == 0, done.stderr
    head = next(line for line in done.stdout.splitlines() if line.startswith("player"))
    assert head.split()[:11] == [
        "player",
        "role",
        "optimizer",
        "train",
        "val",
        "before",
        "after",
        "valid",
        "separating",
        "demos",
        "calls",
    ]
    rows = table_rows(done.stdout)
    assert sorted(rows) == ["ace", "low", "mid"]
    for cells in rows.values():
        assert cells[1:5] == ["answerer", "bootstrap_fewshot", "6", "4"] and int(cells[10]) > 0  # calls
        assert cells[7:9] == ["-", "-"]  # valid and separating shares: setters only
    assert float(rows["low"][6]) > float(rows["low"][5])  # after > before: low learns from demos
    usage_line = next(line for line in done.stdout.splitlines() if line.startswith("model calls:"))
    calls = int(usage_line.split()[2])
    assert calls == sum(int(c[10]) for c in rows.values()) == srv.stats.requests
    # the log: run_start, then one optimize event per player; usage.json under <player>@optimize
    events = read_events(tmp_path / "first" / "optimize.jsonl")
    assert [e["event"] for e in events] == ["run_start", "optimize", "optimize", "optimize"]
    assert events[0]["game"] == "mathquiz" and events[0]["rounds"] == 0
    usage = json.loads((tmp_path / "first" / "usage.json").read_text())
    assert {k: u["calls"] for k, u in usage["players"].items()} == {
        f"{e['player']}@optimize": e["calls"] for e in events[1:]
    }
    # again: every program is reused, no request reaches the server
    requests = srv.stats.requests
    again = optimize(tmp_path, "second", "players=fake_local", "optimizer=bootstrap_fewshot", api_base=srv.api_base)
    assert again.returncode == 0, again.stderr
    assert srv.stats.requests == requests
    rows = table_rows(again.stdout)
    assert all(cells[-1] == "reused" and cells[10] == "0" for cells in rows.values())
    assert "model calls: 0 " in again.stdout


def test_simulated_players_have_no_prompts_to_optimise(tmp_path):
    done = optimize(tmp_path, "sim", "optimizer=bootstrap_fewshot")  # the default cohort is simulated
    assert done.returncode == 2 and not done.stdout.strip()
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("skate.optimize: ") and "only their prompts can be optimised" in lines[0]
    assert not (tmp_path / "programs").exists()


def test_the_command_wants_an_optimizer(tmp_path):
    done = optimize(tmp_path, "none", "players=fake_local", "optimizer=none")
    assert done.returncode == 2 and not done.stdout.strip()
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "choose an optimizer" in lines[0], done.stderr

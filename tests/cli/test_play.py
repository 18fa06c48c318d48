"""The command line as users run it: `python -m skate ...` in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import REQUIRED_SANDBOXES

ROOT = Path(__file__).resolve().parents[2]


def skate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "skate", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_short_game_prints_table_and_writes_run_folder(tmp_path):
    run_dir = tmp_path / "run"
    res = skate(
        "game=cop", "rating=trueskill", "aug=hist_perf", "game.rounds=2", f"hydra.run.dir={run_dir}", cwd=tmp_path
    )
    assert res.returncode == 0, res.stderr
    assert "rank  player" in res.stdout and "sim-ace" in res.stdout and str(run_dir) in res.stdout
    rows = json.loads((run_dir / "ratings.json").read_text())
    assert len(rows) == 6 and {r["rank"] for r in rows} == set(range(1, 7))
    assert (run_dir / "events.jsonl").stat().st_size > 0
    assert (run_dir / ".hydra" / "config.yaml").exists() and (run_dir / "skate.log").exists()
    start = json.loads((run_dir / "events.jsonl").read_text().splitlines()[0])
    assert start["event"] == "run_start" and start["sandbox"] in ("nsjail", "bwrap", "subprocess")
    if REQUIRED_SANDBOXES:  # sandbox=auto (the default) chose a jail, and said so
        assert start["sandbox"] in REQUIRED_SANDBOXES and start["sandbox_isolated"] is True
        assert f"sandbox=auto chose {start['sandbox']}" in (run_dir / "skate.log").read_text()


def test_no_usable_sandbox_exits_2_saying_what_to_do(tmp_path):
    res = skate("sandbox=nsjail", "sandbox.binary=/nonexistent/nsjail", f"hydra.run.dir={tmp_path / 'r'}", cwd=tmp_path)
    assert res.returncode == 2
    assert "no usable sandbox" in res.stderr and "sandbox.binary='/nonexistent/nsjail'" in res.stderr


def test_out_of_range_value_exits_2_naming_the_key(tmp_path):
    res = skate("game.rounds=0", f"hydra.run.dir={tmp_path / 'r'}", cwd=tmp_path)
    assert res.returncode == 2
    assert "config error: game.rounds=0 is invalid" in res.stderr


def test_misspelt_key_fails_before_running_in_one_line(tmp_path):
    res = skate("rating.mue=3", f"hydra.run.dir={tmp_path / 'r'}", cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        "skate: config error: rating.mue is not a setting of TrueSkillConfig (did you mean rating.mu?); its "
        "settings: average_last, beta, draw_margin, draw_probability, mu, orderings, outcome, own_unsolved, p_thresh, "
        "seed, "
        "sigma, tau"
    ]
    assert not (tmp_path / "r" / "events.jsonl").exists()


def test_an_unknown_option_in_a_sweep_fails_in_one_line(tmp_path):
    res = skate("-m", "rating=elo,trueskil", f"hydra.sweep.dir={tmp_path / 's'}", cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.strip().splitlines()[-1] == (
        "skate: config error: rating=trueskil is not an option of rating: did you mean rating=trueskill? choose "
        "one of bradley_terry, elo, irt, trueskill, ttt, zerosumeval"
    )

"""Sweeps as users run them: `python -m skate -m ...` through the joblib and submitit launchers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from skate.cli.rate import main as rate_main
from tests.conftest import SWEPT_GAMES

ROOT = Path(__file__).resolve().parents[2]
FAST = ["game.rounds=2", "logger=none", "print_table=false", "report=false"]
# The sweep tests read one sweep (tests/conftest.py's games_sweep, with test_wandb's grouping
# test): on one xdist worker, so that it is played once.
GROUP = pytest.mark.xdist_group("games_sweep")


def sweep(tmp_path, *args, launcher=None, logger=False):
    """``python -m skate -m`` over FAST and ``args`` into ``tmp_path`` (logger=True: the default
    logger, W&B offline, instead of logger=none)."""
    fast = [o for o in FAST if not (logger and o == "logger=none")]
    cmd = [sys.executable, "-m", "skate", "-m", *fast, *args, f"hydra.sweep.dir={tmp_path}"]
    if launcher:
        cmd.append(f"hydra/launcher={launcher}")
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600)


@GROUP
def test_a_two_job_sweep_runs_in_parallel_through_joblib(games_sweep):
    tmp_path, res = games_sweep
    assert res.returncode == 0, res.stderr[-2000:]
    assert "Joblib.Parallel(n_jobs=2" in res.stdout + res.stderr
    for job, game in enumerate(SWEPT_GAMES):  # each job played its own override
        rows = json.loads((tmp_path / str(job) / "ratings.json").read_text())
        start = json.loads((tmp_path / str(job) / "events.jsonl").read_text().splitlines()[0])
        assert len(rows) == 6 and start["game"] == game
    assert (tmp_path / "multirun.yaml").exists()


def test_a_failing_job_does_not_lose_the_others(tmp_path):
    res = sweep(tmp_path, "players.simulated.0.skill=0.5,7")
    assert res.returncode != 0
    assert "players.simulated[0].skill=7.0 is invalid" in res.stderr
    assert json.loads((tmp_path / "0" / "ratings.json").read_text())  # the good job finished
    assert not (tmp_path / "1" / "ratings.json").exists()


def test_the_submitit_launcher_runs_the_same_grid(tmp_path):
    res = sweep(tmp_path, "aug=no_info,hist_perf", launcher="submitit_local")
    assert res.returncode == 0, res.stderr[-2000:]
    assert "Submitit 'local'" in res.stdout + res.stderr
    for job in (0, 1):
        assert len(json.loads((tmp_path / str(job) / "ratings.json").read_text())) == 6


@GROUP
def test_a_sweep_over_games_ends_with_a_page_comparing_its_jobs(games_sweep, capsys):
    tmp_path, res = games_sweep
    assert res.returncode == 0, res.stderr[-2000:]
    page = (tmp_path / "report.html").read_text()
    assert 'href="0/report/index.html"' in page and 'href="1/report/index.html"' in page
    # and each job's game viewer, written beside its report
    assert 'href="0/viewer/index.html"' in page and 'href="1/viewer/index.html"' in page
    assert all((tmp_path / str(job) / "viewer" / "index.html").exists() for job in range(len(SWEPT_GAMES)))
    assert all(f"game={game}" in page for game in SWEPT_GAMES) and "kendall_tau" in page
    for job, game in enumerate(SWEPT_GAMES):
        start = json.loads((tmp_path / str(job) / "events.jsonl").read_text().splitlines()[0])
        assert start["game"] == game and (tmp_path / str(job) / "report" / "index.html").exists()
        # each job's folder is a run skate.rate reads (its command line: tests/cli/test_rate.py)
        capsys.readouterr()
        assert rate_main([str(tmp_path / str(job)), "--json"]) == 0
        assert [r["player"] for r in json.loads(capsys.readouterr().out)] == [
            r["player"] for r in json.loads((tmp_path / str(job) / "ratings.json").read_text())
        ]

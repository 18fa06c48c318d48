"""A run folder holds one run: a second run into it is refused, and a sweep run again into its
folder keeps its finished jobs, resumes the unfinished ones and plays the missing ones, so that it
ends as the same sweep played without a stop (tests/cli/test_play_resume.py: resuming one run)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import skate
from skate.runlog.files import comparable
from skate.runner import RunExists, run_game, run_sweep_job

ROOT = Path(__file__).resolve().parent.parent
# The game, on the command line (a sweep of it) and from Python (tiny): the same settings.
TINY = ["game=mathquiz", "players=simulated_four", "logger=none", "report=false", "print_table=false"]
ROUNDS = 4
SEEDS = (1, 2, 3)  # one sweep job each, numbered 0, 1, 2


def tiny(values):
    return skate.config(
        values={"report": False, "print_table": False, **values},
        game="mathquiz",
        players="simulated_four",
        logger="none",
    )


def lines(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "events.jsonl").read_bytes().splitlines()]


def played(run: Path) -> tuple[list[dict], list[dict]]:
    """What two plays of one game must agree on: the round ends (timing aside) and the ratings."""
    rounds = [comparable(r) for r in lines(run) if r["event"] == "round_end"]
    return rounds, json.loads((run / "ratings.json").read_text())


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict[int, Path]:
    """Each job of the sweep, played without a stop."""
    out = tmp_path_factory.mktemp("reference")
    for seed in SEEDS:
        run_game(tiny({"game.rounds": ROUNDS, "seed": seed}), out / str(seed))
    return {seed: out / str(seed) for seed in SEEDS}


def cut_after_round(src: Path, dst: Path, n: int) -> None:
    """``dst`` gets ``src``'s log as a kill after its round ``n`` (and a torn line) leaves it."""
    raw = (src / "events.jsonl").read_bytes().splitlines(keepends=True)
    end = next(i for i, line in enumerate(raw) if b'"round_end"' in line and json.loads(line)["round"] == n)
    dst.mkdir(parents=True)
    (dst / "events.jsonl").write_bytes(b"".join(raw[: end + 2]) + raw[end + 2][:20])


def test_a_second_run_into_a_folder_is_refused_and_the_log_kept(reference, tmp_path):
    done = tmp_path / "done"
    shutil.copytree(reference[1], done)
    before = (done / "events.jsonl").read_bytes()
    files = sorted(done.rglob("*"))
    res = subprocess.run(
        [sys.executable, "-m", "skate", *TINY, f"game.rounds={ROUNDS}", "seed=1", f"hydra.run.dir={done}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        f"skate: {done} already holds a run (finished); to continue it: skate resume={done} "
        f"game.rounds=<more>; for a new run choose another hydra.run.dir"
    ]
    assert (done / "events.jsonl").read_bytes() == before
    assert sorted(done.rglob("*")) == files  # refused before Hydra writes .hydra/ and its log there
    # every caller of run_game is refused, and an unfinished run is named by where it stopped
    killed = tmp_path / "killed"
    cut_after_round(reference[1], killed, 2)
    before = (killed / "events.jsonl").read_bytes()
    with pytest.raises(
        RunExists,
        match=r"already holds a run \(stopped after round 2\); to continue it: "
        rf"skate resume={killed}; for a new",
    ):
        run_game(tiny({"game.rounds": 2}), killed)
    assert (killed / "events.jsonl").read_bytes() == before


def test_a_sweep_job_keeps_a_finished_run_and_refuses_another_config(reference, tmp_path, capsys):
    job = tmp_path / "0"
    shutil.copytree(reference[1], job)
    before = (job / "events.jsonl").read_bytes()
    assert run_sweep_job(tiny({"game.rounds": ROUNDS, "seed": 1}), job) is None
    assert "already holds this job's finished run; kept" in capsys.readouterr().err
    with pytest.raises(
        RunExists,
        match=r"holds a run of another config \(game.rounds, seed differ\): "
        r"the sweep's overrides changed",
    ):
        run_sweep_job(tiny({"game.rounds": 5, "seed": 2}), job)
    assert (job / "events.jsonl").read_bytes() == before


def _sweep(folder: Path, launcher: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "skate",
        "-m",
        *TINY,
        f"game.rounds={ROUNDS}",
        "seed=" + ",".join(map(str, SEEDS)),
        f"hydra.sweep.dir={folder}",
        f"hydra/launcher={launcher}",
    ]


def _kill_when(folder: Path, launcher: str, job: int, rounds: int) -> None:
    """Start the sweep and SIGKILL its whole process group once job ``job`` has logged round
    ``rounds`` (and has not finished)."""
    proc = subprocess.Popen(
        _sweep(folder, launcher), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    log = folder / str(job) / "events.jsonl"
    deadline = time.time() + 180
    try:
        while time.time() < deadline and proc.poll() is None:
            text = log.read_text() if log.exists() else ""
            if text.count('"round_end"') >= rounds:
                break
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, "the sweep ended before it could be killed"
    assert '"run_end"' not in log.read_text(), "the job finished before it could be killed"


def _rerun_matches_reference(folder: Path, launcher: str, reference: dict[int, Path]) -> str:
    res = subprocess.run(_sweep(folder, launcher), cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    for job, seed in enumerate(SEEDS):
        run = folder / str(job)
        assert [r["event"] for r in lines(run)].count("run_start") == 1
        assert played(run) == played(reference[seed]), f"job {job}"
    return res.stderr


@pytest.mark.parametrize("launcher", ["basic", "parallel"])
def test_a_killed_sweep_run_again_ends_as_an_uninterrupted_one(reference, tmp_path, launcher):
    """basic plays its jobs one by one: killed in job 1's third round, job 0 has finished and job 2
    has not begun. parallel (joblib, the default for -m) plays two at once: killed in job 2's second round, job 0 or 1 has
    finished and the other may still be playing."""
    job, rounds = (1, 2) if launcher == "basic" else (2, 1)
    _kill_when(tmp_path, launcher, job, rounds)
    finished = {
        j: (tmp_path / str(j) / "events.jsonl").read_bytes()
        for j in range(len(SEEDS))
        if (tmp_path / str(j) / "events.jsonl").exists()
        and '"run_end"' in (tmp_path / str(j) / "events.jsonl").read_text()
    }
    assert finished and job not in finished
    # The kill lands a moment after round `rounds` is logged: the job may have finished one more.
    held = (tmp_path / str(job) / "events.jsonl").read_text().count('"round_end"')
    assert held >= rounds
    err = _rerun_matches_reference(tmp_path, launcher, reference)
    for j, before in finished.items():  # a finished job is left as it was
        assert (tmp_path / str(j) / "events.jsonl").read_bytes() == before
        assert f"{tmp_path / str(j)} already holds this job's finished run; kept" in err
    assert f"{tmp_path / str(job)} holds this job's run, stopped after round {held}; resuming it" in err
    if launcher == "basic":  # the sweep's overrides changed: each job refused in one line, its log kept
        logs = {j: (tmp_path / str(j) / "events.jsonl").read_bytes() for j in range(len(SEEDS))}
        cmd = [a if not a.startswith("game.rounds=") else "game.rounds=5" for a in _sweep(tmp_path, launcher)]
        res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert res.returncode == 2 and "Traceback" not in res.stderr
        refused = [ln for ln in res.stderr.splitlines() if "holds a run of another config (game.rounds differ)" in ln]
        assert len(refused) == len(SEEDS)
        assert {j: (tmp_path / str(j) / "events.jsonl").read_bytes() for j in range(len(SEEDS))} == logs


def test_a_sweep_through_submitit_keeps_a_finished_job_and_resumes_a_killed_one(reference, tmp_path):
    """The same decision, made in the job, under submitit's local launcher: job 0 finished, job 1
    killed after its first round, job 2 never started."""
    shutil.copytree(reference[SEEDS[0]], tmp_path / "0")
    cut_after_round(reference[SEEDS[1]], tmp_path / "1", 1)
    before = (tmp_path / "0" / "events.jsonl").read_bytes()
    _rerun_matches_reference(tmp_path, "submitit_local", reference)
    assert (tmp_path / "0" / "events.jsonl").read_bytes() == before

"""Soak: does a long game's memory or its open files grow? (issue 49, part 4)

Plays one long game as ``python -m skate ...`` in a process of its own and, from outside, reads
its resident memory (``/proc/PID/status`` VmRSS) and open file descriptors (``/proc/PID/fd``)
each time the event log shows another ``--every`` rounds ended; prints the samples and the
least-squares slope of each over rounds (per 100 rounds), and writes them as JSON with
``--json``. Two games:

    .venv/bin/python bench/bench_soak.py default --rounds 1000          # the default cohort (simulated)
    .venv/bin/python bench/bench_soak.py fake --rounds 200              # three fake-server players,
                                                                        # 20 % injected faults a request

``fake`` serves three fake models (ace 0.9, mid 0.6, low 0.3) from this process, each request
failing with a rate limit, a server error or a malformed reply at the rates of bench_load.py
(7 %, 7 %, 6 %; all retried), ``estimator=fixed_n estimator.n=2``, ``llm.cache=false``. The
game's own log grows on disk, not in memory; what the slope shows is the process itself.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
FAULTS = {"rate_limit": 0.07, "server_error": 0.07, "malformed": 0.06}  # as bench_load.py's: 20 % a request


def sample(pid: int) -> tuple[float, int, int]:
    """(resident MB, open descriptors, threads) of a process."""
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(status["VmRSS"].split()[0]) / 1024, len(os.listdir(f"/proc/{pid}/fd")), int(status["Threads"])


def rounds_ended(events: Path, seen: int, offset: int) -> tuple[int, int]:
    """Round ends in the event log after ``offset`` bytes; (count so far, new offset)."""
    if not events.exists():
        return seen, offset
    with open(events, "rb") as fh:
        fh.seek(offset)
        chunk = fh.read()
    complete = chunk.rfind(b"\n") + 1
    seen += chunk[:complete].count(b'"event": "round_end"') + chunk[:complete].count(b'"event":"round_end"')
    return seen, offset + complete


def play(overrides: list[str], rounds: int, every: int, env: dict[str, str], folder: Path) -> dict:
    cmd = [
        sys.executable,
        "-m",
        "skate",
        f"game.rounds={rounds}",
        "logger=none",
        "report=false",
        "print_table=false",
        f"hydra.run.dir={folder}",
        *overrides,
    ]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    samples, seen, offset, next_at = [], 0, 0, every
    while proc.poll() is None:
        seen, offset = rounds_ended(folder / "events.jsonl", seen, offset)
        while seen >= next_at:
            try:
                mb, fds, threads = sample(proc.pid)
            except (FileNotFoundError, ProcessLookupError, StopIteration):
                break
            samples.append(
                {
                    "round": next_at,
                    "rss_mb": round(mb, 1),
                    "fds": fds,
                    "threads": threads,
                    "s": round(time.perf_counter() - t0, 1),
                }
            )
            print(
                f"round {next_at:5d}: {mb:7.1f} MB resident, {fds:3d} open descriptors, {threads:3d} threads, "
                f"{time.perf_counter() - t0:7.1f} s",
                flush=True,
            )
            next_at += every
        time.sleep(0.05)
    err = proc.stderr.read() if proc.stderr else ""
    if proc.returncode != 0:
        sys.exit(f"the game failed ({proc.returncode}): {err.strip().splitlines()[-1] if err.strip() else ''}")
    return {
        "command": cmd,
        "wall_s": round(time.perf_counter() - t0, 1),
        "samples": samples,
        "log_mb": round((folder / "events.jsonl").stat().st_size / 2**20, 1),
    }


def slope(samples: list[dict], key: str, skip: int = 1) -> float:
    """Least-squares growth of ``key`` per 100 rounds (the first ``skip`` samples left out: warm-up)."""
    pts = samples[skip:] if len(samples) > skip + 1 else samples
    if len(pts) < 2:
        return float("nan")
    x = np.array([p["round"] for p in pts], dtype=float)
    y = np.array([p[key] for p in pts], dtype=float)
    return float(np.polyfit(x, y, 1)[0] * 100)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("game", choices=["default", "fake"])
    ap.add_argument("--rounds", type=int, default=None, help="default 1000 (default), 200 (fake)")
    ap.add_argument("--every", type=int, default=50, help="sample every this many rounds (default 50)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, default=None, help="write the samples and slopes here")
    args = ap.parse_args()
    rounds = args.rounds or (1000 if args.game == "default" else 200)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    overrides = [f"seed={args.seed}"]
    with tempfile.TemporaryDirectory(prefix="bench-soak-") as tmp:
        if args.game == "default":
            got = play(overrides, rounds, args.every, env, Path(tmp) / "run")
        else:
            sys.path.insert(0, str(ROOT))
            from skate.llm.fake_server import FakeLLMServer, FakeModel

            models = {n: FakeModel(s, dict(FAULTS)) for n, s in (("ace", 0.9), ("mid", 0.6), ("low", 0.3))}
            with FakeLLMServer(models, retry_after_s=0.05, fault_seed=args.seed) as srv:
                env["FAKE_LLM_API_BASE"] = srv.api_base
                got = play(
                    [
                        *overrides,
                        "players=fake_local",
                        "estimator=fixed_n",
                        "estimator.n=2",
                        "llm.cache=false",
                        "llm.backoff_s=0.05",
                        "llm.max_backoff_s=1.0",
                    ],
                    rounds,
                    args.every,
                    env,
                    Path(tmp) / "run",
                )
                got["requests"] = srv.stats.requests
    got.update(
        game=args.game,
        rounds=rounds,
        every=args.every,
        rss_mb_per_100_rounds=round(slope(got["samples"], "rss_mb"), 2),
        fds_per_100_rounds=round(slope(got["samples"], "fds"), 3),
    )
    print(
        f"\n{args.game}: {rounds} rounds in {got['wall_s']} s; event log {got['log_mb']} MB; resident memory "
        f"{got['rss_mb_per_100_rounds']:+.2f} MB and open descriptors {got['fds_per_100_rounds']:+.3f} per 100 "
        "rounds (least squares, after the first sample)"
    )
    if args.json:
        args.json.write_text(json.dumps(got, indent=1) + "\n")


if __name__ == "__main__":
    main()

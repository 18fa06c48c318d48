"""LLM-player game speed against the fake OpenAI-compatible server on loopback.

Starts ``skate.llm.fake_server`` in its own process with a fixed latency per request, plays a
game between its three fake models (cache off), and compares the wall time of the game with the
ideal: model calls × latency / concurrency limit. With zero latency it reports the engine's own
cost per call: wall time and this process's CPU time, divided by the number of calls.

The CPU column is ``run_game``'s whole CPU time over the calls, one-off costs included (building
the players, imports, the report after the game). It is split into the game itself
(``Engine.run``: the rounds' model calls, estimates, ratings and events, which grow with the
calls) and the report (seconds, once per run, whatever the number of calls); the rest is setup.

    .venv/bin/python bench/bench_llm.py                         # latency 0.05 s and 0 s, 3 rounds
    .venv/bin/python bench/bench_llm.py --latency 0.1 --concurrency 16 --rounds 5
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import skate.runner  # noqa: E402
from skate.cli.compose import compose_config  # noqa: E402
from skate.runner import run_game  # noqa: E402
from skate.settings.options import build_settings  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def play(latency: float, concurrency: int, rounds: int, extra: list[str]) -> dict:
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "skate.llm.fake_server",
            "--port",
            str(port),
            "--latency",
            str(latency),
            "ace=0.9",
            "mid=0.6",
            "low=0.3",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        server.stdout.readline()  # "fake LLM players ... at ..." once it listens
        base = f"http://127.0.0.1:{port}/v1"
        players = (
            "["
            + ", ".join(f"{{name: {n}, model: hosted_vllm/{n}, api_base: '{base}'}}" for n in ("ace", "mid", "low"))
            + "]"
        )
        cfg = compose_config(
            [
                f"game.rounds={rounds}",
                "logger=none",
                "players.simulated=[]",
                f"players.llm={players}",
                "llm.cache=false",
                f"llm.concurrency={concurrency}",
                *extra,
            ]
        )
        out = Path(tempfile.mkdtemp(prefix="bench-llm-"))
        with phases() as cpu_in:
            cpu0, t0 = time.process_time(), time.perf_counter()
            result = run_game(build_settings(cfg), out)
            wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    finally:
        server.terminate()
        server.wait()
    calls = result.summary.usage["total"]["calls"]
    ideal = calls * latency / concurrency
    return {
        "latency": latency,
        "concurrency": concurrency,
        "calls": calls,
        "wall": wall,
        "cpu": cpu,
        "game_cpu": cpu_in["game"],
        "report_cpu": cpu_in["report"],
        "ideal": ideal,
        "ratio": wall / ideal if ideal else None,
        "order": [r["player"] for r in result.table],
    }


@contextlib.contextmanager
def phases():
    """Process CPU seconds spent in the game (``Engine.run``) and in the report (``runner._report``)
    while the block runs: a dict filled in as they return."""
    spent = {"game": 0.0, "report": 0.0}
    patched = [(skate.runner.Engine, "run", "game"), (skate.runner, "_report", "report")]
    saved = [(owner, name, owner.__dict__[name]) for owner, name, _ in patched]

    def timed(f, phase):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            cpu0 = time.process_time()
            try:
                return f(*args, **kwargs)
            finally:
                spent[phase] += time.process_time() - cpu0

        return wrapper

    for owner, name, phase in patched:
        setattr(owner, name, timed(getattr(owner, name), phase))
    try:
        yield spent
    finally:
        for owner, name, f in saved:
            setattr(owner, name, f)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--latency", type=float, nargs="+", default=[0.05, 0.0])
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    print(
        f"python {platform.python_version()}, {os.cpu_count()} cores, {args.rounds} rounds, "
        f"3 fake models, overrides: {args.overrides or 'none'}\n"
    )
    print(
        "| latency s | concurrency | model calls | wall s | ideal s | wall / ideal | engine ms/call (wall) | "
        "engine CPU ms/call | of which game CPU ms/call | report CPU s |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for lat in args.latency:
        r = play(lat, args.concurrency, args.rounds, args.overrides)
        ratio = f"{r['ratio']:.2f}" if r["ratio"] else "–"
        print(
            f"| {lat:g} | {r['concurrency']} | {r['calls']} | {r['wall']:.2f} | {r['ideal']:.2f} | {ratio} | "
            f"{1000 * r['wall'] / r['calls']:.2f} | {1000 * r['cpu'] / r['calls']:.2f} | "
            f"{1000 * r['game_cpu'] / r['calls']:.2f} | {r['report_cpu']:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()

"""LLM-player game speed against the fake OpenAI-compatible server on loopback.

Starts ``skate.llm.fake_server`` in its own process with a fixed latency per request, plays a
game between its three fake models (cache off), and compares the wall time of the game with the
ideal: model calls × latency / concurrency limit. With zero latency it reports the engine's own
cost per call: wall time and this process's CPU time, divided by the number of calls.

    .venv/bin/python bench/bench_llm.py                         # latency 0.05 s and 0 s, 3 rounds
    .venv/bin/python bench/bench_llm.py --latency 0.1 --concurrency 16 --rounds 5
"""

from __future__ import annotations

import argparse
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

from skate.config import compose_config  # noqa: E402
from skate.runner import run_game  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def play(latency: float, concurrency: int, rounds: int, extra: list[str]) -> dict:
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "skate.llm.fake_server", "--port", str(port),
                               "--latency", str(latency), "ace=0.9", "mid=0.6", "low=0.3"],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        server.stdout.readline()  # "fake LLM players ... at ..." once it listens
        base = f"http://127.0.0.1:{port}/v1"
        players = "[" + ", ".join(f"{{name: {n}, model: hosted_vllm/{n}, api_base: '{base}'}}"
                                  for n in ("ace", "mid", "low")) + "]"
        cfg = compose_config([f"game.rounds={rounds}", "logger=none", "players.simulated=[]",
                              f"players.llm={players}", "llm.cache=false", f"llm.concurrency={concurrency}", *extra])
        out = Path(tempfile.mkdtemp(prefix="bench-llm-"))
        cpu0, t0 = time.process_time(), time.perf_counter()
        result = run_game(cfg, out)
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    finally:
        server.terminate()
        server.wait()
    calls = result.summary["usage"]["total"]["calls"]
    ideal = calls * latency / concurrency
    return {"latency": latency, "concurrency": concurrency, "calls": calls, "wall": wall, "cpu": cpu,
            "ideal": ideal, "ratio": wall / ideal if ideal else None,
            "order": [r["player"] for r in result.table]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--latency", type=float, nargs="+", default=[0.05, 0.0])
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, {args.rounds} rounds, "
          f"3 fake models, overrides: {args.overrides or 'none'}\n")
    print("| latency s | concurrency | model calls | wall s | ideal s | wall / ideal | engine ms/call (wall) | engine CPU ms/call |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for lat in args.latency:
        r = play(lat, args.concurrency, args.rounds, args.overrides)
        ratio = f"{r['ratio']:.2f}" if r["ratio"] else "–"
        print(f"| {lat:g} | {r['concurrency']} | {r['calls']} | {r['wall']:.2f} | {r['ideal']:.2f} | {ratio} | "
              f"{1000 * r['wall'] / r['calls']:.2f} | {1000 * r['cpu'] / r['calls']:.2f} |", flush=True)


if __name__ == "__main__":
    main()

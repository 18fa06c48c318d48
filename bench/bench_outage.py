"""A model server killed mid-game and started again on the same port (issue 49): the wait, measured.

The issue's scenario: three language-model players (the fake server's ace, mid and low, served by
``python -m skate.llm.fake_server`` in a process of its own, with a latency per reply) play a
long game; after ``--kill-after`` rounds the server process is killed (SIGKILL) and, ``--down``
seconds later, started again on the same port. The same game is played first with no outage (its
own cache, a fresh server), then with the outage under the default settings (retries, and the
wait: ``llm.outage_wait_s``), and, with ``--void``, with ``llm.outage_wait_s=0`` (no waiting: the
behaviour before the wait, each call that outlasts its retries void).

For each: the wall time, the void calls, the outages the event log records (how long each model
was down, its probes), whether the game's events equal the uninterrupted game's (timestamps,
usage and the model calls' own events aside) and its final ratings.

    .venv/bin/python bench/bench_outage.py                              # 60 rounds, killed after 5, down 60 s
    .venv/bin/python bench/bench_outage.py --rounds 10 --down 20 --void
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skate.cli.compose import compose_config  # noqa: E402
from skate.runlog.files import played_events, read_events  # noqa: E402
from skate.runner import run_game  # noqa: E402
from skate.settings.options import build_settings  # noqa: E402

MODELS = ("ace=0.9", "mid=0.6", "low=0.3")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(port: int, latency: float) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-m", "skate.llm.fake_server", "--port", str(port), "--latency", str(latency), *MODELS],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    proc.stdout.readline()  # "fake LLM players ... at ..." once it listens
    return proc


def rounds_done(run: Path) -> int:
    log = run / "events.jsonl"
    return log.read_text().count('"event": "round_end"') if log.exists() else 0


def play(args: argparse.Namespace, out: Path, port: int, name: str, outage: bool, extra: list[str]) -> dict:
    server = [serve(port, args.latency)]
    base = f"http://127.0.0.1:{port}/v1"
    players = (
        "["
        + ", ".join(
            f"{{name: {m.split('=')[0]}, model: hosted_vllm/{m.split('=')[0]}, api_base: '{base}'}}" for m in MODELS
        )
        + "]"
    )
    cfg = compose_config(
        [
            f"game={args.game}",
            f"game.rounds={args.rounds}",
            f"seed={args.seed}",
            "logger=console",
            "logger.progress=plain",
            "report=false",
            "players.simulated=[]",
            f"players.llm={players}",
            f"llm.cache_dir={out / name / 'cache'}",
            *args.overrides,
            *extra,
        ]
    )
    run = out / name / "run"
    killed: dict[str, float] = {}

    def kill_and_restart() -> None:
        while rounds_done(run) < args.kill_after:
            time.sleep(0.01)
        server[0].send_signal(signal.SIGKILL)
        server[0].wait()
        killed["at_round"] = rounds_done(run)
        killed["t"] = time.perf_counter()
        time.sleep(args.down)
        server[0] = serve(port, args.latency)
        killed["down"] = time.perf_counter() - killed["t"]

    watcher = threading.Thread(target=kill_and_restart, daemon=True) if outage else None
    t0 = time.perf_counter()
    try:
        if watcher:
            watcher.start()
        result = run_game(build_settings(cfg), run)
        wall = time.perf_counter() - t0
        if watcher:
            watcher.join()
    finally:
        server[0].terminate()
        server[0].wait()
    events = read_events(run)
    outages = [e for e in events if e["event"] == "llm_outage"]
    return {
        "name": name,
        "wall": wall,
        "killed": killed,
        "run": run,
        "void": result.summary.usage["total"]["void"],
        "void_events": sum(e["event"] == "llm_void" for e in events),
        "void_estimates": result.summary.void_estimates,
        "void_attempts": result.summary.void_attempts,
        "calls": result.summary.usage["total"]["calls"],
        "retries": result.summary.usage["total"]["retries"],
        "outages": outages,
        "stopped": result.summary.stopped,
        "game": played_events(run),
        "ratings": json.loads((run / "ratings.json").read_text()),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--game", default="mathquiz")
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--kill-after", type=int, default=5, help="rounds finished when the server is killed")
    ap.add_argument("--down", type=float, default=60.0, help="seconds before it is started again")
    ap.add_argument("--latency", type=float, default=0.05, help="seconds the fake server takes per reply")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--void", action="store_true", help="also play it with llm.outage_wait_s=0 (no waiting)")
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    out = Path(tempfile.mkdtemp(prefix="bench-outage-"))
    print(
        f"python {platform.python_version()}, {os.cpu_count()} cores; game={args.game}, {args.rounds} rounds, "
        f"3 fake models, latency {args.latency:g} s; killed after round {args.kill_after}, down {args.down:g} s; "
        f"overrides: {args.overrides or 'none'}; runs in {out}\n",
        flush=True,
    )
    port = free_port()  # every game on the same port: the players' api_base are recorded alike
    plays = [play(args, out, port, "reference", False, [])]
    plays.append(play(args, out, port, "outage", True, []))
    if args.void:
        plays.append(play(args, out, port, "no-wait", True, ["llm.outage_wait_s=0"]))
    ref = plays[0]
    print(
        "| game | wall s | model calls | retries | void calls (samples) | void estimates, attempts | "
        "outages: model, down s, probes | events equal | ratings equal | stopped |"
    )
    print("|---|---:|---:|---:|---:|---:|---|---|---|---|")
    for p in plays:
        ups = [e for e in p["outages"] if e["state"] in ("up", "gave_up")]
        told = ", ".join(f"{e['model']} {e['down_s']:.1f} s {e['probes']}" for e in ups) or "none"
        killed = (
            f" (killed after round {p['killed']['at_round']}, down {p['killed']['down']:.1f} s)" if p["killed"] else ""
        )
        print(
            f"| {p['name']}{killed} | {p['wall']:.1f} | {p['calls']} | {p['retries']} | {p['void_events']} "
            f"({p['void']}) | {p['void_estimates']}, {p['void_attempts']} | {told} | "
            f"{'yes' if p['game'] == ref['game'] else 'no'} | {'yes' if p['ratings'] == ref['ratings'] else 'no'} | "
            f"{p['stopped'] or 'no'} |",
            flush=True,
        )


if __name__ == "__main__":
    main()

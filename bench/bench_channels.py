"""Covert channels between programs that the sandbox leaves open, measured: how many bits one
program can pass to the next program in its jail (or in another jail) through a counter the
kernel shares, and how fast.

Each channel: a sender program encodes a secret number N by advancing a counter N times; a
receiver program, run next, reads the counter and decodes N as the difference from a baseline
it also reads. Reported: the largest N a sender can encode within its time limit, the bits that
makes (log2), whether a few secrets decode exactly, and the time per program pair.

    .venv/bin/python bench/bench_channels.py                 # nsjail and bwrap, warm
    .venv/bin/python bench/bench_channels.py --kinds bwrap --cold
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skate.sandbox import BwrapSandbox, Limits, NsjailSandbox

LIMITS = Limits(timeout_s=5, cpu_s=5, memory_mb=512)
CHANNELS = {
    # the jail's pid counter: each fork takes the next pid number
    "pid": (
        "import os\nfor _ in range({n}):\n    pid = os.fork()\n    if pid == 0:\n        os._exit(0)\n"
        "    os.waitpid(pid, 0)\nprint('sent')",
        "import os\nprint(os.getpid())",
    ),
    # /tmp's inode counter: each file made (and removed) takes the next inode number
    "tmp_inode": (
        "import os\nfor i in range({n}):\n    open('/tmp/x', 'w').close()\n    os.unlink('/tmp/x')\nprint('sent')",
        "import os\nopen('/tmp/y', 'w').close()\nprint(os.stat('/tmp/y').st_ino)",
    ),
    # the kernel's shared counter for pipe inodes (pipes are not on /tmp's file system)
    "pipe_inode": (
        "import os\nfor _ in range({n}):\n    r, w = os.pipe()\n    os.close(r)\n    os.close(w)\nprint('sent')",
        "import os\nr, w = os.pipe()\nprint(os.fstat(r).st_ino)",
    ),
}


def measure(sb, name: str, sender: str, receiver: str) -> dict:
    # The largest N a sender encodes within the time limit: time one run of 2,000 steps.
    t = time.perf_counter()
    res = sb.run(sender.format(n=2000), LIMITS)
    per_step = (time.perf_counter() - t) / 2000
    capacity = int(LIMITS.timeout_s * 0.8 / per_step)
    decoded = []
    for secret in (0, 17, 1000, 4321):
        base = int(sb.run(receiver, LIMITS).stdout)
        sb.run(sender.format(n=secret), LIMITS)
        now = int(sb.run(receiver, LIMITS).stdout)
        decoded.append((secret, now - base))  # the receiver's own step counts once
    step = decoded[0][1]  # what a sender of 0 leaves: the cost of the runs themselves
    exact = all(got - step == secret for secret, got in decoded)
    return {
        "channel": name,
        "ok": res.ok,
        "per_step_us": per_step * 1e6,
        "capacity": capacity,
        "bits": math.log2(max(capacity, 1)),
        "exact": exact,
        "decoded": decoded,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kinds", default="nsjail,bwrap")
    ap.add_argument("--cold", action="store_true", help="the cold path (sandbox.warm=false)")
    args = ap.parse_args()
    print("| sandbox | start | channel | µs per step | N in one program | bits per program | decodes exactly |")
    print("|---|---|---|---:|---:|---:|---|")
    for kind in args.kinds.split(","):
        cls = {"nsjail": NsjailSandbox, "bwrap": BwrapSandbox}[kind]
        sb = cls(limits=LIMITS, workers=1, warm=not args.cold)
        try:
            sb.start()
            for name, (sender, receiver) in CHANNELS.items():
                r = measure(sb, name, sender, receiver)
                print(
                    f"| {kind} | {'cold' if args.cold else 'warm'} | {name} | {r['per_step_us']:.1f} | "
                    f"{r['capacity']:,} | {r['bits']:.1f} | {r['exact']} {r['decoded']} |",
                    flush=True,
                )
        finally:
            sb.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

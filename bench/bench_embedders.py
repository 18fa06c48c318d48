"""What each local embedder costs: load time, memory, and time per task text.

    .venv/bin/python bench/bench_embedders.py [--texts 200]

Each embedder is measured in a fresh process (peak RSS from ``resource.getrusage``, which
includes the interpreter and numpy: the line ``baseline`` is a process that imports skate.embedders
and nothing else). ``one text`` is the engine's case (one task checked at a time), ``batch`` the
calibration's (every text in one call). Texts are CRUXEval programs as COP tasks show them.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
from skate.tools.calibrate import load_cruxeval, task_text
texts = [task_text(r) for r in load_cruxeval()][:int(sys.argv[2])]
name = sys.argv[1]
t0 = time.perf_counter()
if name == "baseline":
    emb = None
else:
    import skate
    from skate.embedders import build_embedder
    emb = build_embedder(skate.config(embedder=name).embedder)
load = time.perf_counter() - t0
out = {"embedder": name, "load_s": round(load, 3)}
if emb is not None:
    emb.embed(texts[:2])
    t = time.perf_counter()
    for x in texts[:50]:
        emb.embed([x])
    out["one_text_ms"] = round((time.perf_counter() - t) / 50 * 1000, 2)
    t = time.perf_counter()
    emb.embed(texts)
    out["batch_ms_per_text"] = round((time.perf_counter() - t) / len(texts) * 1000, 2)
out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
print(json.dumps(out))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--texts", type=int, default=200)
    ap.add_argument("--embedders", nargs="+", default=["baseline", "hashing", "minilm"])
    args = ap.parse_args()
    print(f"{'embedder':<10} {'load s':>7} {'one text ms':>12} {'batch ms/text':>14} {'peak RSS MB':>12}")
    for name in args.embedders:
        res = subprocess.run([sys.executable, "-c", CHILD, name, str(args.texts)], capture_output=True, text=True)
        if res.returncode:
            print(f"{name:<10} failed: {res.stderr.strip().splitlines()[-1]}")
            continue
        r = json.loads(res.stdout.strip().splitlines()[-1])
        print(
            f"{name:<10} {r['load_s']:>7.2f} {r.get('one_text_ms', float('nan')):>12.2f} "
            f"{r.get('batch_ms_per_text', float('nan')):>14.2f} {r['peak_rss_mb']:>12.1f}"
        )


if __name__ == "__main__":
    main()

"""Sandbox throughput: executions per second through each sandbox versus bare ``python -c``.

The snippets are CRUXEval programs (``skate/games/cop/data/cruxeval.jsonl``), each printing ``f(input)``:
short, realistic code-output-prediction programs. The baseline runs every snippet as
``python -c SNIPPET`` in a plain subprocess with its output captured, with as many in flight as
the sandboxes get (``--workers``, default one per core). Jail start-up is measured separately and
excluded from the throughput (a game pays it once per worker).

    .venv/bin/python bench/bench_sandbox.py              # all sandboxes, 400 snippets, 3 repeats
    .venv/bin/python bench/bench_sandbox.py --n 800 --repeats 5 --json results.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from importlib.resources import files
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skate.sandbox import (BwrapSandbox, Limits, NsjailSandbox, Outcome,  # noqa: E402
                           SandboxUnavailable, SubprocessSandbox, UnsafeSandboxWarning)

LIMITS = Limits(timeout_s=10, cpu_s=10, memory_mb=512, max_output_bytes=65536)


def snippets(n: int) -> list[str]:
    text = files("skate.games.cop").joinpath("data", "cruxeval.jsonl").read_text(encoding="utf-8")
    items = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [f"{it['code']}\nprint(repr(f({it['input']})))\n" for it in items[:n]]


def bare(programs: list[str], workers: int, flags: tuple[str, ...]) -> float:
    python = os.path.realpath(sys.executable)

    def one(code: str) -> int:
        return subprocess.run([python, *flags, "-c", code], capture_output=True, stdin=subprocess.DEVNULL,
                              timeout=LIMITS.timeout_s).returncode

    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        codes = list(pool.map(one, programs))
    elapsed = time.perf_counter() - start
    assert all(c == 0 for c in codes), "a snippet failed outside the sandbox"
    return len(programs) / elapsed


def through(sandbox, programs: list[str]) -> float:
    start = time.perf_counter()
    results = sandbox.run_many(programs)
    elapsed = time.perf_counter() - start
    bad = [r for r in results if r.outcome is not Outcome.OK]
    assert not bad, f"{len(bad)} snippets failed in {sandbox.name}: {bad[0]}"
    return len(programs) / elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=400, help="snippets per measurement")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()
    programs = snippets(args.n)

    rows: dict[str, list[float]] = {}
    startup: dict[str, float] = {}
    sandboxes = {}
    for name, cls in (("nsjail", NsjailSandbox), ("bwrap", BwrapSandbox), ("subprocess", SubprocessSandbox)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UnsafeSandboxWarning)
                sb = cls(LIMITS, workers=args.workers)
            t = time.perf_counter()
            if hasattr(sb, "start"):
                sb.start()
            startup[name] = time.perf_counter() - t
            sb.run_many(programs[: args.workers * 4])  # warm the page cache and the workers
            sandboxes[name] = sb
        except SandboxUnavailable as exc:
            print(f"skipping {name}: {exc}", file=sys.stderr)
    bare(programs[: args.workers * 4], args.workers, ())

    for _ in range(args.repeats):  # interleave, so drift in machine load hits every row alike
        rows.setdefault("bare python -c", []).append(bare(programs, args.workers, ()))
        rows.setdefault("bare python -I -S -c", []).append(bare(programs, args.workers, ("-I", "-S")))
        for name, sb in sandboxes.items():
            rows.setdefault(name, []).append(through(sb, programs))
    for sb in sandboxes.values():
        sb.close()

    base = statistics.median(rows["bare python -c"])
    print(f"{args.n} CRUXEval snippets, {args.workers} in flight, median of {args.repeats} "
          f"(python {sys.version.split()[0]}, {os.cpu_count()} cores)\n")
    print("| runner | executions/s | × bare `python -c` | jail start-up |")
    print("|---|---:|---:|---:|")
    out = {}
    for name, vals in rows.items():
        med = statistics.median(vals)
        up = f"{startup[name] * 1000:.0f} ms" if name in startup and name != "subprocess" else "–"
        print(f"| {name} | {med:.0f} | {med / base:.2f} | {up} |")
        out[name] = {"per_s": vals, "median_per_s": med, "ratio_to_bare": med / base,
                     "startup_s": startup.get(name)}
    if args.json:
        args.json.write_text(json.dumps({"n": args.n, "workers": args.workers, "rows": out}, indent=2))


if __name__ == "__main__":
    main()

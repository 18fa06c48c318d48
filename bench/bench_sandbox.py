"""Sandbox throughput: executions per second through each sandbox versus bare ``python -c``.

The snippets are CRUXEval programs (``skate/games/cop/data/cruxeval.jsonl``), each printing ``f(input)``:
short, realistic code-output-prediction programs. The baseline runs every snippet as
``python -c SNIPPET`` in a plain subprocess with its output captured, with as many in flight as
the sandboxes get (``--workers``, default one per core). Jail start-up is measured separately and
excluded from the throughput (a game pays it once per worker). Besides executions per second (which
other work on the machine drags down), each row gives the CPU time one execution costs, everything
included: the host's threads, the jail's processes, the interpreter (jail start-up excluded). Each
jail runs twice: warm (the
default, ``sandbox.warm=true``: programs forked from a zygote in the jail) and cold
(``sandbox.warm=false``: a fresh interpreter exec'd per program).

    .venv/bin/python bench/bench_sandbox.py              # all sandboxes, 400 snippets, 3 repeats
    .venv/bin/python bench/bench_sandbox.py --n 800 --repeats 5 --json results.json
    .venv/bin/python bench/bench_sandbox.py --starts warm  # the jails warm only
    .venv/bin/python bench/bench_sandbox.py --memory-bound rlimit  # no memory cgroup
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from importlib.resources import files
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skate.sandbox import (
    BwrapSandbox,
    Limits,
    NsjailSandbox,
    Outcome,
    SandboxUnavailable,
    SubprocessSandbox,
    UnsafeSandboxWarning,
)

LIMITS = Limits(timeout_s=10, cpu_s=10, memory_mb=512, max_output_bytes=65536)


def snippets(n: int) -> list[str]:
    text = files("skate.games.cop").joinpath("data", "cruxeval.jsonl").read_text(encoding="utf-8")
    items = [json.loads(line) for line in text.splitlines() if line.strip()]
    return [f"{it['code']}\nprint(repr(f({it['input']})))\n" for it in items[:n]]


def cpu_s(who: int) -> float:
    use = resource.getrusage(who)
    return use.ru_utime + use.ru_stime


def bare(programs: list[str], workers: int, flags: tuple[str, ...]) -> tuple[float, float]:
    """Executions per second, and CPU seconds spent (this process and the interpreters)."""
    python = os.path.realpath(sys.executable)

    def one(code: str) -> int:
        return subprocess.run(
            [python, *flags, "-c", code], capture_output=True, stdin=subprocess.DEVNULL, timeout=LIMITS.timeout_s
        ).returncode

    cpu = cpu_s(resource.RUSAGE_SELF) + cpu_s(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        codes = list(pool.map(one, programs))
    elapsed = time.perf_counter() - start
    assert all(c == 0 for c in codes), "a snippet failed outside the sandbox"
    return len(programs) / elapsed, cpu_s(resource.RUSAGE_SELF) + cpu_s(resource.RUSAGE_CHILDREN) - cpu


def through(sandbox, programs: list[str]) -> tuple[float, float]:
    """Executions per second, and CPU seconds spent by this process and the processes it reaped
    meanwhile (the subprocess sandbox's interpreters; a jail's is counted when it ends)."""
    cpu = cpu_s(resource.RUSAGE_SELF) + cpu_s(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    results = sandbox.run_many(programs)
    elapsed = time.perf_counter() - start
    bad = [r for r in results if r.outcome is not Outcome.OK]
    assert not bad, f"{len(bad)} snippets failed in {sandbox.name}: {bad[0]}"
    return len(programs) / elapsed, cpu_s(resource.RUSAGE_SELF) + cpu_s(resource.RUSAGE_CHILDREN) - cpu


def jail_cpu_s(sb) -> float:
    """CPU seconds the sandbox's jails spent in their lives, counted as they end (close)."""
    before = cpu_s(resource.RUSAGE_CHILDREN)
    sb.close()
    return cpu_s(resource.RUSAGE_CHILDREN) - before


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=400, help="snippets per measurement")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--starts", default="warm,cold", help="jail starts to measure: warm, cold or both")
    ap.add_argument(
        "--memory-bound",
        default="auto",
        choices=["auto", "cgroup", "rlimit"],
        help="what bounds a program's memory in the jails (sandbox.memory_bound)",
    )
    args = ap.parse_args()
    starts = [s for s in args.starts.split(",") if s]
    programs = snippets(args.n)

    rows: dict[str, list[float]] = {}
    cpu: dict[str, float] = {}  # CPU seconds over every measured execution
    runs: dict[str, int] = {}
    startup: dict[str, float] = {}
    startup_cpu: dict[str, float] = {}  # what building the jails (and warming them up) cost
    sandboxes = {}
    kinds = [
        (f"{name} ({start})", cls, {"warm": start == "warm", "memory_bound": args.memory_bound})
        for name, cls in (("nsjail", NsjailSandbox), ("bwrap", BwrapSandbox))
        for start in starts
    ]
    for name, cls, settings in kinds + [("subprocess", SubprocessSandbox, {})]:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UnsafeSandboxWarning)
                sb = cls(limits=LIMITS, workers=args.workers, **settings)
                if name != "subprocess":  # the CPU of a start-up and warm-up alone, subtracted below
                    alone = cls(limits=LIMITS, workers=args.workers, **settings)
                    alone.start()
                    alone.run_many(programs[: args.workers * 4])
                    startup_cpu[name] = jail_cpu_s(alone)
            t = time.perf_counter()
            if hasattr(sb, "start"):
                sb.start()
            startup[name] = time.perf_counter() - t
            sb.run_many(programs[: args.workers * 4])  # warm the page cache and the workers
            if settings.get("warm") and not all(w.warm for w in sb._all):
                print(f"{name}: the jail could not start its zygotes and runs cold", file=sys.stderr)
            sandboxes[name] = sb
        except SandboxUnavailable as exc:
            print(f"skipping {name}: {exc}", file=sys.stderr)
    bare(programs[: args.workers * 4], args.workers, ())

    def record(name: str, per_s: float, spent: float) -> None:
        rows.setdefault(name, []).append(per_s)
        cpu[name] = cpu.get(name, 0.0) + spent
        runs[name] = runs.get(name, 0) + len(programs)

    for _ in range(args.repeats):  # interleave, so drift in machine load hits every row alike
        record("bare python -c", *bare(programs, args.workers, ()))
        record("bare python -I -S -c", *bare(programs, args.workers, ("-I", "-S")))
        for name, sb in sandboxes.items():
            record(name, *through(sb, programs))
    for name, sb in sandboxes.items():
        cpu[name] += jail_cpu_s(sb) - startup_cpu.get(name, 0.0)

    base = statistics.median(rows["bare python -c"])
    print(
        f"{args.n} CRUXEval snippets, {args.workers} in flight, median of {args.repeats} "
        f"(python {sys.version.split()[0]}, {os.cpu_count()} cores, load average at the end "
        f"{os.getloadavg()[0]:.1f})\n"
    )
    base_cpu = cpu["bare python -c"] / runs["bare python -c"]
    print("| runner | executions/s | × bare `python -c` | CPU ms / execution | × less CPU than bare | jail start-up |")
    print("|---|---:|---:|---:|---:|---:|")
    out = {}
    for name, vals in rows.items():
        med = statistics.median(vals)
        per = cpu[name] / runs[name]
        up = f"{startup[name] * 1000:.0f} ms" if name in startup and name != "subprocess" else "–"
        print(f"| {name} | {med:.0f} | {med / base:.2f} | {per * 1000:.2f} | {base_cpu / per:.2f} | {up} |")
        out[name] = {
            "per_s": vals,
            "median_per_s": med,
            "ratio_to_bare": med / base,
            "cpu_s_per_execution": per,
            "startup_s": startup.get(name),
        }
    if args.json:
        args.json.write_text(json.dumps({"n": args.n, "workers": args.workers, "rows": out}, indent=2))


if __name__ == "__main__":
    main()

"""Load (issue 14): many LLM players against a flaky loopback server, and a long, wide simulated game.

Two scenarios, one per run (each in its own process, so that the memory figures are its own):

``llm``: 20 LLM players (fake models with skills spread over 0.10-0.95), every model with 20%
injected transient faults (rate_limit 0.07, server_error 0.07, malformed 0.06, each request),
64 requests in flight (``llm.concurrency=64``), cache off. The fake server
(:class:`skate.llm.fake_server.FakeLLMServer`) runs in this process, on a thread, so its
counters (requests, faults, most in flight) can be read; it shares the 2 cores and the GIL with
the engine. Prints wall time, requests, most in flight, faults, retries, void requests and
samples, estimates (and how many are void), valid tasks, rating updates and the peak RSS, and
checks that nothing was lost: every fault was retried or ended in a logged void call, every
(task, player) pair has an estimate, every void sample is counted as void (never as a wrong
answer), every valid task was rated between the players it has a p(correct) for.

``sim``: N simulated players (default 50, skills spread over 0.28-0.92) for R rounds (default
50) of the default game (COP, Algorithm 1, TrueSkill, hist_perf) unless overridden. A run logger
(:class:`RoundMeter`, the settings' ``logger``) records after each round the round's wall
wall time and CPU time (this process's, and the sandbox's: every descendant process and the
programs they ran), this process's resident memory (``VmRSS``), the sandbox workers' resident
memory, the size of ``events.jsonl`` and the machine's 1-minute load average (above
2 on 2 cores, something else was competing for them). Prints one row per round and a summary:
peak RSS (``VmHWM``), RSS after rounds 1, 10, and R, growth from round 10 to R, time per round
early and late. ``--trace A B`` also takes ``tracemalloc`` snapshots after rounds A and B and
prints the 12 source lines whose live allocations grew most between them (slow: for a shorter
investigation run, not for the timings).

``cli``: the same cohort through the command a user types, ``python -m skate`` (the default
logger, W&B offline, and the report, unless overridden), watched from outside: its resident
memory and that of the processes below it (sandbox workers, W&B's service) at each round's end
(read from ``events.jsonl``), its peak RSS (``wait4``), and the time after the last round.

Usage:
    .venv/bin/python bench/bench_load.py llm                       # 3 rounds, fixed_n n=2, 0.1 s latency
    .venv/bin/python bench/bench_load.py llm --rounds 3 estimator=algorithm1
    .venv/bin/python bench/bench_load.py sim                       # 50 players x 50 rounds
    .venv/bin/python bench/bench_load.py sim --players 50 --rounds 12 --trace 4 12
    .venv/bin/python bench/bench_load.py sim game=mathquiz
    .venv/bin/python bench/bench_load.py cli --rounds 10              # python -m skate, defaults
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skate.loggers.base import LoggerConfig, RunLogger, logger  # noqa: E402 - after sys.path takes the repository
from skate.settings.options import build_settings  # noqa: E402 - after sys.path takes the repository

FAULTS = {"rate_limit": 0.07, "server_error": 0.07, "malformed": 0.06}  # 20% per request, all retried


# ------------------------------------------------------------------------------------ memory
def _status_kb(pid: int | str, key: str) -> int:
    """A ``/proc/<pid>/status`` field in kB (0 when the process or the field is gone)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def rss_mb() -> float:
    return _status_kb("self", "VmRSS") / 1024


def peak_rss_mb() -> float:
    return _status_kb("self", "VmHWM") / 1024


def descendants() -> set[int]:
    """Every process below this one (the sandbox's workers and what they run)."""
    return descendants_of(os.getpid())


def workers_usage() -> tuple[float, float]:
    """(resident MB, CPU seconds) of every process below this one; the CPU seconds include the
    children they have reaped (each program the sandbox ran)."""
    rss, cpu = 0.0, 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for pid in descendants():
        rss += _status_kb(pid, "VmRSS") / 1024
        try:
            with open(f"/proc/{pid}/stat") as fh:
                f = fh.read().rsplit(")", 1)[1].split()
            cpu += sum(int(x) for x in f[11:15]) / tick  # utime, stime, cutime, cstime
        except (OSError, IndexError, ValueError):
            pass
    return rss, cpu


# ------------------------------------------------------------------------------ round meter
@dataclass
class RoundMeterConfig(LoggerConfig):
    """The round meter's settings (it has none): the run's ``logger`` section that builds it."""


@logger.register("round_meter", RoundMeterConfig)
class RoundMeter(RunLogger):
    """A run logger (``logger=RoundMeterConfig()``) measuring every round; the last one built is
    ``RoundMeter.last``."""

    last: RoundMeter | None = None
    trace: tuple[int, ...] = ()  # rounds after which to take a tracemalloc snapshot

    def __init__(self, settings: RoundMeterConfig | None = None, /) -> None:
        super().__init__(settings)
        RoundMeter.last = self
        self.rows: list[dict[str, Any]] = []
        self.snapshots: dict[int, Any] = {}
        self.events: Path | None = None
        self.t, self.cpu, self.wcpu = time.perf_counter(), time.process_time(), 0.0

    def bind(self, out_dir: Path, config: dict[str, Any], events: Path) -> None:
        self.events = Path(events)

    def start(self, info: dict[str, Any]) -> None:
        self.t, self.cpu, self.wcpu = time.perf_counter(), time.process_time(), workers_usage()[1]  # round 1 starts

    def round_end(self, round: int, rounds: int, summary: dict[str, Any], table: list[dict[str, Any]]) -> None:
        now, cpu = time.perf_counter(), time.process_time()
        wrss, wcpu = workers_usage()
        row = {
            "round": round,
            "s": now - self.t,
            "cpu": cpu - self.cpu,
            "wcpu": wcpu - self.wcpu,
            "rss": rss_mb(),
            "workers": wrss,
            "events_mb": self.events.stat().st_size / 2**20 if self.events and self.events.exists() else 0.0,
            "tasks": summary["tasks"],
            "samples": summary["samples"],
            "updates": summary["updates"],
            "load": os.getloadavg()[0],
        }
        self.rows.append(row)
        print(
            f"| {round} | {row['s']:.1f} | {row['cpu']:.1f} | {row['wcpu']:.1f} | {row['rss']:.0f} | {row['workers']:.0f} | {row['events_mb']:.0f} | "
            f"{row['tasks']} | {row['samples']} | {row['updates']} | {row['load']:.1f} |",
            flush=True,
        )
        if round in self.trace:
            import tracemalloc

            self.snapshots[round] = tracemalloc.take_snapshot()
        # The measuring itself is not charged to the next round.
        self.t, self.cpu, self.wcpu = time.perf_counter(), time.process_time(), workers_usage()[1]


def spread_players(n: int) -> list[dict[str, Any]]:
    """``n`` simulated players, strongest first: skills 0.92 down to 0.28, pitched like the
    default cohort (strong players start too easy, weak ones too hard), sloppier when weaker."""
    out = []
    for i in range(n):
        f = i / max(1, n - 1)
        out.append(
            {
                "name": f"sim-{i:02d}",
                "skill": round(0.92 - 0.64 * f, 3),
                "pitch": round(-0.25 + 0.5 * f, 3),
                "sloppiness": round(0.10 + 0.15 * f, 3),
            }
        )
    return out


def as_override(items: list[dict[str, Any]]) -> str:
    """A list of flat dicts as a Hydra override value: ``[{name: a, skill: 0.9}, ...]``."""
    return "[" + ", ".join("{" + ", ".join(f"{k}: {v}" for k, v in d.items()) + "}" for d in items) + "]"


# ------------------------------------------------------------------------------------- sim
def run_sim(args: argparse.Namespace) -> None:
    import tracemalloc

    from skate.cli.compose import compose_config
    from skate.runner import run_game

    meter_cls = RoundMeter
    meter_cls.trace = tuple(args.trace or ())
    if args.trace:
        tracemalloc.start(1)
    players = spread_players(args.players)
    cfg = compose_config(
        [
            f"players.simulated={as_override(players)}",
            "logger=none",
            "report=false",
            f"game.rounds={args.rounds}",
            f"seed={args.seed}",
            *args.overrides,
        ]
    )
    print(
        f"python {platform.python_version()}, {os.cpu_count()} cores; {args.players} simulated players, "
        f"{args.rounds} rounds, game={cfg.game.name}, estimator={cfg.estimator._target_.rsplit('.', 1)[-1]}, "
        f"rating={cfg.rating._target_.rsplit('.', 1)[-1]}, seed {args.seed}, overrides: {args.overrides or 'none'}"
        f"{', tracemalloc on' if args.trace else ''}\n"
    )
    print(
        "| round | wall s | CPU s | sandbox CPU s | RSS MB | sandbox workers MB | events.jsonl MB | tasks | samples "
        "| rating updates | load |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|", flush=True)
    rss0 = rss_mb()
    prof = None
    if args.profile:
        import cProfile

        prof = cProfile.Profile()
    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
        t0 = time.perf_counter()
        if prof is not None:
            prof.enable()
        result = run_game(replace(build_settings(cfg), logger=RoundMeterConfig()), Path(tmp) / "run")
        if prof is not None:
            prof.disable()
        wall = time.perf_counter() - t0
    rows = meter_cls.last.rows
    by = {r["round"]: r for r in rows}
    last = rows[-1]["round"]

    def mean_s(lo: int, hi: int, key: str = "s") -> float:
        xs = [by[r][key] for r in range(lo, hi + 1) if r in by]
        return sum(xs) / len(xs) if xs else math.nan

    print(
        f"\nwall {wall:.0f} s ({wall / 60:.1f} min) for {last} rounds; RSS before the game {rss0:.0f} MB; "
        f"peak RSS (VmHWM) {peak_rss_mb():.0f} MB; sandbox workers at the end {rows[-1]['workers']:.0f} MB"
    )
    marks = [r for r in (1, 2, 5, 10, 20, 30, 40, 50, last) if r in by]
    print("RSS after round " + ", ".join(f"{r}: {by[r]['rss']:.0f} MB" for r in dict.fromkeys(marks)))
    if 10 in by and last > 10:
        grow = by[last]["rss"] - by[10]["rss"]
        print(
            f"RSS growth from round 10 to {last}: {grow:+.0f} MB ({grow / (last - 10):+.2f} MB per round); "
            f"events.jsonl {by[last]['events_mb']:.0f} MB"
        )
    q = max(1, last // 5)
    for key, what in (("s", "wall"), ("cpu", "CPU (this process)"), ("wcpu", "CPU (sandbox)")):
        print(
            f"{what} seconds per round: rounds 2-{1 + q} {mean_s(2, 1 + q, key):.1f}, rounds {last - q + 1}-{last} "
            f"{mean_s(last - q + 1, last, key):.1f}; round 1 {by[1][key]:.1f}"
        )
    s = result.summary
    print(
        f"tasks {s.tasks}, attempts {s.attempts}, samples {s.samples}, estimates {s.estimates}, "
        f"rating updates {s.updates}, sandbox executions {s.sandbox_executions}; "
        f"events.jsonl {rows[-1]['events_mb']:.1f} MB"
    )
    from scipy.stats import kendalltau, spearmanr

    true = {p["name"]: p["skill"] for p in players}
    scored = [(true[r["player"]], r["score"]) for r in result.table if r.get("score") is not None]
    tau, rho = kendalltau(*zip(*scored, strict=False))[0], spearmanr(*zip(*scored, strict=False))[0]
    print(f"the ranking against true skill: Kendall tau {tau:.3f}, Spearman rho {rho:.3f} ({len(scored)} players)")
    if prof is not None:
        print_profile(prof)
    if args.trace and len(meter_cls.last.snapshots) == 2:
        mine = [tracemalloc.Filter(False, tracemalloc.__file__)]  # not the snapshots themselves
        a, b = (meter_cls.last.snapshots[r].filter_traces(mine) for r in args.trace)
        print(f"\ntracemalloc: live allocations that grew most from round {args.trace[0]} to {args.trace[1]}\n")
        print("| source line | grew MB | live MB at the end | blocks grew |")
        print("|---|---:|---:|---:|")
        for st in b.compare_to(a, "lineno")[:12]:
            frame = st.traceback[0]
            where = f"{os.path.relpath(frame.filename, ROOT) if frame.filename.startswith(str(ROOT)) else frame.filename}:{frame.lineno}"
            where = where.replace(sys.prefix, "<venv>").replace(sys.base_prefix, "<python>")
            print(f"| `{where}` | {st.size_diff / 2**20:+.1f} | {st.size / 2**20:.1f} | {st.count_diff:+d} |")


PROFILED = [  # (what, file, function): the engine's main thread, where simulated players answer
    ("the whole game (Engine.run)", "skate/engine.py", "run"),
    ("rating updates and their log lines (Engine._rate)", "skate/engine.py", "_rate"),
    ("  TrueSkill updates (TrueSkillRating._pair)", "skate/ratings/trueskill_backend.py", "_pair"),
    ("  their log lines (Engine._log_updates)", "skate/engine.py", "_log_updates"),
    ("estimates (Engine._task_estimates)", "skate/engine.py", "_task_estimates"),
    ("every event line (EventLog.write)", "skate/runlog/files.py", "write"),
]


def print_profile(prof: Any) -> None:
    """Cumulative seconds in a few engine functions (main thread only: the setters' threads are
    not profiled, their time shows as the main thread waiting)."""
    import pstats

    stats = pstats.Stats(prof).stats  # (file, line, function) -> (calls, ncalls, tottime, cumtime, callers)
    total = next((v[3] for k, v in stats.items() if k[0].endswith("skate/engine.py") and k[2] == "run"), 0.0)
    print("\ncProfile (the main thread; wall seconds under the profiler)\n")
    print("| where | s | share of the game |\n|---|---:|---:|")
    for what, file, func in PROFILED:
        cum = sum(v[3] for k, v in stats.items() if k[0].endswith(file) and k[2] == func)
        if cum:
            print(f"| {what} | {cum:.1f} | {cum / total:.0%} |")


# ------------------------------------------------------------------------------------- cli
def descendants_of(root: int) -> set[int]:
    """Every process below ``root``."""
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    parent[int(entry)] = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    mine, frontier = set(), {root}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier and p not in mine}
        mine |= frontier
    return mine


def run_cli(args: argparse.Namespace) -> None:
    """The command a user types (``python -m skate``, default logger and report unless overridden),
    watched from outside: its resident memory every half second, each round's end from its
    ``events.jsonl`` (the ``ts`` of each ``round_end``), its peak RSS from ``wait4``."""
    import subprocess
    import threading

    players = spread_players(args.players)
    tmp = Path(tempfile.mkdtemp(prefix="bench-load-cli-"))
    out = tmp / "run"
    cmd = [
        sys.executable,
        "-m",
        "skate",
        f"players.simulated={as_override(players)}",
        f"game.rounds={args.rounds}",
        f"seed={args.seed}",
        f"hydra.run.dir={out}",
        *args.overrides,
    ]
    print(
        f"python {platform.python_version()}, {os.cpu_count()} cores; python -m skate with {args.players} simulated "
        f"players, {args.rounds} rounds, seed {args.seed}, overrides: {args.overrides or 'none'}\n"
    )
    print("| round | wall s | RSS MB | other processes MB | events.jsonl MB | load |")
    print("|---:|---:|---:|---:|---:|---:|", flush=True)
    t0 = time.time()
    proc = subprocess.Popen(
        cmd,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "WANDB_SILENT": "true"},
    )
    rows: list[dict[str, Any]] = []
    stop = threading.Event()
    err: list[str] = []

    def watch() -> None:
        offset, last_ts = 0, t0
        events = out / "events.jsonl"
        while not stop.wait(0.5):
            if not events.exists():
                continue
            with open(events, "rb") as fh:
                fh.seek(offset)
                chunk = fh.read()
            cut = chunk.rfind(b"\n") + 1
            offset += cut
            for line in chunk[:cut].splitlines():
                if line.startswith(b'{"event": "round_end"'):
                    e = json.loads(line)
                    others = sum(_status_kb(p, "VmRSS") for p in descendants_of(proc.pid)) / 1024
                    rows.append(
                        {
                            "round": e["round"],
                            "s": e["ts"] - last_ts,
                            "rss": _status_kb(proc.pid, "VmRSS") / 1024,
                            "others": others,
                            "events_mb": offset / 2**20,
                            "load": os.getloadavg()[0],
                        }
                    )
                    last_ts = e["ts"]
                    r = rows[-1]
                    print(
                        f"| {r['round']} | {r['s']:.1f} | {r['rss']:.0f} | {r['others']:.0f} | {r['events_mb']:.0f} | "
                        f"{r['load']:.1f} |",
                        flush=True,
                    )

    threading.Thread(target=lambda: err.append(proc.stderr.read()), daemon=True).start()
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.time() - t0
    stop.set()
    watcher.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    end = (
        json.loads(
            next(
                line
                for line in reversed((out / "events.jsonl").read_text().splitlines())
                if line.startswith('{"event": "round_end"')
            )
        )["ts"]
        if rows
        else t0
    )
    print(
        f"\nexit status {proc.returncode}; wall {wall:.0f} s ({wall / 60:.1f} min), of which {time.time() - end:.0f} s "
        f"after the last round (table, report, W&B); peak RSS of the skate process (wait4) "
        f"{usage.ru_maxrss / 1024:.0f} MB"
    )
    if len(rows) > 10:
        by = {r["round"]: r for r in rows}
        last = rows[-1]["round"]
        grow = by[last]["rss"] - by[10]["rss"]
        print(f"RSS growth from round 10 to {last}: {grow:+.0f} MB ({grow / (last - 10):+.2f} MB per round)")
    if proc.returncode:
        print("stderr (last lines):\n" + "\n".join((err[0] if err else "").splitlines()[-15:]))
    subprocess.run(["rm", "-rf", str(tmp)], check=False)


# ------------------------------------------------------------------------------------- llm
def llm_players(base: str, names: list[str]) -> str:
    return (
        "["
        + ", ".join(
            f"{{name: {n}, model: openai/{n}, api_base: '{base}', api_key_env: SKATE_TEST_NO_KEY}}" for n in names
        )
        + "]"
    )


def run_llm(args: argparse.Namespace) -> None:
    from skate.cli.compose import compose_config
    from skate.llm.fake_server import FakeLLMServer, FakeModel
    from skate.runlog.events import (
        AttemptMade,
        Estimated,
        ModelCallVoid,
        TaskRated,
        TaskSet,
        read_run,
    )
    from skate.runner import run_game

    names = [f"m{i:02d}" for i in range(args.players)]
    models = {
        n: FakeModel(round(0.10 + 0.85 * i / max(1, args.players - 1), 3), dict(FAULTS)) for i, n in enumerate(names)
    }
    print(
        f"python {platform.python_version()}, {os.cpu_count()} cores; {args.players} fake LLM players, faults "
        f"{FAULTS} per request, latency {args.latency} s, llm.concurrency={args.concurrency}, {args.rounds} rounds, "
        f"overrides: {args.overrides or 'none'}\n",
        flush=True,
    )
    with (
        tempfile.TemporaryDirectory(prefix="bench-load-llm-") as tmp,
        FakeLLMServer(models, latency_s=args.latency, retry_after_s=0.05, fault_seed=args.seed) as srv,
    ):
        fixed = not any(o.startswith("estimator=") for o in args.overrides)  # else the override's estimator
        estimator = ["estimator=fixed_n", f"estimator.n={args.n}"] if fixed else []
        cfg = compose_config(
            [
                f"game={args.game}",
                f"game.rounds={args.rounds}",
                "logger=none",
                "report=false",
                "players.simulated=[]",
                f"players.llm={llm_players(srv.api_base, names)}",
                *estimator,
                "llm.cache=false",
                f"llm.concurrency={args.concurrency}",
                "llm.backoff_s=0.05",
                "llm.max_backoff_s=1.0",
                f"seed={args.seed}",
                *args.overrides,
            ]
        )
        t0, cpu0 = time.perf_counter(), time.process_time()
        result = run_game(build_settings(cfg), Path(tmp) / "run")
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        run = read_run(Path(tmp) / "run")
        game_log = [r for r in srv.log if r.get("max_tokens") != 1]  # preflight probes ask for one token
        stats = srv.stats
    usage = result.summary.usage["total"]
    faults = Counter(r["fault"] for r in game_log if r["fault"])
    voids = run.of(ModelCallVoid)
    ests = run.of(Estimated)
    tasks = run.of(TaskSet)
    rated = {r.task_id: r for r in run.of(TaskRated)}  # the ratings once per task
    void_attempts = sum(1 for a in run.of(AttemptMade) if a.reason == "void")
    s = result.summary
    rows = [
        ("wall s (CPU s of this process, server included)", f"{wall:.1f} ({cpu:.1f})"),
        ("requests to the server (game / all)", f"{len(game_log)} / {stats.requests}"),
        ("most requests in flight", stats.max_in_flight),
        ("requests per second", f"{len(game_log) / wall:.0f}"),
        (
            "faults injected (rate_limit, server_error, malformed)",
            f"{sum(faults.values())} ({faults['rate_limit']}, {faults['server_error']}, {faults['malformed']})",
        ),
        ("retries", usage["retries"]),
        ("void requests (all retries failed) / void samples", f"{len(voids)} / {usage['void']}"),
        ("samples asked for", usage["samples"]),
        ("valid tasks / attempts (void attempts)", f"{len(tasks)} / {s.attempts} ({void_attempts})"),
        ("estimates (void)", f"{len(ests)} ({sum(1 for e in ests if e.p is None)})"),
        ("rating updates", run.update_count),
        ("peak RSS MB", f"{peak_rss_mb():.0f}"),
    ]
    print("| measure | value |\n|---|---:|")
    for k, v in rows:
        print(f"| {k} | {v} |")
    # Nothing lost.
    problems = []
    if usage["calls"] != len(game_log):
        problems.append(f"client calls {usage['calls']} != game requests {len(game_log)}")
    if sum(faults.values()) != usage["retries"] + len(voids):
        problems.append(f"faults {sum(faults.values())} != retries {usage['retries']} + void requests {len(voids)}")
    if usage["void"] != sum(v.samples for v in voids):
        problems.append("void samples differ between the client and the llm_void events")
    if len(ests) != len(tasks) * args.players:
        problems.append(f"{len(ests)} estimates for {len(tasks)} tasks x {args.players} players")
    if fixed and any(e.n + e.void != args.n for e in ests):
        problems.append("an estimate whose samples and void samples do not add up to n")
    for t in tasks:
        k = sum(1 for e in ests if e.task_id == t.task_id and e.p is not None)
        made = rated[t.task_id].updates if t.task_id in rated else 0
        if made != k * (k - 1) // 2:
            problems.append(f"task {t.task_id}: {made} updates for {k} players with a p(correct)")
    print(
        "\nnothing lost: "
        + (
            "yes (every fault retried or a logged void call; every (task, player) estimated; every valid task rated)"
            if not problems
            else "NO: " + "; ".join(problems[:5])
        )
    )
    print("order (best first): " + " ".join(r["player"] for r in result.table))
    print(json.dumps({"by_fault_all_requests": dict(stats.by_fault), "usage": usage}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario", choices=("llm", "sim", "cli"))
    ap.add_argument("--players", type=int, default=None, help="llm: 20, sim: 50")
    ap.add_argument("--rounds", type=int, default=None, help="llm: 3, sim: 50")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--game", default="cop", help="llm only (sim: pass game=... as an override)")
    ap.add_argument("--n", type=int, default=2, help="llm: fixed_n samples per (task, player)")
    ap.add_argument("--latency", type=float, default=0.1, help="llm: seconds the server waits per request")
    ap.add_argument("--concurrency", type=int, default=64, help="llm: llm.concurrency")
    ap.add_argument(
        "--trace",
        type=int,
        nargs=2,
        metavar=("A", "B"),
        help="sim: tracemalloc snapshots after rounds A and B; print what grew",
    )
    ap.add_argument("--profile", action="store_true", help="sim: cProfile the game (slower); print where it went")
    ap.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. game=mathquiz estimator=fixed_n")
    args = ap.parse_intermixed_args()
    if args.scenario == "llm":
        args.players, args.rounds = args.players or 20, args.rounds or 3
        run_llm(args)
    else:
        args.players, args.rounds = args.players or 50, args.rounds or 50
        (run_sim if args.scenario == "sim" else run_cli)(args)


if __name__ == "__main__":
    main()

"""The game viewer at scale (issue 58): how long a large run's viewer takes to write, how big it
is, and how fast it opens in Chromium and how much memory it takes there.

Three steps, each its own command, so a run played once can be measured again:

``sim OUT``: play N simulated players (default 200, skills spread as bench_load.py spreads them)
for R rounds (default 2) of the default game, into OUT.

``llm OUT``: play fake-server models (default 10; the loopback fake server on a thread, latency
0, the response cache off) until at least ``--calls`` model calls (default 100,000) were made:
every sample its own request (``max_n: 1``), ``estimator=fixed_n`` with ``--n`` samples (default
10), as many rounds as the calls need (a first round measures the calls a round makes).

``open RUN_DIR``: write the run's viewer (``skate view``'s :func:`build_viewer`), print its size
(all its data pieces; what the first view loads: the page, its assets, the run's summary and the
first piece of each table), then open it from ``file://`` in headless Chromium (Debian's, through
playwright) ``--repeat`` times, each in a fresh browser, and print per opening: the time from
navigation to the first table drawn (``data-ready=first``), to every row loaded
(``data-ready=all``), the time to open one task's record, the page's JavaScript heap
(``Performance.getMetrics``), the proportional set size (PSS, /proc/PID/smaps_rollup) of the
renderer processes and of every Chromium process together, after the rows are loaded and a task is
open; and, first, the same of Chromium with an empty page.

Usage:
    .venv/bin/python bench/bench_viewer.py sim /tmp/v200 --players 200 --rounds 2
    .venv/bin/python bench/bench_viewer.py llm /tmp/v100k --calls 100000
    .venv/bin/python bench/bench_viewer.py open /tmp/v200 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def play_sim(args: argparse.Namespace) -> None:
    from bench.bench_load import as_override, spread_players
    from skate.cli.compose import compose_config
    from skate.runner import run_game
    from skate.settings.options import build_settings

    cfg = compose_config(
        [
            f"players.simulated={as_override(spread_players(args.players))}",
            "logger=none",
            "report=false",
            "print_table=false",
            f"game.rounds={args.rounds}",
            *args.overrides,
        ]
    )
    t0 = time.perf_counter()
    run_game(build_settings(cfg), args.out)
    print(f"{args.players} simulated players, {args.rounds} rounds: {time.perf_counter() - t0:.0f} s -> {args.out}")


def play_llm(args: argparse.Namespace) -> None:
    from skate.cli.compose import compose_config
    from skate.llm.fake_server import FakeLLMServer, FakeModel
    from skate.runner import run_game
    from skate.settings.options import build_settings

    names = [f"fake-{i:02d}" for i in range(args.players)]
    models = {
        n: FakeModel(
            round(0.1 + 0.85 * i / max(1, args.players - 1), 3), thinking="reasoning_content" if i % 3 == 0 else ""
        )
        for i, n in enumerate(names)
    }
    cohort = (
        "[" + ", ".join(f"{{name: {n}, model: hosted_vllm/{n}, api_base: '{{base}}', max_n: 1}}" for n in names) + "]"
    )

    def settings(base: str, rounds: int, cache: Path):
        return build_settings(
            compose_config(
                [
                    "game=cop",
                    f"game.rounds={rounds}",
                    "logger=none",
                    "report=false",
                    "print_table=false",
                    "players.simulated=[]",
                    f"players.llm={cohort.replace('{base}', base)}",
                    "estimator=fixed_n",
                    f"estimator.n={args.n}",
                    "llm.cache=false",
                    f"llm.cache_dir={cache}",
                    "llm.structured=off",
                    "llm.concurrency=16",
                    *args.overrides,
                ]
            )
        )

    with FakeLLMServer(models) as srv:
        probe = args.out.with_name(args.out.name + "-probe")
        shutil.rmtree(probe, ignore_errors=True)
        run_game(settings(srv.api_base, 1, probe / "cache"), probe)
        per_round = json.loads((probe / "usage.json").read_text())["total"]["calls"]
        shutil.rmtree(probe, ignore_errors=True)
        rounds = -(-args.calls // per_round) + 1
        print(f"{per_round} calls in a round: playing {rounds} rounds", flush=True)
        t0 = time.perf_counter()
        run_game(settings(srv.api_base, rounds, args.out / ".cache"), args.out)
    calls = json.loads((args.out / "usage.json").read_text())["total"]["calls"]
    print(
        f"{args.players} fake models, {rounds} rounds, {calls:,} model calls: {time.perf_counter() - t0:.0f} s "
        f"-> {args.out}"
    )


def pss_mb(pids: set[int]) -> float:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def chromium_pids(kind: bytes | None = None) -> set[int]:
    """The Chromium processes (``kind``: only those started with ``--type=<kind>``, e.g. renderer)."""
    out = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes()  # a child's is one string: program and flags, spaced
            except OSError:
                continue
            if b"chromium" in cmd.split(b"\0")[0].split(b" ")[0] and (kind is None or b"--type=" + kind + b" " in cmd):
                out.add(int(d.name))
    return out


def open_viewer(args: argparse.Namespace) -> None:
    from playwright.sync_api import sync_playwright

    from skate.report.viewer import build_viewer

    run = args.run_dir
    sizes = {f.name: f.stat().st_size for f in (run / "events.jsonl", run / "replies.jsonl") if f.exists()}
    t0 = time.perf_counter()
    page_path, notes = build_viewer(run)
    built = time.perf_counter() - t0
    viewer = page_path.parent
    data = sorted((viewer / "data").iterdir())
    meta = json.loads((viewer / "data" / "meta-0000.js").read_text()[len('skateData("meta",0,') : -3])
    first = [
        page_path,
        *(viewer / "assets").iterdir(),
        viewer / "data" / "meta-0000.js",
        viewer / "data" / "tasks-0000.js",
        viewer / "data" / "attempts-0000.js",
    ]
    mb = 1 / 2**20
    print(
        f"run: {run}; {meta['counts']['tasks']:,} tasks, {meta['counts']['attempts']:,} attempts, "
        f"{meta['counts']['estimates']:,} estimates, {len(meta['players'])} players; "
        + ", ".join(f"{k} {v * mb:.1f} MB" for k, v in sizes.items())
    )
    print(
        f"viewer written in {built:.1f} s: {len(data)} data pieces, {sum(f.stat().st_size for f in data) * mb:.1f} MB "
        f"(largest {max(f.stat().st_size for f in data) * mb:.2f} MB); the first view loads "
        f"{sum(f.stat().st_size for f in first if f.exists()) * mb:.2f} MB"
    )
    exe = shutil.which("chromium")
    before = chromium_pids()
    with sync_playwright() as pw:  # what Chromium takes with an empty page, for comparison
        browser = pw.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto("about:blank")
        blank = pss_mb(chromium_pids() - before), pss_mb(chromium_pids(b"renderer") - before)
        browser.close()
    print(f"Chromium with an empty page (about:blank): {blank[0]:.0f} MB PSS in all, its renderers {blank[1]:.0f} MB")
    print(
        "\n| opening | first table ms | every row ms | a task opened ms | JS heap MB | renderers' PSS MB "
        "| Chromium PSS MB, all processes |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    task = (
        meta["counts"]["tasks"]
        and json.loads((viewer / "data" / "tasks-0000.js").read_text()[len('skateData("tasks",0,') : -3])[-1]["id"]
    )
    for k in range(args.repeat):
        before = chromium_pids()
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=exe, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(page_path.as_uri())
            page.wait_for_selector("body[data-ready=all]", timeout=600_000)
            first_ms, all_ms = (int(page.evaluate(f"document.body.dataset.{k}")) for k in ("firstMs", "allMs"))
            t = time.perf_counter()
            page.evaluate(f"location.hash = 'task=' + {json.dumps(task)}")
            page.wait_for_selector("article.task", timeout=60_000)
            task_ms = (time.perf_counter() - t) * 1000
            cdp = page.context.new_cdp_session(page)
            cdp.send("Performance.enable")
            metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
            pss, renderer = pss_mb(chromium_pids() - before), pss_mb(chromium_pids(b"renderer") - before)
            browser.close()
        print(
            f"| {k + 1} | {first_ms:,} | {all_ms:,} | {task_ms:,.0f} | {metrics['JSHeapUsedSize'] * mb:.0f} | "
            f"{renderer:.0f} | {pss:.0f} |",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="step", required=True)
    s = sub.add_parser("sim")
    s.add_argument("out", type=Path)
    s.add_argument("--players", type=int, default=200)
    s.add_argument("--rounds", type=int, default=2)
    s.add_argument("overrides", nargs="*")
    m = sub.add_parser("llm")
    m.add_argument("out", type=Path)
    m.add_argument("--players", type=int, default=10)
    m.add_argument("--calls", type=int, default=100_000)
    m.add_argument("--n", type=int, default=10)
    m.add_argument("overrides", nargs="*")
    o = sub.add_parser("open")
    o.add_argument("run_dir", type=Path)
    o.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    {"sim": play_sim, "llm": play_llm, "open": open_viewer}[args.step](args)


if __name__ == "__main__":
    main()

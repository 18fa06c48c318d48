"""Prompt optimisation on the fake players: the metric before and after, and what it cost.

Usage:
    python bench/bench_optimize.py [--games cop mathquiz scp] [--optimizers bootstrap_fewshot ...]
                                   [--roles answerer] [override ...]

Starts skate's fake OpenAI-compatible server on loopback with three players (ace 0.9, mid 0.6,
and low 0.3 that plays at 0.8 when its prompt carries demonstrations), then, for every game and
optimiser, runs ``skate optimize``'s step with a fresh response cache and program store
(``optimizer.train``/``val`` as configured, 24/12 by default), and prints a Markdown table: per
player and role the held-out metric before and after, the demos kept, the model calls, tokens and
wall time. A second pass with the same store shows what reuse costs (it should be 0 calls).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from skate.cli.compose import compose_config
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.optimize.standalone import run_optimize
from skate.settings.options import build_settings

MODELS = {"ace": FakeModel(0.9), "mid": FakeModel(0.6), "low": FakeModel(0.3, demo_gain=0.5)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", nargs="+", default=["cop", "mathquiz", "scp"])
    ap.add_argument(
        "--optimizers", nargs="+", default=["bootstrap_fewshot", "bootstrap_fewshot_random_search", "mipro_v2"]
    )
    ap.add_argument("--roles", default="answerer", help="comma-separated: answerer,setter")
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    print(
        f"python {platform.python_version()}, {os.cpu_count()} cores, fake players ace 0.9, mid 0.6, "
        f"low 0.3 (+0.5 with demos); overrides: {args.overrides or 'none'}\n"
    )
    print(
        "| game | optimizer | player | role | train | val | before | after | demos | calls | tokens | s | "
        "2nd run calls |"
    )
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with FakeLLMServer(MODELS) as srv, tempfile.TemporaryDirectory() as tmp:
        os.environ["FAKE_LLM_API_BASE"] = srv.api_base
        for game in args.games:
            for opt in args.optimizers:
                folder = Path(tmp) / f"{game}-{opt}"
                cfg = compose_config(
                    [
                        f"game={game}",
                        "players=fake_local",
                        f"optimizer={opt}",
                        f"optimizer.roles=[{args.roles}]",
                        f"optimizer.store={folder}/programs",
                        f"llm.cache_dir={folder}/responses",
                        "logger=none",
                        *args.overrides,
                    ]
                )
                started = time.perf_counter()
                first = run_optimize(build_settings(cfg), folder / "run1")
                wall = time.perf_counter() - started
                second = run_optimize(build_settings(cfg), folder / "run2")
                again = {(r.player, r.role): r.calls for r in second}
                for r in first:
                    fmt = lambda x: f"{x:.3f}" if isinstance(x, float) else "-"  # noqa: E731
                    print(
                        f"| {game} | {opt} | {r.player} | {r.role} | {r.train} | {r.val} | {fmt(r.metric_before)} | "
                        f"{fmt(r.metric_after)} | {r.demos} | {r.calls} | {r.prompt_tokens + r.completion_tokens} | "
                        f"{r.elapsed_s:.1f} | {again[(r.player, r.role)]} |"
                    )
                print(f"<!-- {game} {opt}: {wall:.1f} s wall for the three players -->")


if __name__ == "__main__":
    main()

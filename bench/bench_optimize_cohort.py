"""Prompt optimisation on real models: what DSPy changes for the local cohort, per game, role and model.

Serves the cohort with llama.cpp (``skate local``'s install and cache, one server per
model) and runs ``skate optimize`` (:func:`skate.optimize.standalone.run_optimize`) on it for each game
and optimiser asked for, every model optimising its own prompts. Prints one row per model × game ×
role × optimiser, all measured on the held-out items before and after:

- answerers: accuracy (the metric: the game grades the reply);
- setters: the share of attempts that gave a valid, unique task (the game's own ``validate``:
  sandbox, distractors, self-solving), of those the share that told the players apart (one sample
  each of the setter and the other models: some right, some wrong), and the setter metric;

with the labelled demonstrations given (``optimizer.demos``), the demonstrations compiled, and the
calls and seconds the optimisation cost. The compiled programs go to ``--store``, where a game
played with the same optimiser settings (``skate local cohort optimizer=... optimizer.train=...``)
finds them and makes no optimisation call. ``--json`` keeps every record, with a few of the tasks
each setter wrote on the held-out items before and after.

    .venv/bin/python bench/bench_optimize_cohort.py --games cop --roles setter --models qwen2.5-coder-1.5b,qwen2.5-coder-0.5b
    .venv/bin/python bench/bench_optimize_cohort.py --games cop,mathquiz,pyjail,scp --optimizers bootstrap_fewshot,mipro_v2
    .venv/bin/python bench/bench_optimize_cohort.py --games mathquiz --train 6 --val 6 optimizer.demos=[]   # no labelled demos
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skate.cli import local_game  # noqa: E402
from skate.cli.compose import compose_config  # noqa: E402
from skate.local import models as local_models  # noqa: E402
from skate.local import play as local  # noqa: E402
from skate.local import serving as local_serving  # noqa: E402
from skate.optimize.standalone import run_optimize  # noqa: E402
from skate.settings.options import build_settings  # noqa: E402

GAME_OVERRIDES = {"scp": ["game=scp", "game.mode=player_set", "game.max_doc_age_days=null"]}


def row(game: str, r) -> dict:
    return {
        "model": r.player,
        "game": game,
        "role": r.role,
        "optimizer": r.optimizer,
        "train": r.train,
        "val": r.val,
        "labelled": r.labelled,
        "demos": r.demos,
        "dropped": r.demos_dropped,
        "before": r.metric_before,
        "after": r.metric_after,
        "valid_before": r.valid_before,
        "valid_after": r.valid_after,
        "separating_before": r.separating_before,
        "separating_after": r.separating_after,
        "calls": r.calls,
        "tokens": r.prompt_tokens + r.completion_tokens,
        "s": r.elapsed_s,
        "reused": r.reused,
        "stopped": r.stopped,
        "tasks_before": r.tasks_before,
        "tasks_after": r.tasks_after,
        "rejected_before": r.rejected_before,
        "rejected_after": r.rejected_after,
    }


def num(x) -> str:
    return "–" if x is None else f"{x:.2f}"


def table(rows: list[dict]) -> str:
    head = (
        "| model | game | role | optimizer | labelled / demos | accuracy or metric: before → after "
        "| valid: before → after | separating (of valid) | calls | s |"
    )
    out = [head, "|---|---|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        valid = f"{num(r['valid_before'])} → {num(r['valid_after'])}" if r["role"] == "setter" else ""
        sep = f"{num(r['separating_before'])} → {num(r['separating_after'])}" if r["role"] == "setter" else ""
        note = " (reused)" if r["reused"] else (f" ({r['stopped']})" if r["stopped"] else "")
        out.append(
            f"| {r['model']} | {r['game']} | {r['role']} | {r['optimizer']}{note} | {r['labelled']} / {r['demos']} "
            f"| {num(r['before'])} → {num(r['after'])} | {valid} | {sep} | {r['calls']} | {r['s']:.0f} |"
        )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="cohort", help="comma-separated, or 'cohort' (all four)")
    ap.add_argument("--games", default="cop,mathquiz")
    ap.add_argument("--optimizers", default="bootstrap_fewshot")
    ap.add_argument("--roles", default="setter,answerer")
    ap.add_argument("--train", type=int, default=8)
    ap.add_argument("--val", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--store", type=Path, help="the program store (default: skate's, ~/.cache/skate/programs)")
    ap.add_argument("--out", type=Path, help="where each optimisation's folder goes (default: a temporary one)")
    ap.add_argument("--json", type=Path, help="write every record here")
    ap.add_argument("overrides", nargs="*", help="further Hydra overrides for every optimisation")
    args = ap.parse_args()
    models = local_models.parse_models(args.models)
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-optimize-"))
    root = local_serving.cache_root()
    print(
        f"python {platform.python_version()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; out {out}",
        flush=True,
    )
    rows: list[dict] = []
    with local_serving.serving_many(
        root, models, threads=local.cohort_threads(None, local_serving.DEFAULT_SERVER)
    ) as servers:
        os.environ.update(local.cohort_env(servers, {}))  # type: ignore[arg-type]
        for game in args.games.split(","):
            for opt in args.optimizers.split(","):
                given = [
                    *GAME_OVERRIDES.get(game, [f"game={game}"]),
                    f"optimizer={opt}",
                    f"optimizer.roles=[{args.roles}]",
                    f"optimizer.train={args.train}",
                    f"optimizer.val={args.val}",
                    f"optimizer.seed={args.seed}",
                    f"seed={args.seed}",
                    "logger=none",
                    f"llm.cache_dir={out / 'cache'}",
                    *([f"optimizer.store={args.store}"] if args.store else []),
                    *args.overrides,
                ]
                overrides = local_game.game_overrides(
                    given, local.client_falls_back_on_llama_cpp(), local_game.cohort_players(list(servers)), ()
                )
                print(f"\n{game} {opt}: " + " ".join(overrides), flush=True)
                t0 = time.perf_counter()
                records = run_optimize(build_settings(compose_config(overrides)), out / f"{game}-{opt}")
                print(f"{game} {opt}: {time.perf_counter() - t0:.0f} s", flush=True)
                rows += [row(game, r) for r in records]
                print(table([row(game, r) for r in records]), flush=True)
                if args.json:
                    args.json.write_text(json.dumps(rows, indent=1, default=str))
    print("\n" + table(rows))


if __name__ == "__main__":
    main()

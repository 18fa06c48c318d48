"""The levers for weak setters, on real models: the local cohort's games under each variant.

Plays the local cohort (``skate local``'s llama-server and models) once per variant, the
same game and seed each time, and measures what the setters set and what the ranking became; or
(``--runs``) measures finished runs. A variant is ``NAME=OVERRIDES`` (overrides separated by
spaces), e.g. ``default=`` (the game's own prompts), ``optimised=optimizer=bootstrap_fewshot
optimizer.roles=[setter,answerer] optimizer.train=8 optimizer.val=8`` (programs compiled by
``bench/bench_optimize_cohort.py`` with the same settings are found in the store and reused with
no call), ``no_info=aug=no_info``. Per variant:

- per model: setting attempts, valid tasks, how many of them are distinct (the same program or
  question set twice in the game, by anyone, counts once), how many separate the players (some
  at or above the pass mark, some below), and the model's score with its interval (the run's
  rating: IRT under ``experiment=fewer_calls``);
- Kendall's tau-b of that ranking against CRUXEval-O (the yardstick of docs/real-models.md, for
  COP: the accuracies ``bench/bench_cruxeval.py --n 200`` measured);
- self-preference: each model's mean p(correct) on its own tasks and on the others' tasks, the
  others' on its tasks, and its IRT score rated again without any setter's answers to its own
  tasks (how much of the rating its own tasks gave it);
- examples of the valid tasks each model set.

    .venv/bin/python bench/bench_levers.py --rounds 6 default= "optimised=optimizer=bootstrap_fewshot optimizer.roles=[setter,answerer]"
    .venv/bin/python bench/bench_levers.py --rounds 6 --aug                     # the five aug strategies
    .venv/bin/python bench/bench_levers.py --runs RUN_DIR [RUN_DIR ...]         # measure finished runs
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skate.cli import local_game  # noqa: E402
from skate.cli.compose import compose_config  # noqa: E402
from skate.local import models as local_models  # noqa: E402
from skate.local import play as local  # noqa: E402
from skate.local import serving as local_serving  # noqa: E402
from skate.ratings.irt import IRTRating  # noqa: E402
from skate.runlog.events import AttemptMade, Estimated, TaskSet, read_run  # noqa: E402
from skate.runner import run_game  # noqa: E402
from skate.settings.options import build_settings  # noqa: E402

# CRUXEval-O accuracy of each model (200 items, greedy: docs/real-models.md, "Does the ranking hold?").
CRUXEVAL_O = {"qwen2.5-coder-1.5b": 24.5, "qwen2.5-coder-0.5b": 9.0, "gemma3-270m": 0.0, "smollm2-135m": 0.0}
AUG = ("no_info", "hist_tasks", "hist_perf", "full_personal", "full_context")


def kendall_tau_b(a: list[float], b: list[float]) -> float | None:
    """Kendall's tau-b of two paired lists (ties in either count as in scipy's default)."""
    if len(a) < 2:
        return None
    tau = kendalltau(a, b).statistic
    return None if tau != tau else float(tau)


def normalised(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def irt_scores(players: list[str], counts: dict[str, dict[str, tuple[int, int]]]) -> dict[str, dict]:
    rating = IRTRating()
    rating.add_players(players)
    for task_id, cell in counts.items():
        if cell:
            rating.update(task_id, {p: k / n for p, (k, n) in cell.items()}, counts=cell)
    return {r.player: {"score": r.score, "lo": r.lo, "hi": r.hi} for r in rating.table()}


def measure(run: Path) -> dict:
    """What a finished cohort run shows (see the module's docstring)."""
    log = read_run(run, "a finished run", keep_updates=0)
    players = list(log.players)
    tasks = {t.task_id: t for t in log.of(TaskSet)}
    pass_mark = float((log.start.config.get("rating") or {}).get("p_thresh", 0.55))
    est: dict[str, dict[str, Estimated]] = {}
    for e in log.of(Estimated):
        est.setdefault(e.task_id, {})[e.player] = e
    attempts = [a for a in log.of(AttemptMade)]
    seen: dict[str, int] = {}
    for t in tasks.values():
        seen[normalised(t.prompt)] = seen.get(normalised(t.prompt), 0) + 1
    ratings = {r["player"]: r for r in json.loads((run / "ratings.json").read_text())}

    def p_of(task_id: str, player: str) -> float | None:
        e = est.get(task_id, {}).get(player)
        return None if e is None or e.void or e.p is None else float(e.p)

    def counts_of(task_id: str, drop_self: bool) -> dict[str, tuple[int, int]]:
        out = {}
        for player, e in est.get(task_id, {}).items():
            if e.void or not e.n or (drop_self and player == tasks[task_id].setter):
                continue
            n = int(e.n) if not getattr(e, "read", False) else 10
            k = int(round(float(e.p) * n)) if getattr(e, "read", False) or e.correct is None else int(e.correct)
            out[player] = (k, n)
        return out

    without_self = irt_scores(players, {t: counts_of(t, True) for t in tasks})
    rows = {}
    for name in players:
        mine = [t for t in tasks.values() if t.setter == name]
        separating = 0
        for t in mine:
            ps = [p for p in (p_of(t.task_id, x) for x in players) if p is not None]
            separating += bool(ps) and max(ps) >= pass_mark > min(ps)
        own = [p for p in (p_of(t.task_id, name) for t in mine) if p is not None]
        others_tasks = [p for p in (p_of(t.task_id, name) for t in tasks.values() if t.setter != name) if p is not None]
        others_on_mine = [p for t in mine for x in players if x != name for p in [p_of(t.task_id, x)] if p is not None]
        r = ratings.get(name, {})
        rows[name] = {
            "attempts": sum(a.player == name for a in attempts),
            "valid": len(mine),
            "distinct": sum(seen[normalised(t.prompt)] == 1 for t in mine)
            + len({normalised(t.prompt) for t in mine if seen[normalised(t.prompt)] > 1}),
            "separating": separating,
            "score": r.get("score"),
            "lo": r.get("lo"),
            "hi": r.get("hi"),
            "rank": r.get("rank"),
            "score_without_self_answers": without_self[name]["score"],
            "own_p": float(np.mean(own)) if own else None,
            "others_tasks_p": float(np.mean(others_tasks)) if others_tasks else None,
            "others_on_own_p": float(np.mean(others_on_mine)) if others_on_mine else None,
            "examples": [t.prompt[:400] for t in mine[:3]],
        }
    ranked = [n for n in players if n in CRUXEVAL_O and rows[n]["score"] is not None]
    tau = kendall_tau_b([rows[n]["score"] for n in ranked], [CRUXEVAL_O[n] for n in ranked])
    return {
        "run": str(run),
        "players": rows,
        "tau_cruxeval_o": tau,
        "tasks": len(tasks),
        "rounds": max((t.round for t in tasks.values()), default=0),
        "pass_mark": pass_mark,
    }


def fmt(x, d: int = 2) -> str:
    return "–" if x is None else f"{x:.{d}f}"


def table(name: str, m: dict) -> str:
    out = [
        f"**{name}**: {m['tasks']} valid tasks; Kendall's tau-b against CRUXEval-O: {fmt(m['tau_cruxeval_o'])}",
        "",
        "| model | valid / attempts | distinct | separating | score [interval] | without self-answers "
        "| own p on own tasks | own p on others' | others' p on its tasks |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, r in m["players"].items():
        out.append(
            f"| {n} | {r['valid']} / {r['attempts']} | {r['distinct']} | {r['separating']} | {fmt(r['score'])} "
            f"[{fmt(r['lo'])}, {fmt(r['hi'])}] | {fmt(r['score_without_self_answers'])} | {fmt(r['own_p'])} "
            f"| {fmt(r['others_tasks_p'])} | {fmt(r['others_on_own_p'])} |"
        )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("variants", nargs="*", help="NAME=OVERRIDES (space-separated overrides), e.g. default=")
    ap.add_argument("--aug", action="store_true", help="add the five aug strategies as variants")
    ap.add_argument("--runs", nargs="*", type=Path, help="only measure these finished runs")
    ap.add_argument("--models", default="cohort")
    ap.add_argument("--game", default="cop")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--common", default="", help="overrides for every variant (space-separated)")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    results: dict[str, dict] = {}
    if args.runs:
        for run in args.runs:
            results[str(run)] = measure(run)
            print(table(str(run), results[str(run)]) + "\n")
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))
        return
    variants = [v.split("=", 1) for v in args.variants] + ([[a, f"aug={a}"] for a in AUG] if args.aug else [])
    if not variants:
        ap.error("name at least one variant (NAME=OVERRIDES), or --aug, or --runs")
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-levers-"))
    print(
        f"python {platform.python_version()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; out {out}",
        flush=True,
    )
    models = local_models.parse_models(args.models)
    with local_serving.serving_many(
        local_serving.cache_root(), models, threads=local.cohort_threads(None, local_serving.DEFAULT_SERVER)
    ) as servers:
        os.environ.update(local.cohort_env(servers, {}))  # type: ignore[arg-type]
        for name, extra in variants:
            given = [
                f"game={args.game}",
                f"game.rounds={args.rounds}",
                f"seed={args.seed}",
                "stop.settled=null",
                "logger=none",
                "report=false",
                "llm.cache=false",
                *args.common.split(),
                *extra.split(),
            ]
            overrides = local_game.game_overrides(
                given,
                local.client_falls_back_on_llama_cpp(),
                local_game.cohort_players(list(servers)),
                local_game.cohort_defaults(given),
            )
            print(f"\n{name}: " + " ".join(overrides), flush=True)
            t0 = time.perf_counter()
            run_game(build_settings(compose_config(overrides)), out / name)
            results[name] = {
                **measure(out / name),
                "wall_s": round(time.perf_counter() - t0, 1),
                "overrides": overrides,
            }
            print(table(name, results[name]) + f"\n({results[name]['wall_s']:.0f} s)", flush=True)
            if args.json:
                args.json.write_text(json.dumps(results, indent=1))
    for name, m in results.items():
        print("\n" + table(name, m))
        for n, r in m["players"].items():
            for ex in r["examples"]:
                print(f"  {n}: {ex[:200]!r}")


if __name__ == "__main__":
    main()

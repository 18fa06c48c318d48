"""What a finished game of the local cohort showed, from its run folder alone (issue 57):

- per setter: attempts, valid tasks, those that separated the players (some two players'
  p(correct) more than ``SEPARATES``, 0.05, apart, as the game's summary counts them), those
  that separated the players below the strongest (the run's first-ranked player left out), and
  the others' mean p(correct) on its tasks (how hard it set);
- the ranking with intervals, and Kendall's tau-b against CRUXEval-O's accuracies of the four
  models (docs/real-models.md: 24.5 %, 9.0 %, 0 %, 0 %; ``--yardstick`` gives others);
- the setter's side and the solver's apart: each player's mean p(correct) on the tasks others set
  (its standing as a solver), and on how many of them it read above a guess (more than 0.05
  over 1/n_options: COP and SCP), and the others' mean p(correct) on its own tasks (as a setter);
- self-preference: a player's mean p(correct) on its own tasks against its mean on the others';
- wall time (run_start to run_end) and model calls (usage.json).

    .venv/bin/python bench/cohort_report.py RUN_DIR [RUN_DIR ...]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from scipy.stats import kendalltau

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skate.loop import SEPARATES
from skate.runlog.files import read_events

CRUXEVAL_O = {"qwen2.5-coder-1.5b": 0.245, "qwen2.5-coder-0.5b": 0.09, "gemma3-270m": 0.0, "smollm2-135m": 0.0}


def mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def fmt(x: float | None, nd: int = 2) -> str:
    return "–" if x is None else f"{x:.{nd}f}"


def report(run: Path, yardstick: dict[str, float]) -> str:
    events = read_events(run)
    start = next(e for e in events if e["event"] == "run_start")
    end = next((e for e in events if e["event"] == "run_end"), None)
    names = [p["name"] for p in start["players"]]
    tasks = {e["task_id"]: e["setter"] for e in events if e["event"] == "task"}
    p: dict[str, dict[str, float]] = {}
    for e in events:
        if e["event"] == "estimate" and e.get("p") is not None and e["task_id"] in tasks:
            p.setdefault(e["task_id"], {})[e["player"]] = e["p"]
    attempts = {n: sum(1 for e in events if e["event"] == "attempt" and e["player"] == n) for n in names}
    ratings = json.loads((run / "ratings.json").read_text())
    rated = [r for r in ratings if not r.get("no_data")]
    strongest = min(rated, key=lambda r: r["rank"])["player"] if rated else None

    def separates(ps: dict[str, float]) -> bool:
        return len(ps) >= 2 and max(ps.values()) - min(ps.values()) > SEPARATES

    apart = {t: separates(ps) for t, ps in p.items()}
    below = {t: separates({q: v for q, v in ps.items() if q != strongest}) for t, ps in p.items()}
    lines = [f"## {run}", "", f"game {start['game']}, {start['rounds']} rounds, seed {start['seed']}", ""]
    n_options = start.get("config", {}).get("game", {}).get("n_options")
    guess = 1 / n_options if n_options else 0.0
    lines += [
        "| setter | attempts | valid | separating | below the strongest | others' mean p on its tasks | "
        "own p on own tasks | p on others' tasks (solver) | others' tasks above a guess |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in names:
        mine = [t for t, s in tasks.items() if s == n]
        others_on_mine = [v for t in mine for q, v in p.get(t, {}).items() if q != n]
        own = [p[t][n] for t in mine if n in p.get(t, {})]
        solver = [v for t, s in tasks.items() if s != n for q, v in p.get(t, {}).items() if q == n]
        lines.append(
            f"| {n} | {attempts[n]} | {len(mine)} | {sum(apart.get(t, False) for t in mine)} | "
            f"{sum(below.get(t, False) for t in mine)} | "
            f"{fmt(mean(others_on_mine))} | {fmt(mean(own))} | {fmt(mean(solver))} | "
            f"{sum(v > guess + 0.05 for v in solver)}/{len(solver)} |"
        )
    lines.append(
        f"| all | {sum(attempts.values())} | {len(tasks)} | {sum(apart.values())} | {sum(below.values())} | | | | |"
    )
    lines.append(f"\n(the strongest: {strongest or 'nobody rated'})")
    lines += ["", "| rank | player | score | interval |", "|---:|---|---:|---|"]
    for r in ratings:
        iv = f"[{r['lo']:.2f}, {r['hi']:.2f}]" if r.get("lo") is not None else "–"
        lines.append(
            f"| {r['rank'] if r.get('rank') is not None else '–'} | {r['player']} | "
            f"{fmt(r.get('score')) if not r.get('no_data') else 'no data'} | {iv} |"
        )
    known = [r for r in rated if r["player"] in yardstick]
    if len(known) >= 2:
        tau = kendalltau([r["score"] for r in known], [yardstick[r["player"]] for r in known]).statistic
        lines.append(f"\nKendall tau-b against CRUXEval-O: {tau:.2f} ({len(known)} rated players)")
    usage = json.loads((run / "usage.json").read_text()) if (run / "usage.json").exists() else None
    wall = (end["ts"] - start["ts"]) if end else None
    lines.append(f"wall time {fmt(wall, 0)} s, model calls {usage['total']['calls'] if usage else '–'}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--yardstick", type=json.loads, default=CRUXEVAL_O, help="player -> accuracy, as JSON")
    args = ap.parse_args()
    print("\n\n".join(report(r, args.yardstick) for r in args.runs))


if __name__ == "__main__":
    main()

"""How well did finished runs recover the simulated cohort's true skill order?

Usage:
    python experiments/ranking_recovery.py RUN_OR_SWEEP_DIR [...]

Finds every ``ratings.json`` under the given folders and prints, per run, its Hydra overrides,
Kendall's tau between the rating order and the true-skill order, and whether the order is exact.
Only simulated players carry a true skill; other players are ignored.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path


def kendall_tau(a: list[float], b: list[float]) -> float:
    """Kendall's tau-a between two equally long score lists (no tie correction)."""
    pairs = list(itertools.combinations(range(len(a)), 2))
    if not pairs:
        return 1.0
    s = sum((1 if (a[i] - a[j]) * (b[i] - b[j]) > 0 else -1 if (a[i] - a[j]) * (b[i] - b[j]) < 0 else 0)
            for i, j in pairs)
    return s / len(pairs)


def recovery(ratings_path: Path) -> dict:
    rows = [r for r in json.loads(ratings_path.read_text()) if r.get("true_skill") is not None]
    tau = kendall_tau([r["mu"] for r in rows], [r["true_skill"] for r in rows])
    by_truth = [r["player"] for r in sorted(rows, key=lambda r: -r["true_skill"])]
    by_rank = [r["player"] for r in sorted(rows, key=lambda r: r["rank"])]
    overrides_file = ratings_path.parent / ".hydra" / "overrides.yaml"
    overrides = ""
    if overrides_file.exists():
        overrides = " ".join(line[2:].strip() for line in overrides_file.read_text().splitlines()
                             if line.startswith("- "))
    return {"run": str(ratings_path.parent), "overrides": overrides, "tau": tau, "exact": by_truth == by_rank}


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    found = sorted(p for d in argv for p in Path(d).rglob("ratings.json"))
    if not found:
        print(f"no ratings.json under {' '.join(argv)}", file=sys.stderr)
        return 1
    results = [recovery(p) for p in found]
    print(f"{'tau':>6} {'exact':>5}  overrides / run")
    for r in results:
        print(f"{r['tau']:>6.3f} {str(r['exact']):>5}  {r['overrides'] or r['run']}")
    exact = sum(r["exact"] for r in results)
    print(f"\n{exact}/{len(results)} runs recovered the exact true order; "
          f"mean tau {sum(r['tau'] for r in results) / len(results):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

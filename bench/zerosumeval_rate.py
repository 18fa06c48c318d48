"""Rate a folder of matches with ZeroSumEval's own code; print the table as JSON.

Runs in the throwaway environment that ``scripts/setup.sh test`` makes (``.venv/zse``, holding
zero-sum-eval 0.3.0 without its dependencies), never in skate's:

    .venv/zse/bin/python bench/zerosumeval_rate.py MATCHES_DIR [--bootstrap 1000] [--weights setter=2 solver=1]

MATCHES_DIR is what ``skate.ratings.zerosumeval.write_matches`` writes. The rating module is
loaded from its file: the package's ``__init__`` imports every game (and dspy 2.5) on import.
Its match listing is sorted, so the matches enter its bootstrap in the order skate rated them
(``glob`` alone lists them in the file system's order).
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import sys
import sysconfig
from pathlib import Path


def load_rating_module():
    path = Path(sysconfig.get_paths()["purelib"]) / "zero_sum_eval" / "analysis" / "calculate_ratings.py"
    spec = importlib.util.spec_from_file_location("zse_calculate_ratings", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.glob = lambda pattern, recursive=False: sorted(glob.glob(pattern, recursive=recursive))
    return module


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("matches")
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--weights", nargs="*", default=[], help="role=weight ...")
    args = ap.parse_args(argv)
    weights = {k: float(v) for k, v in (w.split("=") for w in args.weights)} or None
    module = load_rating_module()
    table = module.calculate_ratings(args.matches, args.bootstrap, role_weights=weights)
    rows = [
        {
            "player": model,
            "lo": float(row[("rating", "lower")]),
            "score": float(row[("rating", "predicted")]),
            "hi": float(row[("rating", "upper")]),
        }
        for model, row in table.iterrows()
    ]
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

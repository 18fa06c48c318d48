"""rating=zerosumeval against ZeroSumEval's own rating code on the same matches.

Plays ``python -m skate experiment=zerosumeval game=G`` (100 matches, the four simulated players
of the preset, ZeroSumEval's match rules for the game) for each game given, writes its matches as
ZeroSumEval's code reads them (``skate.ratings.zerosumeval.write_matches``), rates them with
``calculate_ratings`` from zero-sum-eval 0.3.0 (in the throwaway ``.venv/zse`` that
``scripts/setup.sh test`` makes, through ``bench/zerosumeval_rate.py``) and prints both tables
side by side in Markdown: point, interval, wins and losses, skate's flags.

    .venv/bin/python bench/bench_zerosumeval.py [--games mathquiz pyjail] [--seed 0] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skate.cli.compose import compose_config  # noqa: E402
from skate.ratings.zerosumeval import run_matches, write_matches  # noqa: E402
from skate.runner import run_game  # noqa: E402
from skate.settings.options import build_settings  # noqa: E402
from skate.settings.recorded import run_settings  # noqa: E402


def compare(game: str, seed: int, out: Path, extra: list[str]) -> list[str]:
    cfg = compose_config(
        ["experiment=zerosumeval", f"game={game}", f"seed={seed}", "logger=none", "report=false", *extra]
    )
    t0 = time.perf_counter()
    run_game(build_settings(cfg), out / game / "run")
    played = time.perf_counter() - t0
    rating = run_settings(out / game / "run").rating
    matches = run_matches(out / game / "run", rating)
    write_matches(out / game / "run", out / game / "matches", rating)
    weights = [f"{k}={v}" for k, v in dict(cfg.rating.role_weights).items()]
    res = subprocess.run(
        [
            str(ROOT / ".venv" / "zse" / "bin" / "python"),
            str(ROOT / "bench" / "zerosumeval_rate.py"),
            str(out / game / "matches"),
            "--bootstrap",
            str(cfg.rating.bootstrap),
            "--weights",
            *weights,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    theirs = {r["player"]: r for r in json.loads(res.stdout)}
    wins = {n: sum(1 for m in matches if m.result != 0.5 and (m.a if m.result == 1.0 else m.b) == n) for n in theirs}
    losses = {n: sum(1 for m in matches if m.result != 0.5 and (m.b if m.result == 1.0 else m.a) == n) for n in theirs}
    ties = sum(1 for m in matches if m.result == 0.5)
    lines = [
        f"### game={game}, seed {seed}: {len(matches)} matches ({ties} ties), played in {played:.0f} s",
        "",
        f"rules: game.tries={cfg.game.get('tries')}, rating.own_unsolved={cfg.rating.own_unsolved}, "
        f"rating.role_weights={dict(cfg.rating.role_weights)}, {cfg.rating.bootstrap} resamples",
        "",
        "| player | W–L | skate point | ZeroSumEval point | Δ | skate interval | ZeroSumEval interval | skate's flags |",
        "|---|---|---:|---:|---:|---|---|---|",
    ]
    for r in json.loads((out / game / "run" / "ratings.json").read_text()):
        z = theirs[r["player"]]
        flags = "; ".join(
            x
            for x in (
                r.get("unbounded"),
                r.get("unbounded_resamples")
                and f"no wins or no losses in {r['unbounded_resamples']} of {r['resamples']} resamples",
            )
            if x
        )
        lines.append(
            f"| {r['player']} | {wins[r['player']]}–{losses[r['player']]} | {r['score']:.1f} | {z['score']:.1f} "
            f"| {r['score'] - z['score']:+.1f} | [{r['lo']:.1f}, {r['hi']:.1f}] | [{z['lo']:.1f}, {z['hi']:.1f}] "
            f"| {flags or '-'} |"
        )
    return lines


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", nargs="+", default=["mathquiz", "pyjail"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("overrides", nargs="*", help="more Hydra overrides for the games")
    args = ap.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="bench_zse_"))
    for game in args.games:
        print("\n".join(compare(game, args.seed, out, args.overrides)) + "\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

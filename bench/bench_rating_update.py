"""What one two-player rating update costs (issue 26): the ``trueskill`` library, skate's closed
form of the same update (:mod:`skate.ratings.trueskill_math`), Elo, and, when installed,
``openskill``'s Thurstone–Mosteller (full pairing) and Plackett–Luce models at TrueSkill's settings.

For each: microseconds per update over the same random matches (30% draws), and how far its
numbers are from the library's (max |Δμ|, |Δσ|; the closed form must be 0). openskill is not a
dependency of skate; to measure it, put it on the path, e.g.

    python -m venv /tmp/osk && /tmp/osk/bin/pip install openskill
    PYTHONPATH=/tmp/osk/lib/python3.12/site-packages .venv/bin/python bench/bench_rating_update.py

    .venv/bin/python bench/bench_rating_update.py --n 20000
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

with warnings.catch_warnings():
    warnings.simplefilter("ignore", SyntaxWarning)
    import trueskill

from skate.ratings import trueskill_math as tsm

MU, SIGMA, BETA, TAU, DRAW = 25.0, 25 / 3, 25 / 6, 25 / 300, 0.10


def matches(n: int, seed: int) -> list[tuple[float, float, float, float, bool]]:
    rng = random.Random(seed)
    return [
        (rng.uniform(15, 35), rng.uniform(0.5, 8.3), rng.uniform(15, 35), rng.uniform(0.5, 8.3), rng.random() < 0.3)
        for _ in range(n)
    ]


def library(ms):
    env = trueskill.TrueSkill(mu=MU, sigma=SIGMA, beta=BETA, tau=TAU, draw_probability=DRAW, backend=None)
    rated = [(trueskill.Rating(a, sa), trueskill.Rating(b, sb), d) for a, sa, b, sb, d in ms]
    t = time.perf_counter()
    out = [trueskill.rate_1vs1(ra, rb, drawn=d, env=env) for ra, rb, d in rated]
    return time.perf_counter() - t, [(x.mu, x.sigma, y.mu, y.sigma) for x, y in out], rated


def closed_form(rated):
    margin = tsm.draw_margin(DRAW, BETA)
    args = [(ra.mu, ra.sigma, rb.mu, rb.sigma, d) for ra, rb, d in rated]
    t = time.perf_counter()
    out = [tsm.rate_1vs1(a, sa, b, sb, d, BETA, TAU, margin) for a, sa, b, sb, d in args]
    return time.perf_counter() - t, out


def elo(ms):
    k, scale = 16.0, 400.0
    t = time.perf_counter()
    for a, _, b, _, d in ms:
        ra, rb = 1500 + 40 * a, 1500 + 40 * b
        e = 1.0 / (1.0 + 10 ** ((rb - ra) / scale))
        ra += k * ((0.5 if d else 1.0) - e)
        rb -= k * ((0.5 if d else 1.0) - e)
    return time.perf_counter() - t


def openskill_models(rated):
    try:
        from openskill.models import PlackettLuce, ThurstoneMostellerFull
    except ImportError:
        return []
    out = []
    for cls in (ThurstoneMostellerFull, PlackettLuce):
        model = cls(mu=MU, sigma=SIGMA, beta=BETA, tau=TAU)
        players = [
            (model.rating(mu=ra.mu, sigma=ra.sigma), model.rating(mu=rb.mu, sigma=rb.sigma), d) for ra, rb, d in rated
        ]
        t = time.perf_counter()
        res = [model.rate([[pa], [pb]], ranks=[0, 0] if d else [0, 1]) for pa, pb, d in players]
        out.append(
            (
                cls.__name__,
                time.perf_counter() - t,
                [(x[0][0].mu, x[0][0].sigma, x[1][0].mu, x[1][0].sigma) for x in res],
            )
        )
    return out


def gap(a, b) -> tuple[float, float]:
    dmu = max(max(abs(x[0] - y[0]), abs(x[2] - y[2])) for x, y in zip(a, b, strict=True))
    dsig = max(max(abs(x[1] - y[1]), abs(x[3] - y[3])) for x, y in zip(a, b, strict=True))
    return dmu, dsig


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000, help="random matches")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    ms = matches(args.n, args.seed)
    t_lib, ref, rated = library(ms)
    t_cf, cf = closed_form(rated)
    t_elo = elo(ms)
    print(
        f"python {platform.python_version()}; {args.n:,} random two-player matches, 30% draws, "
        f"TrueSkill mu {MU}, sigma {SIGMA:.3f}, beta {BETA:.3f}, tau {TAU:.4f}, draw probability {DRAW}\n"
    )
    print("| update | µs each | × the library | max abs Δμ | max abs Δσ | identical |")
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| trueskill {trueskill.__version__} (rate_1vs1) | {t_lib / args.n * 1e6:.1f} | 1 | 0 | 0 | all |")
    dmu, dsig = gap(cf, ref)
    same = sum(x == y for x, y in zip(cf, ref, strict=True))
    print(
        f"| skate closed form (trueskill_math.rate_1vs1) | {t_cf / args.n * 1e6:.1f} | "
        f"{t_lib / t_cf:.0f}× faster | {dmu:.1e} | {dsig:.1e} | {same:,} of {args.n:,} |"
    )
    for name, t, res in openskill_models(rated):
        dmu, dsig = gap(res, ref)
        print(f"| openskill {name} | {t / args.n * 1e6:.1f} | {t_lib / t:.1f}× faster | {dmu:.2f} | {dsig:.2f} | — |")
    print(f"| Elo (k 16, arithmetic only) | {t_elo / args.n * 1e6:.2f} | — | — | — | — |")


if __name__ == "__main__":
    main()

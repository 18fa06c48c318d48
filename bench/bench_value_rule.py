"""How often the COP program generator (simulated and fake setters) writes a program whose whole
output is only booleans, which game.require_value rejects (issue 15).

    .venv/bin/python bench/bench_value_rule.py 2400"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from skate.games.cop.generator import KINDS, generate_program, predict_output

n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
rng = np.random.default_rng(0)
total = boolish = 0
by_kind = {}
for i in range(n):
    kind = KINDS[i % len(KINDS)]
    out = predict_output(generate_program(kind, float(rng.random()), rng)).strip()
    total += 1
    if out.split() and all(t in ("True", "False") for t in out.split()):
        boolish += 1
        by_kind[kind] = by_kind.get(kind, 0) + 1
print(f"{boolish}/{total} boolean-only outputs", by_kind)

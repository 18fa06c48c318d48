"""An outside yardstick for the local cohort: CRUXEval-O accuracy, greedy, one answer per item.

CRUXEval-O (output prediction; the shipped ``skate/games/cop/data/cruxeval.jsonl``, MIT) gives a
function ``f``, an input, and asks for ``f(input)``. Each model of the cohort is served by llama.cpp
(``skate local``'s cache; one thread per server, all four at once) and asked for a fixed
sample of items (``--n``, drawn with ``--seed``; the same items for every model), at temperature 0
with one answer each. A reply is right when the first Python literal it gives (a bare one, in a
code fence, or after ``==``) equals the recorded output as a value (``ast.literal_eval`` on
both; a reply that is no literal is wrong). The ranking by accuracy is printed beside a finished
skate run's ranking (``--run RUN_DIR``: its ``ratings.json``) with Kendall's tau.

    .venv/bin/python bench/bench_cruxeval.py --n 200 --json /tmp/crux.json
    .venv/bin/python bench/bench_cruxeval.py --from-json /tmp/crux.json --run RUN_DIR   # compare with a game
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skate.games.cop.practice import records  # noqa: E402
from skate.local import models as local_models  # noqa: E402
from skate.local import serving as local_serving  # noqa: E402

SYSTEM = "You predict exactly what Python code returns. Reply with the value only, as a Python literal."
# No example values in the prompt: Qwen2.5-Coder 0.5B answered the first example ("3") to most
# items when the prompt listed some (the 2026-11-26 run in docs/real-models.md).
USER = (
    "Here is a Python function:\n\n```python\n{code}\n```\n\nWhat does `f({input})` return? Reply with the "
    "returned value only, written as a Python literal (a number, a quoted string, a list, a tuple, a dict, "
    "True, False or None), and nothing else."
)


def literal(text: str) -> object:
    """The first Python literal in a reply: the whole reply, a fenced block, or what follows ``==``;
    raises ValueError when there is none."""
    candidates = [text.strip()]
    candidates += [m.group(1).strip() for m in re.finditer(r"```(?:python|py)?\s*\n?(.*?)```", text, re.DOTALL)]
    candidates += [m.group(1).strip() for m in re.finditer(r"==\s*(.+)", text)]
    candidates += [line.strip().strip("`") for line in text.splitlines() if line.strip()]
    for c in candidates:
        try:
            return ast.literal_eval(c.strip("`").strip())
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
    raise ValueError("no literal")


def right(reply: str, output: str) -> bool:
    try:
        want = ast.literal_eval(output)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return reply.strip() == output.strip()
    try:
        got = literal(reply)
    except ValueError:
        return False
    return type(got) is type(want) and got == want


def ask(base: str, model: str, item: dict, max_tokens: int) -> tuple[str, dict, float]:
    body = {
        "model": model,
        "temperature": 0,
        "seed": 0,
        "max_tokens": max_tokens,
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": USER.format(code=item["code"], input=item["input"])},
        ],
    }
    req = urllib.request.Request(
        f"{base}/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=1800) as r:
        data = json.loads(r.read())
    return data["choices"][0]["message"]["content"] or "", data.get("usage") or {}, time.perf_counter() - t0


def sample(n: int, seed: int) -> list[dict]:
    recs = list(records())
    idx = np.random.default_rng(seed).permutation(len(recs))[:n]
    return [recs[int(i)] for i in sorted(idx)]


def kendall_tau(a: list[str], b: list[str]) -> float:
    """Kendall's tau between two orders of the same names (best first)."""
    pos = {x: i for i, x in enumerate(b)}
    n, s = len(a), 0
    for i in range(n):
        for j in range(i + 1, n):
            s += 1 if pos[a[i]] < pos[a[j]] else -1
    return s / (n * (n - 1) / 2) if n > 1 else 1.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="cohort")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-tokens", type=int, default=96)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--from-json", type=Path, help="the numbers of an earlier run instead of asking again")
    ap.add_argument("--run", type=Path, action="append", default=[], help="skate run folders to compare with")
    args = ap.parse_args()
    if args.from_json:
        result = json.loads(args.from_json.read_text())
    else:
        models = local_models.parse_models(args.models)
        items = sample(args.n, args.seed)
        result = {"n": len(items), "seed": args.seed, "ids": [i["id"] for i in items], "models": {}}
        t0 = time.perf_counter()
        with local_serving.serving_many(
            local_serving.cache_root(), models, threads=local_models.COHORT_THREADS
        ) as servers:

            def run(name: str, server: local_serving.ServerProcess) -> None:
                rows = []
                for item in items:
                    reply, usage, s = ask(server.base, name, item, args.max_tokens)
                    rows.append(
                        {
                            "id": item["id"],
                            "right": right(reply, item["output"]),
                            "reply": reply[:300],
                            "s": s,
                            "completion_tokens": usage.get("completion_tokens", 0),
                        }
                    )
                result["models"][name] = rows

            threads = [threading.Thread(target=run, args=(n, s)) for n, s in servers.items()]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        result["wall_s"] = time.perf_counter() - t0
        if args.json:
            args.json.write_text(json.dumps(result, indent=1))
    acc = {name: sum(r["right"] for r in rows) / len(rows) for name, rows in result["models"].items()}
    order = sorted(acc, key=lambda m: -acc[m])
    print(
        f"CRUXEval-O, {result['n']} items (seed {result['seed']}), greedy, one answer"
        + (f"; {result['wall_s'] / 60:.1f} min, the models at once" if "wall_s" in result else "")
    )
    print("| model | accuracy | s/item | completion tokens/item |")
    print("|---|---:|---:|---:|")
    for m in order:
        rows = result["models"][m]
        print(
            f"| {m} | {acc[m]:.1%} ({sum(r['right'] for r in rows)}/{len(rows)}) | "
            f"{sum(r['s'] for r in rows) / len(rows):.1f} | {sum(r['completion_tokens'] for r in rows) / len(rows):.0f} |"
        )
    for run in args.run:
        table = json.loads((run / "ratings.json").read_text())
        ranked = [r["player"] for r in table if r["player"] in acc]
        print(f"\n{run}: skate's order {ranked}; CRUXEval-O's {order}; Kendall tau {kendall_tau(ranked, order):.2f}")


if __name__ == "__main__":
    main()

"""p(correct) read from the models' probabilities against the share right of 200 samples.

The local cohort (``skate local``'s llama-server and models) answers CRUXEval-O items
made COP tasks (``skate.games.cop.practice``: each program with its printed output and nine wrong
outputs; the same items for every model, seed 0). For each model and task, on the task's one query
(its options in one order, drawn from the task alone, as ``estimator=logprobs`` shows them):

- **read**: one call asking for the option's letter with ``logprobs`` (``LLMPlayer.read_choices``),
  p(correct) at the model's temperature (0.7);
- **sampled**: 200 answers at the same temperature to the same request, sent as ``n`` samples per
  request (the server's slots at a time), the share that named the right option. With
  ``--format game`` the samples are the game's own answers instead (the answerer's request, with
  structured output where the server takes it), on the same query.

It prints per model: how many reads were made (the others fell back, and why), the mean absolute
difference between read and sampled p(correct) over the tasks both have, the correlation of the two
over tasks, each model's mean p(correct) both ways and the ranking of the models each gives, and the
calls and seconds each way spent. ``--json`` keeps every task's numbers.

    .venv/bin/python bench/bench_logprobs.py --tasks 100                     # letter samples, all four
    .venv/bin/python bench/bench_logprobs.py --tasks 30 --format game        # the game's answer format
    .venv/bin/python bench/bench_logprobs.py --tasks 10 --models qwen2.5-coder-1.5b --samples 50
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skate.estimators.base import task_rng  # noqa: E402
from skate.games.base import GameEnv  # noqa: E402
from skate.games.cop import COPGame  # noqa: E402
from skate.llm import LLMClient, ModelSpec  # noqa: E402
from skate.llm.choices import LABEL_TOKENS, label_of  # noqa: E402
from skate.local import models as local_models  # noqa: E402
from skate.local import serving as local_serving  # noqa: E402
from skate.players.llm import LLMPlayer  # noqa: E402


def kendall(a: list[float], b: list[float]) -> float:
    """Kendall's tau-b of two lists."""
    from scipy.stats import kendalltau

    return float(kendalltau(a, b).statistic)


def run_model(
    name: str, base: str, tasks: list, game: COPGame, samples: int, per_request: int, fmt: str, out: dict
) -> None:
    mods = game.modules(GameEnv(sandbox=None))  # type: ignore[arg-type]
    client = LLMClient()
    spec = ModelSpec(f"hosted_vllm/{name}", api_base=base, temperature=0.7, max_tokens=512, timeout_s=3600)
    player = LLMPlayer(name, spec, client, mods)
    rows = []
    read_s = sample_s = 0.0
    read_calls = sample_calls = 0
    for k, task in enumerate(tasks):
        query = game.make_query(task, task_rng(task))
        right = [i for i in range(len(query.options)) if game.grade(task, query, i)]
        t0 = time.perf_counter()
        (got,) = player.read_choices([query], np.random.default_rng(k))
        read_s += time.perf_counter() - t0
        read_calls += 1
        before = client.usage[name].calls if name in client.usage else 0
        t0 = time.perf_counter()
        if fmt == "letter":  # the read's own request, sampled
            messages = mods.answerer.label_messages(query)
            done = client.complete(
                spec, messages, [(i, 1000 * k + i) for i in range(samples)], name, options={"max_tokens": LABEL_TOKENS}
            )
            picks = []
            for d in done:
                label = next(
                    (x for x in (label_of(t, mods.answerer.option_labels) for t in (d.text or "").split()) if x), None
                )
                picks.append(mods.answerer.option_labels.index(label) if label else None)
        else:  # the game's own answers to the same query
            picks = player.answer([query] * samples, np.random.default_rng(10_000 + k))
        sample_s += time.perf_counter() - t0
        sample_calls += client.usage[name].calls - before
        ok = [p for p in picks if isinstance(p, int)]
        freq = sum(p in right for p in ok) / samples
        p_read = sum(got.probs[i] for i in right) if got.ok else None
        rows.append(
            {
                "task": task.task_id,
                "read": p_read,
                "why": got.why,
                "kind": got.kind,
                "sampled": freq,
                "unreadable": samples - len(ok),
            }
        )
        print(
            f"{name} {k + 1}/{len(tasks)}: read {p_read if p_read is None else round(p_read, 3)}, sampled {freq:.3f}",
            flush=True,
        )
    out[name] = {
        "rows": rows,
        "read_s": read_s,
        "sample_s": sample_s,
        "read_calls": read_calls,
        "sample_calls": sample_calls,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="cohort")
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--slots", type=int, default=8, help="llama-server slots: samples per request")
    ap.add_argument("--format", choices=("letter", "game"), default="letter")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    models = local_models.parse_models(args.models)
    game = COPGame()
    tasks = game.practice_tasks(args.tasks, np.random.default_rng(0))
    print(f"{len(tasks)} CRUXEval-O items as COP tasks; {args.samples} samples each, format {args.format}", flush=True)
    out: dict = {}
    t0 = time.perf_counter()
    with local_serving.serving_many(
        local_serving.cache_root(), models, server=local_serving.LLAMA_SERVER, slots=args.slots
    ) as servers:
        workers = [
            threading.Thread(
                target=run_model, args=(m, s.base, tasks, game, args.samples, args.slots, args.format, out)
            )
            for m, s in servers.items()
        ]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    wall = time.perf_counter() - t0
    print(f"\n{len(tasks)} tasks, {args.samples} samples ({args.format}), all models at once: {wall:.0f} s\n")
    print(
        "| model | reads made (fell back: why) | mean abs. difference | correlation over tasks | mean p read | "
        "mean p sampled | calls read / sampled | s read / sampled |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    means_read, means_sampled, names = [], [], []
    for m in [x.name for x in models]:
        r = out[m]
        both = [x for x in r["rows"] if x["read"] is not None]
        why: dict[str, int] = {}
        for x in r["rows"]:
            if x["read"] is None:
                why[x["kind"]] = why.get(x["kind"], 0) + 1
        diff = statistics.fmean(abs(x["read"] - x["sampled"]) for x in both) if both else math.nan
        corr = (
            float(np.corrcoef([x["read"] for x in both], [x["sampled"] for x in both])[0, 1])
            if len(both) > 2
            else math.nan
        )
        mr = statistics.fmean(x["read"] for x in both) if both else math.nan
        ms = statistics.fmean(x["sampled"] for x in r["rows"])
        names.append(m)
        means_read.append(mr)
        means_sampled.append(ms)
        fell = ", ".join(f"{k} {v}" for k, v in why.items()) or "–"
        print(
            f"| {m} | {len(both)}/{len(r['rows'])} ({fell}) | {diff:.3f} | {corr:.2f} | {mr:.3f} | {ms:.3f} | "
            f"{r['read_calls']} / {r['sample_calls']} | {r['read_s']:.0f} / {r['sample_s']:.0f} |"
        )
    order = lambda xs: " > ".join(  # noqa: E731
        n for _, n in sorted(zip(xs, names, strict=False), key=lambda t: -t[0] if not math.isnan(t[0]) else 1)
    )
    print(f"\nranking by read p(correct): {order(means_read)}")
    print(f"ranking by sampled p(correct): {order(means_sampled)}")
    if not any(math.isnan(x) for x in means_read):
        print(f"Kendall tau-b between the two: {kendall(means_read, means_sampled):.2f}")
    if args.json:
        args.json.write_text(
            json.dumps(
                {"wall_s": wall, "args": vars(args) | {"json": str(args.json)}, "models": out}, indent=1, default=str
            )
        )


if __name__ == "__main__":
    main()

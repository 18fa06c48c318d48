"""Choosing llama-server's settings per model on the cohort's real workload: a recorded game replayed.

A cohort game played through ``bench/bench_cohort.py`` keeps every request each model was sent,
with when it started and how long it took (``calls-<model>.jsonl``). This bench sends the same
requests again, to servers started with the settings under test, in the same shape: the recording
is cut into phases wherever nothing was in flight (the rounds' setting and answering), and within
a phase each model's requests go out in their recorded order, one after another where they were
recorded one after another (a setter's attempts), together where they overlapped (answers). So
two settings are compared on identical requests, which a played game cannot give (a different
server draws different replies, and the game goes another way). Per setting it prints the replay's
wall time and, per model, prompt tokens sent and processed (the share the server's cache reused),
tokens generated, and the speeds llama.cpp measured. Each request generates exactly the tokens it
generated when recorded (``ignore_eos``, no stop sequences; a reply under a JSON schema ends where its grammar ends it), so
every setting does the same work.

    .venv/bin/python bench/bench_server.py RUN_DIR                       # the models' own settings
    .venv/bin/python bench/bench_server.py RUN_DIR --try slots=1,2 cache_ram_mib=0,1024
    .venv/bin/python bench/bench_server.py RUN_DIR --try threads=1,2 --models qwen2.5-coder-1.5b

Each ``--try KEY=V1,V2`` varies one :class:`skate.local.models.ServerSettings` field for every
model served (the others keep their own settings); several ``--try`` make a grid. The replies
are not read: only their cost is.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "bench"))

from bench_local import server_times_since, timings_of  # noqa: E402

from skate.local import models as local_models  # noqa: E402
from skate.local import play as local  # noqa: E402
from skate.local import serving as local_serving  # noqa: E402


def load(run: Path, models: list[str]) -> dict[str, list[dict]]:
    """Each model's recorded calls, in the order they started (a recording without start times:
    in the order they were kept, one after another)."""
    out = {}
    for name in models:
        path = run / f"calls-{name}.jsonl"
        calls = [c for c in (json.loads(line) for line in path.read_text().splitlines()) if c.get("status") == 200]
        if calls and "start" not in calls[0]:
            print(
                f"{path} has no start times (recorded before they were kept): its calls are replayed one after "
                "another, the models together",
                flush=True,
            )
            t = 0.0
            for c in calls:
                c["start"], t = t, t + c["s"]
        out[name] = sorted(calls, key=lambda c: c["start"])
    return out


def phases(calls: dict[str, list[dict]]) -> list[dict[str, list[list[dict]]]]:
    """The recording cut where nothing was in flight; in each phase, per model, its calls in
    groups: a group's calls overlapped in the recording (sent together), groups follow one
    another (each waits for the one before)."""
    every = sorted(((c["start"], c["start"] + c["s"], m, c) for m, cs in calls.items() for c in cs), key=lambda x: x[0])
    cuts: list[list[tuple]] = []
    end = -1.0
    for item in every:
        if item[0] > end:
            cuts.append([])
        cuts[-1].append(item)
        end = max(end, item[1])
    out = []
    for cut in cuts:
        per: dict[str, list[list[dict]]] = {}
        for start, _stop, m, c in cut:
            groups = per.setdefault(m, [])
            if groups and start < max(x["start"] + x["s"] for x in groups[-1]):
                groups[-1].append(c)
            else:
                groups.append([c])
        out.append(per)
    return out


FORCE_LENGTH = True  # llama-server takes ignore_eos; llama-cpp-python's server is sent the recorded max_tokens only


def send(base: str, call: dict) -> dict:
    """The recorded request again, generating exactly as many tokens as it did then (``ignore_eos``,
    no stop sequences): the same work whatever the server's kernels make of the sampling."""
    body = dict(call["request"])
    body.pop("stream", None)
    body.pop("stop", None)
    response = call.get("response") if isinstance(call.get("response"), dict) else {}
    made = int((response.get("usage") or {}).get("completion_tokens") or 0) // max(1, int(body.get("n") or 1))
    body["max_tokens"] = max(1, made)
    if FORCE_LENGTH and "response_format" not in body:  # (a schema's grammar ends the reply where it ended before)
        body["ignore_eos"] = True
    req = urllib.request.Request(
        f"{base}/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=3600) as r:
        return json.loads(r.read())


def replay(bases: dict[str, str], plan: list[dict[str, list[list[dict]]]]) -> tuple[float, dict[str, list[dict]]]:
    """Send every recorded request again, in the recording's shape; the wall time and each
    model's replies."""
    got: dict[str, list[dict]] = {m: [] for m in bases}
    lock = threading.Lock()
    t0 = time.perf_counter()
    for phase in plan:

        def run_model(m: str, groups: list[list[dict]]) -> None:
            for group in groups:
                out: list[dict] = []
                ts = [threading.Thread(target=lambda c=c: out.append(send(bases[m], c))) for c in group]  # noqa: B023 - called within the iteration that defines it
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()
                with lock:
                    got[m] += out

        workers = [threading.Thread(target=run_model, args=(m, g)) for m, g in phase.items()]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    return time.perf_counter() - t0, got


def row(replies: list[dict], logged: list[dict]) -> dict:
    """Per model: calls, prompt tokens sent and processed, tokens generated and their seconds, from
    llama-server's replies (their timings) or llama-cpp-python's log (``logged``)."""
    t = timings_of([{"response": r} for r in replies]) or logged
    sent = sum(int((r.get("usage") or {}).get("prompt_tokens") or 0) for r in replies)
    return {
        "calls": len(replies),
        "sent": sent,
        "processed": sum(x["prompt_tokens"] for x in t),
        "generated": sum(x["eval_tokens"] for x in t),
        "prompt_s": sum(x["prompt_ms"] for x in t) / 1000,
        "gen_s": sum(x["eval_ms"] for x in t) / 1000,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", type=Path, help="a run folder bench_cohort.py recorded (calls-<model>.jsonl)")
    ap.add_argument("--models", default="cohort")
    ap.add_argument(
        "--try",
        dest="grid",
        action="append",
        default=[],
        metavar="KEY=V1,V2",
        help="a ServerSettings field and the values to try (several: a grid)",
    )
    ap.add_argument(
        "--server",
        choices=local_serving.SERVERS,
        default=local_serving.LLAMA_SERVER,
        help="the server to replay against (llama-cpp-python's: its own timing lines, no --try)",
    )
    ap.add_argument("--json", type=Path, help="write every number here")
    args = ap.parse_args()
    global FORCE_LENGTH
    FORCE_LENGTH = args.server == local_serving.LLAMA_SERVER
    models = local_models.parse_models(args.models)
    plan = phases(load(args.run, [m.name for m in models]))
    axes = [(k, [int(v) for v in vs.split(",")]) for k, vs in (g.split("=", 1) for g in args.grid)]
    results = []
    print(
        f"{args.run}: {sum(len(g) for p in plan for gs in p.values() for g in gs)} requests in {len(plan)} phases",
        flush=True,
    )
    for values in itertools.product(*[vs for _, vs in axes]) if axes else [()]:
        tune = {k: v for (k, _), v in zip(axes, values, strict=False)}
        with local_serving.serving_many(
            local_serving.cache_root(),
            models,
            server=args.server,
            tune=tune or None,
            threads=local.cohort_threads(None, args.server),
        ) as servers:
            marks = {m: s.log.stat().st_size for m, s in servers.items()}
            wall, got = replay({m: s.base for m, s in servers.items()}, plan)
            rss = {m: s.rss_mb(peak=True) for m, s in servers.items()}
            perf = {m: server_times_since(s, marks[m]) for m, s in servers.items()}
        rows = {m: row(r, perf[m]) for m, r in got.items()}
        results.append({"settings": tune, "wall_s": wall, "models": rows, "rss_mb": rss})
        label = ", ".join(f"{k}={v}" for k, v in tune.items()) or "each model's own settings"
        print(f"\n{label}: {wall:.0f} s")
        print(
            "| model | calls | prompt tokens sent | processed | reused | generated | prompt tok/s | gen tok/s | peak MB |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for m, r in rows.items():
            reused = f"{100 * (1 - r['processed'] / r['sent']):.0f}%" if r["sent"] else "–"
            pp = f"{r['processed'] / r['prompt_s']:.0f}" if r["prompt_s"] else "–"
            gen = f"{r['generated'] / r['gen_s']:.1f}" if r["gen_s"] else "–"
            print(
                f"| {m} | {r['calls']} | {r['sent']:,} | {r['processed']:,} | {reused} | {r['generated']:,} | {pp} | "
                f"{gen} | {rss[m] or 0:,.0f} |",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()

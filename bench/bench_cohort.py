"""Real models playing skate: the local cohort (``players=local_cohort``) on this CPU.

Serves each model of the cohort with llama.cpp (``skate local``'s install and cache;
one server per model), puts a recording proxy on loopback in front of each (it times every call
and keeps its request, reply, ``finish_reason`` and token counts: ``calls-<model>.jsonl`` in the
run folder), plays one game among them in this process, and prints per model:

- setting: attempts, the share that became tasks, each rejection reason, replies that did not
  parse (rejected as malformed), replies cut at ``max_tokens``;
- answering: samples, accuracy (correct / samples, void ones left out), unparsable answers;
- calls: count, seconds and completion tokens per call, generation speed (tokens/s, from
  llama.cpp's own timing lines) and prompt speed;

then examples of valid and rejected tasks per model. ``--json`` writes every number.

    .venv/bin/python bench/bench_cohort.py                                  # COP, all four, fewer_calls, 3 rounds
    .venv/bin/python bench/bench_cohort.py --models qwen2.5-coder-1.5b,qwen2.5-coder-0.5b game=mathquiz
    .venv/bin/python bench/bench_cohort.py --out /tmp/cohort-cop --json /tmp/cohort-cop.json game.rounds=2
    .venv/bin/python bench/bench_cohort.py --table RUN_DIR                  # the table of a finished run
    .venv/bin/python bench/bench_cohort.py --speed 1 2                      # tokens/s per model, 1 and 2 threads
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_local import RecordingProxy, server_times_since, timings_of, wanted_fields  # noqa: E402

from skate.cli import local_game  # noqa: E402
from skate.cli.compose import compose_config  # noqa: E402
from skate.llm import plain  # noqa: E402
from skate.local import models as local_models  # noqa: E402
from skate.local import play as local  # noqa: E402
from skate.local import serving as local_serving  # noqa: E402
from skate.runlog.events import AttemptMade, Estimated, TaskSet, read_run  # noqa: E402
from skate.runner import run_game  # noqa: E402
from skate.settings.options import build_settings  # noqa: E402

SETTER_FIELDS = {
    "program",
    "question",
    "jail",
    "wrong_answers",
    "source",
    "answer_value",
    "question_type",
    "distractors",
}


def _role(request: dict) -> str:
    user = next(
        (
            str(m.get("content", ""))
            for m in request["messages"]
            if m.get("role") == "user" and "[[ ##" in str(m.get("content", ""))
        ),
        "",
    )
    fmt = request.get("response_format") or {}
    schema = fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema") or {}  # llama-cpp's form, OpenAI's
    fields = set(plain.template_fields(user)) or set(schema.get("properties") or ()) or set(wanted_fields(request))
    return "set" if fields & SETTER_FIELDS and "answer" not in fields else "answer"


def summarise(run: Path, perf: dict[str, list[dict]] | None = None) -> dict[str, dict]:
    """Per player: setting, answering and call numbers from a finished run folder (its
    ``events.jsonl``, ``usage.json`` and, where the bench recorded them, ``calls-<player>.jsonl``)."""
    log = read_run(run)
    usage = json.loads((run / "usage.json").read_text())["players"] if (run / "usage.json").exists() else {}
    out: dict[str, dict] = {}
    for p in log.start.players:
        me = p["name"]
        attempts = [a for a in log.of(AttemptMade) if a.player == me]
        estimates = [e for e in log.of(Estimated) if e.player == me and e.p is not None]
        calls_file = run / f"calls-{me}.jsonl"
        calls = [json.loads(line) for line in calls_file.read_text().splitlines()] if calls_file.exists() else []
        by_role: dict[str, list[dict]] = {"set": [], "answer": []}
        for c in calls:
            by_role[_role(c["request"])].append(c)
        u = usage.get(me, {})
        n_samples = sum(e.n for e in estimates)
        parse_fail = [a for a in attempts if not a.valid and a.reason == "malformed"]
        cut = [a for a in attempts if not a.valid and "cut off at the length limit" in (a.detail or "")]
        row = {
            "attempts": len(attempts),
            "valid": sum(a.valid for a in attempts),
            "reasons": dict(Counter(str(a.reason) for a in attempts if not a.valid).most_common()),
            "parse_failures": len(parse_fail),
            "cut_attempts": len(cut),
            "answer_samples": n_samples,
            "correct": sum(e.correct for e in estimates),
            "unparsable": sum(e.unparsable for e in estimates),
            "void": sum(e.void for e in log.of(Estimated) if e.player == me),
            "calls": u.get("calls", len(calls)),
            "cut_replies": u.get("cut", 0),
            "empty_replies": u.get("empty", 0),
            "prompt_tokens": u.get("prompt_tokens", 0),
            "completion_tokens": u.get("completion_tokens", 0),
            "seconds": u.get("seconds", 0.0),
        }
        for role, cs in by_role.items():
            row[f"{role}_calls"] = len(cs)
            row[f"{role}_s"] = sum(c["s"] for c in cs)
            row[f"{role}_completion_tokens"] = sum(
                (c["response"].get("usage") or {}).get("completion_tokens", 0)
                for c in cs
                if isinstance(c["response"], dict)
            )
        pf = (perf or {}).get(me) or timings_of(calls)
        row["prompt_tokens_sent"] = sum(
            int(
                ((c["response"].get("usage") or {}) if isinstance(c["response"], dict) else {}).get("prompt_tokens")
                or 0
            )
            for c in calls
        )
        row["eval_tokens"] = sum(x["eval_tokens"] for x in pf)
        row["eval_s"] = sum(x["eval_ms"] for x in pf) / 1000
        row["prompt_eval_tokens"] = sum(x["prompt_tokens"] for x in pf)
        row["prompt_eval_s"] = sum(x["prompt_ms"] for x in pf) / 1000
        row["examples_valid"] = [a.text for a in attempts if a.valid][:3]
        row["examples_rejected"] = [(str(a.reason), a.detail, a.text) for a in attempts if not a.valid][:6]
        out[me] = row
    out["_tasks"] = {"count": len(log.of(TaskSet))}
    return out


def tokens_table(summary: dict[str, dict]) -> str:
    """Per model: prompt tokens sent and processed (the share the server reused from its cache),
    tokens generated, and the speeds llama.cpp measured."""
    lines = [
        "| model | calls | prompt tokens sent | processed | reused | generated | prompt tok/s | gen tok/s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for me, r in summary.items():
        if me.startswith("_"):
            continue
        sent, done = r.get("prompt_tokens_sent", 0), r["prompt_eval_tokens"]
        reused = f"{100 * (1 - done / sent):.0f}%" if sent else "–"
        pp = f"{r['prompt_eval_tokens'] / r['prompt_eval_s']:.0f}" if r["prompt_eval_s"] else "–"
        gen = f"{r['eval_tokens'] / r['eval_s']:.1f}" if r["eval_s"] else "–"
        lines.append(f"| {me} | {r['calls']} | {sent:,} | {done:,} | {reused} | {r['eval_tokens']:,} | {pp} | {gen} |")
    return "\n".join(lines)


def pct(a: float, b: float) -> str:
    """``a/b (x%)``; a share read from probabilities (a float) with one decimal."""
    shown = f"{a:.1f}" if isinstance(a, float) and not a.is_integer() else f"{a:g}"
    return f"{shown}/{b:g} ({100 * a / b:.0f}%)" if b else "–"


def table(summary: dict[str, dict]) -> str:
    lines = [
        "| model | attempts valid | rejected (reason) | unparsed | cut | answer accuracy | unparsable answers | "
        "calls | s/call (set / answer) | completion tok/call (set / answer) | gen tok/s | prompt tok/s |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for me, r in summary.items():
        if me.startswith("_"):
            continue
        reasons = ", ".join(f"{k} {v}" for k, v in r["reasons"].items()) or "–"
        per = lambda a, b: f"{a / b:.1f}" if b else "–"  # noqa: E731
        gen = f"{r['eval_tokens'] / r['eval_s']:.1f}" if r["eval_s"] else "–"
        pp = f"{r['prompt_eval_tokens'] / r['prompt_eval_s']:.0f}" if r["prompt_eval_s"] else "–"
        lines.append(
            f"| {me} | {pct(r['valid'], r['attempts'])} | {reasons} | {r['parse_failures']} | {r['cut_attempts']} | "
            f"{pct(r['correct'], r['answer_samples'])} | {r['unparsable']} | {r['calls']} | "
            f"{per(r['set_s'], r['set_calls'])} / {per(r['answer_s'], r['answer_calls'])} | "
            f"{per(r['set_completion_tokens'], r['set_calls'])} / {per(r['answer_completion_tokens'], r['answer_calls'])} | "
            f"{gen} | {pp} |"
        )
    return "\n".join(lines)


def examples(summary: dict[str, dict], n: int = 2) -> str:
    out = []
    for me, r in summary.items():
        if me.startswith("_"):
            continue
        out.append(f"\n### {me}")
        for t in r["examples_valid"][:n]:
            out.append(f"- valid:\n```python\n{t[:600]}\n```")
        for reason, detail, t in r["examples_rejected"][: n * 2]:
            out.append(f"- rejected ({reason}): {detail[:200]}\n```\n{t[:400]}\n```")
    return "\n".join(out)


SPEED_PROMPT = (
    "Write a Python function that returns the n-th Fibonacci number, iteratively, with a short "
    "docstring, then three lines that call it and print the results. "
    * 1
    + "Here is the style to follow. "
    + " ".join(f"Rule {i}: keep names short and clear." for i in range(40))
)


def speed(
    models: list[local_models.LocalModel],
    threads: list[int],
    max_tokens: int = 128,
    server_kind: str = local_serving.DEFAULT_SERVER,
    polls: list[int] | None = None,
) -> list[dict]:
    """Each model alone (and, for each thread count, all of them at once): prompt and generation
    speed from llama.cpp's own timing of one greedy completion, after a warm-up request (llama-server:
    its prompt cache off for these requests, and each ``poll`` level in ``polls``)."""
    import threading
    import urllib.request

    def ask(server: local_serving.ServerProcess, name: str, out: list, prompt: str = SPEED_PROMPT) -> None:
        body = {
            "model": name,
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": max_tokens,
            "temperature": 0,
            "seed": 0,
        }
        if server_kind == local_serving.LLAMA_SERVER:
            body["cache_prompt"] = False
        req = urllib.request.Request(
            f"{server.base}/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        t0 = time.perf_counter()
        with urllib.request.urlopen(req, timeout=1800) as r:
            data = json.loads(r.read())
        out.append((time.perf_counter() - t0, data["usage"], data.get("timings")))

    rows = []
    root = local_serving.cache_root()
    grid = [(n, poll) for n in threads for poll in (polls or [None])]
    for n, poll in grid:
        serving = local_serving.serving_many(
            root, models, threads=n, server=server_kind, tune={"poll": poll} if poll is not None else None
        )
        servers = serving.__enter__()
        try:
            for name, server in servers.items():  # warm-up: the weights into memory (another prompt:
                ask(server, name, [], "Say hello.")  # the measured one is not in the prompt cache)
            for together in (False, True):
                for name, server in servers.items():  # a prompt of its own between: no prefix cached
                    ask(server, name, [], f"Count to {3 + together}.")
                marks = {name: s.log.stat().st_size for name, s in servers.items()}
                results: dict[str, list] = {name: [] for name in servers}
                if together:
                    ts = [threading.Thread(target=ask, args=(s, name, results[name])) for name, s in servers.items()]
                    t0 = time.perf_counter()
                    for t in ts:
                        t.start()
                    for t in ts:
                        t.join()
                    wall = time.perf_counter() - t0
                else:
                    wall = 0.0
                    for name, s in servers.items():
                        t0 = time.perf_counter()
                        ask(s, name, results[name])
                        wall += time.perf_counter() - t0
                for name, s in servers.items():
                    timing = results[name][0][2]
                    if timing:  # llama-server: its own timing, in the reply
                        p = {
                            "prompt_tokens": timing["prompt_n"],
                            "prompt_ms": timing["prompt_ms"],
                            "eval_tokens": timing["predicted_n"],
                            "eval_ms": timing["predicted_ms"],
                        }
                    else:
                        perf = server_times_since(s, marks[name])
                        p = perf[-1] if perf else {}
                    rows.append(
                        {
                            "model": name,
                            "threads": n,
                            "poll": poll,
                            "together": together,
                            "wall_s": wall,
                            "s": results[name][0][0],
                            "prompt_tokens": p.get("prompt_tokens"),
                            "prompt_tok_s": 1000 * p["prompt_tokens"] / p["prompt_ms"] if p.get("prompt_ms") else None,
                            "gen_tokens": p.get("eval_tokens"),
                            "gen_tok_s": 1000 * p["eval_tokens"] / p["eval_ms"] if p.get("eval_ms") else None,
                            "rss_mb": s.rss_mb(),
                        }
                    )
        finally:
            serving.__exit__(None, None, None)
    print(
        "| model | threads | poll | alone or all at once | prompt tokens | prompt tok/s | generated | gen tok/s | s | wall s (all) |"
    )
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        f = lambda v: f"{v:.1f}" if isinstance(v, float) else str(v)  # noqa: E731
        print(
            f"| {r['model']} | {r['threads']} | {r['poll']} | {'all at once' if r['together'] else 'alone'} | {r['prompt_tokens']} | "
            f"{f(r['prompt_tok_s'])} | {r['gen_tokens']} | {f(r['gen_tok_s'])} | {r['s']:.1f} | {r['wall_s']:.1f} |"
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="cohort", help="comma-separated, or 'cohort' (all four)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int)
    ap.add_argument("--slots", type=int)
    ap.add_argument("--server", choices=local_serving.SERVERS, default=local_serving.DEFAULT_SERVER)
    ap.add_argument("--poll", nargs="*", type=int, help="with --speed: llama-server's poll levels to try")
    ap.add_argument("--out", type=Path, help="the run folder (default: a temporary one)")
    ap.add_argument("--json", type=Path, help="write every number here")
    ap.add_argument("--table", type=Path, help="only print the table of this finished run folder")
    ap.add_argument(
        "--speed",
        nargs="*",
        type=int,
        metavar="THREADS",
        help="only measure each model's speed (alone and all at once) with these llama.cpp thread counts",
    )
    ap.add_argument(
        "overrides",
        nargs="*",
        help="Hydra overrides (default: experiment=fewer_calls game.rounds=3, and for cop and scp estimator=logprobs)",
    )
    args = ap.parse_args()
    if args.table:
        s = summarise(args.table)
        print(table(s))
        print(tokens_table(s))
        print(examples(s))
        return
    models = local_models.parse_models(args.models)
    if args.speed is not None:
        rows = speed(models, args.speed or [2], server_kind=args.server, polls=args.poll)
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1))
        return
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-cohort-")) / "run"
    root = local_serving.cache_root()
    print(
        f"python {platform.python_version()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}, "
        f"{args.server}; run in {out}",
        flush=True,
    )
    with local_serving.serving_many(
        root, models, threads=local.cohort_threads(args.threads, args.server), server=args.server, slots=args.slots
    ) as servers:
        proxies = {name: RecordingProxy(s.base, refusal_as_400=False) for name, s in servers.items()}
        log_start = {name: s.log.stat().st_size for name, s in servers.items()}
        # The game talks to the proxies: players=local_cohort reads their addresses from the
        # environment (all four) or gets them in players.llm (a subset).
        os.environ.update(local.cohort_env(proxies, {}))  # type: ignore[arg-type]
        overrides = local_game.game_overrides(
            ["logger=none", "llm.cache=false", f"seed={args.seed}", *args.overrides],
            local.client_falls_back_on_llama_cpp(),
            local_game.cohort_players(list(servers)),
            local_game.cohort_defaults(args.overrides),
        )
        print("overrides: " + " ".join(overrides), flush=True)
        cfg = compose_config(overrides)
        import resource

        cpu0 = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
        t0 = time.perf_counter()
        try:
            run_game(build_settings(cfg), out)
        finally:
            wall = time.perf_counter() - t0
            # the game's own CPU (this process: engine, client, ratings) and its children's (the
            # sandboxed programs; the servers are reaped only when they stop, after this)
            cpu1 = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
            game_cpu = [
                round(b.ru_utime + b.ru_stime - a.ru_utime - a.ru_stime, 1) for a, b in zip(cpu0, cpu1, strict=False)
            ]
            for p in proxies.values():
                p.close()
        perf = {}
        for name, s in servers.items():
            if args.server == local_serving.PYTHON_SERVER:  # llama-server's timings are in its replies
                perf[name] = server_times_since(s, log_start[name])
            with (out / f"calls-{name}.jsonl").open("w") as f:
                for c in proxies[name].calls:
                    f.write(json.dumps(c) + "\n")
        rss = {name: s.rss_mb(peak=True) for name, s in servers.items()}
    s = summarise(out, perf)
    s["_run"] = {
        "wall_s": wall,
        "overrides": overrides,
        "rss_mb": rss,
        "out": str(out),
        "server": args.server,
        "slots": args.slots,
        "threads": args.threads,
        "game_cpu_s": game_cpu[0],
        "sandbox_cpu_s": game_cpu[1],
    }
    print(
        f"\ngame: {wall:.0f} s, {s['_tasks']['count']} tasks; the game's own CPU {game_cpu[0]} s, its sandboxed "
        f"programs' {game_cpu[1]} s; servers' peak RSS (MB): {rss}\n"
    )
    print(table(s))
    print()
    print(tokens_table(s))
    print(examples(s))
    if args.json:
        args.json.write_text(json.dumps(s, indent=1, default=str))


if __name__ == "__main__":
    main()

"""How a tiny real model plays: valid-task rate, unparsable-answer rate, tokens and time per call.

Serves a tiny GGUF model with llama.cpp (``skate local``'s install and cache: the first
run builds the server and downloads the model) and plays ``players=local_tiny`` (the model beside
two simulated players) for each model and each ``llm.structured`` setting asked for. The game's
calls go through a recording proxy on loopback, which times each call and keeps its
``finish_reason``, token counts and reply (``calls.jsonl`` in each run folder); the rates come
from the run's ``events.jsonl`` (the model's setting attempts and its estimates) and
``usage.json``.

    .venv/bin/python bench/bench_local.py                                 # gemma3-270m, text format, 2 rounds
    .venv/bin/python bench/bench_local.py --model gemma3-270m smollm2-135m --structured off on --rounds 3
    .venv/bin/python bench/bench_local.py --out /tmp/bench-local game=mathquiz   # extra Hydra overrides

``--structured`` values are passed as ``llm.structured=...``; ``none`` leaves the key out (a
tree without that key). Prints one Markdown table row per game, then examples of rejected
attempts and of replies to answering requests.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skate.cli.compose import compose_config  # noqa: E402
from skate.local import models as local_models  # noqa: E402
from skate.local import serving as local_serving  # noqa: E402
from skate.runlog.events import read_run  # noqa: E402
from skate.runner import run_game  # noqa: E402
from skate.settings.options import build_settings  # noqa: E402


class RecordingProxy:
    """Forwards ``/v1/...`` to ``upstream`` and appends one record per chat call to ``calls``."""

    def __init__(self, upstream: str, refusal_as_400: bool = False) -> None:
        self.upstream = upstream.rstrip("/")
        self.calls: list[dict] = []
        self.t0 = time.perf_counter()  # each call's "start" is seconds after this
        lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def _forward(self, body: bytes | None) -> None:
                url = proxy.upstream + self.path.removeprefix("/v1")
                req = urllib.request.Request(url, body, {"Content-Type": "application/json"}, method=self.command)
                t0 = time.perf_counter()
                try:
                    with urllib.request.urlopen(req, timeout=1800) as r:
                        status, data = r.status, r.read()
                except urllib.error.HTTPError as e:
                    status, data = e.code, e.read()
                took = time.perf_counter() - t0
                if (
                    refusal_as_400
                    and status == 500
                    and body
                    and b"response_format" in body
                    and b"response_format" in data
                ):
                    # llama-cpp-python 0.3.36 answers a response_format type it does not take
                    # (json_schema) with a 500 naming it; an OpenAI-compatible server says 400.
                    status = 400
                if body and self.path.endswith("/chat/completions"):
                    record = {"start": t0 - proxy.t0, "s": took, "status": status, "request": json.loads(body)}
                    try:
                        record["response"] = json.loads(data)
                    except ValueError:
                        record["response"] = data.decode(errors="replace")
                    with lock:
                        proxy.calls.append(record)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._forward(None)

            def do_POST(self):
                self._forward(self.rfile.read(int(self.headers.get("Content-Length", 0))))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def wanted_fields(request: dict) -> list[str]:
    """The output fields a DSPy request asks for (from its last user message), or the JSON
    schema's properties when it asks for structured output."""
    import re

    fmt = request.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") or {}
    if schema.get("properties"):
        return list(schema["properties"])
    user = next((m["content"] for m in reversed(request["messages"]) if m["role"] == "user"), "")
    tail = user.rpartition("Respond with")[2]
    return [f for f in re.findall(r"\[\[ ## (\w+) ## \]\]", tail) if f != "completed"]


PERF = re.compile(
    r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens.*?\n.*?eval time =\s*([\d.]+) ms /\s*(\d+) runs"
    r".*?\n.*?total time =\s*([\d.]+) ms"
)


def server_times(text: str) -> list[dict]:
    """llama.cpp's own timing of each completion (its llama_perf_context_print lines)."""
    return [
        {
            "prompt_ms": float(a),
            "prompt_tokens": int(b),
            "eval_ms": float(c),
            "eval_tokens": int(d),
            "total_ms": float(e),
        }
        for a, b, c, d, e in PERF.findall(text)
    ]


def timings_of(calls: list[dict]) -> list[dict]:
    """llama-server's own timing of each recorded call (the ``timings`` of its reply), in the form
    :func:`server_times` reads from llama-cpp-python's log, with the prompt tokens it took from its
    cache (``cached_tokens``)."""
    out = []
    for c in calls:
        t = c["response"].get("timings") if isinstance(c["response"], dict) else None
        if t:
            out.append(
                {
                    "prompt_ms": float(t.get("prompt_ms") or 0),
                    "prompt_tokens": int(t.get("prompt_n") or 0),
                    "eval_ms": float(t.get("predicted_ms") or 0),
                    "eval_tokens": int(t.get("predicted_n") or 0),
                    "total_ms": float(t.get("prompt_ms") or 0) + float(t.get("predicted_ms") or 0),
                    "cached_tokens": int(t.get("cache_n") or 0),
                }
            )
    return out


def server_times_since(server: local_serving.ServerProcess, start: int) -> list[dict]:
    """:func:`server_times` of what ``server`` logged after byte ``start`` of its log."""
    with server.log.open("rb") as f:
        f.seek(start)
        return server_times(f.read().decode(errors="replace"))


def play(
    model: local_models.LocalModel,
    server: local_serving.ServerProcess,
    structured: str,
    rounds: int,
    seed: int,
    out_root: Path,
    extra: list[str],
    refusal_as_400: bool,
) -> dict:
    proxy = RecordingProxy(server.base, refusal_as_400)
    log_start = server.log.stat().st_size
    os.environ["LOCAL_LLM_API_BASE"] = proxy.base
    os.environ["LOCAL_LLM_MODEL"] = model.name
    out = out_root / f"{model.name}-structured-{structured}"
    overrides = [
        "players=local_tiny",
        f"game.rounds={rounds}",
        "estimator=fixed_n",
        "estimator.n=4",
        "logger=none",
        "report=false",
        "llm.cache=false",
        f"seed={seed}",
        *([f"llm.structured={structured}"] if structured != "none" else []),
        *extra,
    ]
    cfg = compose_config(overrides)
    t0 = time.perf_counter()
    try:
        run_game(build_settings(cfg), out)
    finally:
        wall = time.perf_counter() - t0
        proxy.close()
    perf = server_times_since(server, log_start) or timings_of(
        proxy.calls
    )  # llama-cpp-python's log, or llama-server's replies
    with (out / "calls.jsonl").open("w") as f:
        for c in proxy.calls:
            f.write(json.dumps(c) + "\n")
    log = read_run(out)
    me = model.name
    attempts = [
        a for a in log.of(__import__("skate.runlog.events", fromlist=["AttemptMade"]).AttemptMade) if a.player == me
    ]
    estimates = [
        e for e in log.of(__import__("skate.runlog.events", fromlist=["Estimated"]).Estimated) if e.player == me
    ]
    usage = json.loads((out / "usage.json").read_text())["players"].get(me, {})
    calls = proxy.calls
    ok = [c for c in calls if isinstance(c["response"], dict) and c["response"].get("choices")]
    finish = Counter(ch.get("finish_reason") for c in ok for ch in c["response"]["choices"])
    empty = sum(1 for c in ok for ch in c["response"]["choices"] if not (ch["message"].get("content") or "").strip())
    samples = sum(e.n for e in estimates)
    return {
        "model": me,
        "structured": structured,
        "rounds": rounds,
        "wall_s": wall,
        "out": str(out),
        "attempts": len(attempts),
        "valid": sum(a.valid for a in attempts),
        "reasons": Counter(a.reason for a in attempts if not a.valid),
        "answer_samples": samples,
        "unparsable": sum(e.unparsable for e in estimates),
        "void": sum(e.void for e in estimates),
        "correct": sum(e.correct for e in estimates),
        "calls": len(calls),
        "usage_calls": usage.get("calls", 0),
        "prompt_tokens": usage.get("prompt_tokens", 0),
        "completion_tokens": usage.get("completion_tokens", 0),
        "call_s": [p["total_ms"] / 1000 for p in perf],
        "perf": perf,
        "finish": finish,
        "empty": empty,
        "bad_attempts": [(a.reason, a.detail, a.text) for a in attempts if not a.valid],
        "answer_replies": [
            (ch["message"].get("content") or "", ch.get("finish_reason"))
            for c in ok
            if wanted_fields(c["request"])[-1:] in (["answer"], ["letter"], ["choice"])
            for ch in c["response"]["choices"]
        ],
        "setter_replies": [
            (ch["message"].get("content") or "", ch.get("finish_reason"))
            for c in ok
            if "program" in wanted_fields(c["request"]) or "question" in wanted_fields(c["request"])
            for ch in c["response"]["choices"]
        ],
    }


def row(r: dict) -> str:
    pct = lambda a, b: f"{a}/{b} ({100 * a / b:.0f}%)" if b else "–"  # noqa: E731
    n = r["usage_calls"] or 1
    times = sorted(r["call_s"])
    med = times[len(times) // 2] if times else 0
    reasons = ", ".join(f"{k} {v}" for k, v in r["reasons"].most_common()) or "–"
    finish = ", ".join(f"{k} {v}" for k, v in r["finish"].most_common())
    ev_ms, ev_tok = sum(p["eval_ms"] for p in r["perf"]), sum(p["eval_tokens"] for p in r["perf"])
    speed = f"{1000 * ev_tok / ev_ms:.0f}" if ev_ms else "–"
    return (
        f"| {r['model']} | {r['structured']} | {r['rounds']} | {pct(r['valid'], r['attempts'])} | {reasons} | "
        f"{pct(r['unparsable'], r['answer_samples'])} | {r['usage_calls']} | {r['prompt_tokens'] / n:,.0f} | "
        f"{r['completion_tokens'] / n:,.0f} | {sum(times) / max(len(times), 1):.1f} / {med:.1f} | {speed} | {finish} ({r['empty']} empty) | "
        f"{r['wall_s']:.0f} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", nargs="+", default=[local_models.DEFAULT_MODEL], choices=sorted(local_models.MODELS))
    ap.add_argument("--structured", nargs="+", default=["none"], help="llm.structured values (none: leave it out)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int)
    ap.add_argument("--server", choices=local_serving.SERVERS, default=local_serving.DEFAULT_SERVER)
    ap.add_argument("--out", type=Path, help="where the run folders go (default: a temporary folder)")
    ap.add_argument(
        "--no-refusal-as-400",
        dest="refusal_as_400",
        action="store_false",
        help="pass llama-cpp-python's HTTP 500 for a response_format it does not take through "
        "as it is (by default the proxy makes it the 400 other servers give)",
    )
    ap.add_argument("--examples", type=int, default=3, help="rejected attempts and answer replies shown per game")
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    out_root = args.out or Path(tempfile.mkdtemp(prefix="bench-local-"))
    root = local_serving.cache_root()
    print(
        f"python {platform.python_version()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}, "
        f"{args.server}, estimator=fixed_n n=4, overrides: {args.overrides or 'none'}; runs in {out_root}\n"
    )
    results = []
    for name in args.model:
        model = local_models.MODELS[name]
        with local_serving.serving(root, model, threads=args.threads, server=args.server) as server:
            for s in args.structured:
                r = play(model, server, s, args.rounds, args.seed, out_root, args.overrides, args.refusal_as_400)
                r["rss_mb"] = server.rss_mb(peak=True)
                results.append(r)
                print(
                    f"done: {name} structured={s} in {r['wall_s']:.0f} s, server peak {r['rss_mb']:.0f} MB resident",
                    flush=True,
                )
    print(
        "\n| model | llm.structured | rounds | valid tasks | rejected (reason) | unparsable answers | calls | "
        "prompt tok/call | completion tok/call | server s/call mean / median | completion tok/s | finish_reason | game s |"
    )
    print("|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---|---:|")
    for r in results:
        print(row(r))
    for r in results:
        print(f"\n### {r['model']}, llm.structured={r['structured']} ({r['out']})")
        for reason, detail, text in r["bad_attempts"][: args.examples]:
            print(f"- rejected ({reason}): {detail[:160]!r}\n  text: {text[:300]!r}")
        for text, fin in r["answer_replies"][: args.examples]:
            print(f"- answer reply ({fin}): {text[:300]!r}")
        for text, fin in r["setter_replies"][: args.examples]:
            print(f"- setter reply ({fin}): {text[:400]!r}")


if __name__ == "__main__":
    main()

"""Does ``experiment=fewer_calls`` reach the default configuration's ranking for fewer model calls?

The default configuration is the paper's (``estimator=algorithm1``, ``rating=trueskill``: what
``python -m skate`` plays with no overrides); the preset is ``experiment=fewer_calls``
(``rating=irt``, ``estimator=adaptive``, ``stop.settled``, a larger ``game.rounds`` as a cap).
A model call is one answer sample or one setter attempt; it is counted from the run's
events.jsonl: every ``attempt`` event, plus ``n`` (samples that got an answer) and ``void``
(samples whose call failed) of every ``estimate`` event (a skipped player counts 0).

Part ``games``: every game and mode (cop, mathquiz, pyjail, scp built, scp player_set) with its
default simulated cohort (six players of known skill), for each configuration and seed
(``logger=none report=false``). The default configuration plays ``--rounds`` rounds (the games'
own defaults are long: pyjail alone takes about 20 s a round); the preset plays up to its own cap
(or ``--preset-rounds``) and may stop earlier once settled. Per (game, configuration): mean model
calls over the seeds, mean rounds played, how many seeds ended "settled", Kendall τ between the
final scores and the players' true skills (mean and worst over seeds), τ between the preset's
and the default's final scores for the same seed, mean wall time per game, and the ratio of the
preset's mean calls to the default's.

Part ``fake``: the fake OpenAI-compatible server (``skate.llm.fake_server``) runs in this
process with three models of known skill (ace=0.9, mid=0.6, low=0.3); three LLM players play
game=cop (``--fake-games`` adds others, e.g. mathquiz) against it with ``llm.cache=false``,
``players.simulated=[]`` and ``llm.preflight=false`` (so the server sees only the game's own
requests), once per configuration with the same seed and the rounds of part ``games``. Per game:
the server's own request count (a difference of its ``stats`` before and after), the
completions it served, the calls counted from events.jsonl, rounds played, how the game ended,
the final order and whether it is the true order ace > mid > low, and the ratio of server
requests preset/default. One request may carry several samples (the client asks for ``n``
completions at once where the server allows it), so server requests and samples differ: the
server's completions are the samples it served. They can also exceed the calls counted from
events.jsonl: a setter's check of its own task in a fresh context (mathquiz: it answers its own
question; pyjail: it captures its own flag) is a model call that no ``attempt`` or ``estimate``
event counts, so the events' count leaves it out in both parts.

Every game runs in a fresh temporary folder; an error in one game is reported in the table
(and listed below it) instead of stopping the others.

    .venv/bin/python bench/bench_fewer_calls.py                                  # both parts, seeds 0 1 2, 10 rounds
    .venv/bin/python bench/bench_fewer_calls.py --part games --seeds 0 --rounds 2 --preset-rounds 4
    .venv/bin/python bench/bench_fewer_calls.py --part games --games cop mathquiz --seeds 0 1 2 3
    .venv/bin/python bench/bench_fewer_calls.py --part fake --fake-games cop mathquiz
    .venv/bin/python bench/bench_fewer_calls.py --part games --games cop -- game.attempts=2              # overrides for every game, after --
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from scipy.stats import kendalltau

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import skate  # noqa: E402
from skate.cli.compose import compose_config  # noqa: E402
from skate.runner import run_game  # noqa: E402
from skate.settings.options import build_settings  # noqa: E402

GAMES: dict[str, list[str]] = {
    "cop": ["game=cop"],
    "mathquiz": ["game=mathquiz"],
    "pyjail": ["game=pyjail"],
    "scp": ["game=scp"],  # its default mode: built
    "scp player_set": ["game=scp", "game.mode=player_set"],
}
CONFIGS: dict[str, list[str]] = {
    "default": [],
    "fewer_calls": ["experiment=fewer_calls"],
}
FAKE_MODELS = {"ace": 0.9, "mid": 0.6, "low": 0.3}
TRUE_ORDER = ["ace", "mid", "low"]  # strongest first


def game_key(name: str) -> str:
    """A --games / --fake-games name as a GAMES key ("scp_player_set" and "player_set" too)."""
    key = name.replace("_player_set", " player_set").replace("-", " ")
    return "scp player_set" if key in ("player_set", "scp player set") else key


def rounds_overrides(config: str, rounds: int, preset_rounds: int | None) -> list[str]:
    if config == "default":
        return [f"game.rounds={rounds}"]
    return [f"game.rounds={preset_rounds}"] if preset_rounds is not None else []


def read_events(out: Path) -> dict[str, Any]:
    """Model calls (attempts + answered + void samples), rounds played and how the run ended."""
    attempts = samples = void = rounds = 0
    ended = None
    path = out / "events.jsonl"
    if path.exists():
        with path.open() as f:
            for line in f:
                if not line.strip():
                    continue
                e = json.loads(line)
                kind = e.get("event")
                if kind == "attempt":
                    attempts += 1
                elif kind == "estimate":
                    samples += int(e.get("n") or 0)
                    void += int(e.get("void") or 0)
                elif kind == "round_end":
                    rounds += 1
                elif kind == "run_end":
                    ended = e.get("ended") or "rounds"
                elif kind == "run_error":
                    ended = "error"
    return {
        "calls": attempts + samples + void,
        "attempts": attempts,
        "samples": samples,
        "void": void,
        "rounds": rounds,
        "ended": ended,
    }


def tau(xs: list[float], ys: list[float]) -> float:
    if len(xs) < 2:
        return math.nan
    t = kendalltau(xs, ys).statistic
    return float(t) if t is not None else math.nan


def short_error(exc: BaseException) -> str:
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    return text if len(text) <= 200 else text[:197] + "..."


def play(overrides: list[str]) -> dict[str, Any]:
    """One game in a fresh temporary folder: its counts, final table and wall time, or its error."""
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-fewer-calls-") as tmp:
        out = Path(tmp)
        try:
            cfg = compose_config(overrides)
            result = run_game(build_settings(cfg), out)
        except Exception as exc:  # noqa: BLE001 - one game's error is reported, the others go on
            return {
                "error": short_error(exc),
                "trace": traceback.format_exc(limit=3),
                "wall": time.perf_counter() - t0,
                **read_events(out),
            }
        counts = read_events(out)
    rows = sorted(result.table, key=lambda r: r.get("rank") or 0)
    return {
        "error": None,
        "wall": time.perf_counter() - t0,
        "table": rows,
        "order": [r["player"] for r in rows],
        **counts,
    }


def true_tau(rows: list[dict[str, Any]]) -> float:
    rated = [r for r in rows if r.get("true_skill") is not None and r.get("score") is not None]
    return tau([r["score"] for r in rated], [r["true_skill"] for r in rated])


def pair_tau(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> float:
    """τ between two final tables' scores, over the players both rated."""
    sa = {r["player"]: r["score"] for r in a if r.get("score") is not None}
    sb = {r["player"]: r["score"] for r in b if r.get("score") is not None}
    common = sorted(set(sa) & set(sb))
    return tau([sa[p] for p in common], [sb[p] for p in common])


def fmt(x: float | None, spec: str = ".2f") -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def mean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    return sum(xs) / len(xs) if xs else None


# --------------------------------------------------------------------------------- games
def part_games(args: argparse.Namespace) -> None:
    print(
        f"## Simulated cohorts: default configuration vs experiment=fewer_calls\n\n"
        f"seeds {' '.join(map(str, args.seeds))}; default configuration {args.rounds} rounds; "
        f"preset at most {preset_desc(args)}; "
        f"calls = attempts + samples answered + void samples\n"
    )
    print(
        "| game | configuration | seeds ok | model calls (mean) | rounds (mean) | settled | τ to truth mean | "
        "τ to truth worst | τ to default (mean) | wall s / game | calls preset / default |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    errors: list[str] = []
    for game in args.games:
        runs: dict[str, dict[int, dict[str, Any]]] = {}
        for config, extra in CONFIGS.items():
            runs[config] = {}
            for seed in args.seeds:
                ov = [
                    *GAMES[game],
                    *extra,
                    *rounds_overrides(config, args.rounds, args.preset_rounds),
                    f"seed={seed}",
                    "logger=none",
                    "report=false",
                    *args.overrides,
                ]
                r = play(ov)
                runs[config][seed] = r
                if r["error"]:
                    errors.append(f"{game} / {config} / seed {seed}: {r['error']}")
                    if args.verbose:
                        print(r["trace"], file=sys.stderr)
            ok = [r for r in runs[config].values() if not r["error"]]
            taus = [true_tau(r["table"]) for r in ok]
            calls = mean([float(r["calls"]) for r in ok])
            ratio = "–"
            vs_default = "–"
            if config != "default":
                base = mean([float(r["calls"]) for r in runs["default"].values() if not r["error"]])
                ratio = fmt(calls / base if calls is not None and base else None, ".3f")
                vs_default = fmt(
                    mean(
                        [
                            pair_tau(r["table"], runs["default"][s]["table"])
                            for s, r in runs[config].items()
                            if not r["error"] and not runs["default"][s]["error"]
                        ]
                    )
                )
            settled = sum(1 for r in ok if r["ended"] == "settled")
            n_ok = f"{len(ok)}/{len(args.seeds)}" + (" (error)" if len(ok) < len(args.seeds) else "")
            worst = min((t for t in taus if not math.isnan(t)), default=None)
            print(
                f"| {game} | {config} | {n_ok} | {fmt(calls, ',.0f')} | {fmt(mean([float(r['rounds']) for r in ok]), '.1f')} | "
                f"{settled}/{len(ok)} | {fmt(mean(taus))} | {fmt(worst)} | {vs_default} | "
                f"{fmt(mean([r['wall'] for r in runs[config].values()]), '.1f')} | {ratio} |",
                flush=True,
            )
    if errors:
        print("\nErrors:\n")
        for e in errors:
            print(f"- {e}")
    print()


def preset_cap() -> int:
    try:
        return int(skate.config(experiment="fewer_calls").game.rounds)
    except Exception:  # noqa: BLE001
        return -1


def preset_desc(args: argparse.Namespace) -> str:
    if args.preset_rounds is not None:
        return f"{args.preset_rounds} rounds (--preset-rounds)"
    return f"{preset_cap()} rounds (its own cap)"


# ---------------------------------------------------------------------------------- fake
def part_fake(args: argparse.Namespace) -> None:
    from skate.llm.fake_server import FakeLLMServer, FakeModel
    from skate.llm.transport import close_pools

    seed = args.seeds[0]
    print(
        f"## LLM players against the fake server (in-process): default configuration vs experiment=fewer_calls\n\n"
        f"models {', '.join(f'{n}={s}' for n, s in FAKE_MODELS.items())}; seed {seed}; default configuration "
        f"{args.rounds} rounds; preset at most {preset_desc(args)}; llm.cache=false, llm.preflight=false\n"
    )
    print(
        "| game | configuration | server requests | completions served | calls (events) | rounds | ended | "
        "final order | true order? | wall s | requests preset / default |"
    )
    print("|---|---|---:|---:|---:|---:|---|---|---|---:|---:|")
    errors: list[str] = []
    with FakeLLMServer({n: FakeModel(s) for n, s in FAKE_MODELS.items()}) as server:
        base = server.api_base
        players = (
            "[" + ", ".join(f"{{name: {n}, model: hosted_vllm/{n}, api_base: '{base}'}}" for n in FAKE_MODELS) + "]"
        )
        for game in args.fake_games:
            requests: dict[str, int] = {}
            for config, extra in CONFIGS.items():
                ov = [
                    *GAMES[game],
                    *extra,
                    *rounds_overrides(config, args.rounds, args.preset_rounds),
                    f"seed={seed}",
                    "logger=none",
                    "report=false",
                    "players.simulated=[]",
                    f"players.llm={players}",
                    "llm.cache=false",
                    "llm.preflight=false",
                    *args.overrides,
                ]
                req0, choices0 = server.stats.requests, server.stats.completion_choices
                try:
                    r = play(ov)
                finally:
                    close_pools()
                req = server.stats.requests - req0
                choices = server.stats.completion_choices - choices0
                requests[config] = req
                if r["error"]:
                    errors.append(f"{game} / {config}: {r['error']}")
                    if args.verbose:
                        print(r["trace"], file=sys.stderr)
                order = " > ".join(r.get("order") or []) or "–"
                right = "–" if r["error"] else ("yes" if r["order"] == TRUE_ORDER else "no")
                ratio = "–"
                if config != "default" and requests.get("default"):
                    ratio = f"{req / requests['default']:.3f}"
                ended = "error" if r["error"] else r["ended"]
                print(
                    f"| {game} | {config} | {req:,} | {choices:,} | {r['calls']:,} | {r['rounds']} | {ended} | "
                    f"{order} | {right} | {r['wall']:.1f} | {ratio} |",
                    flush=True,
                )
    if errors:
        print("\nErrors:\n")
        for e in errors:
            print(f"- {e}")
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=["games", "fake", "all"], default="all")
    ap.add_argument(
        "--seeds", type=int, nargs="+", default=[0, 1, 2], help="seeds of part games (part fake plays the first)"
    )
    ap.add_argument("--rounds", type=int, default=10, help="game.rounds of the default configuration")
    ap.add_argument(
        "--preset-rounds",
        type=int,
        default=None,
        help="game.rounds of experiment=fewer_calls (default: the preset's own cap)",
    )
    ap.add_argument(
        "--games",
        nargs="+",
        default=list(GAMES),
        help=f"games of part games, of: {', '.join(repr(g) for g in GAMES)} (scp_player_set too)",
    )
    ap.add_argument("--fake-games", nargs="+", default=["cop"], help="games of part fake (e.g. cop mathquiz)")
    ap.add_argument("--verbose", action="store_true", help="print the traceback of a game that fails")
    ap.add_argument("overrides", nargs="*", help="more overrides for every game")
    args = ap.parse_args()
    args.games = [game_key(g) for g in args.games]
    args.fake_games = [game_key(g) for g in args.fake_games]
    for g in [*args.games, *args.fake_games]:
        if g not in GAMES:
            ap.error(f"unknown game {g!r}: give one of {', '.join(GAMES)}")
    t0 = time.perf_counter()
    print(
        f"python {platform.python_version()}, {os.cpu_count()} cores, part {args.part}, seeds "
        f"{' '.join(map(str, args.seeds))}, default configuration {args.rounds} rounds, "
        f"preset at most {preset_desc(args)}, "
        f"overrides: {args.overrides or 'none'}\n",
        flush=True,
    )
    if args.part in ("games", "all"):
        part_games(args)
    if args.part in ("fake", "all"):
        part_fake(args)
    print(f"total {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()

"""What reasoning players cost per estimate under each estimator, whether each keeps the ranking,
how close ``skate play --estimate`` comes to what a game then counts, and the typical tokens per
call that the estimate assumes for a model that has not played (issue 56).

Part ``estimators``: six fake reasoning models of known skill (skate.llm.fake_server, in this
process, every kind of thinking: hidden under OpenAI's rules, reasoning_content, reasoning, inline)
play game=cop for ``--rounds`` rounds per seed under each estimator (``logger=none report=false
llm.cache=false``). Per estimator: model calls, answer samples, and prompt, completion and thinking
tokens per estimate (the answering calls only, from usage.json's purposes), the setting calls per
round, and Kendall τ of the final scores against the skills (mean and worst over seeds).

Part ``typical``: the same cohort without thinking plays each game two rounds; per game, the prompt
tokens per setting and per answering call and the completion tokens per reply (the TYPICAL table
of skate.tools.estimate).

Part ``check``: a game of four reasoning models is played once (its counts kept beside the
response cache), then estimated for another seed and played: the estimate against the fake
server's own count of requests and tokens, per estimator (``--check-estimators``).

    .venv/bin/python bench/bench_thinking.py                                   # all parts
    .venv/bin/python bench/bench_thinking.py --part estimators --seeds 0 1 2 --rounds 8
    .venv/bin/python bench/bench_thinking.py --part check --check-estimators fixed_n algorithm1 decided
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scipy.stats import kendalltau

import skate
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.players.config import LLMPlayerConfig
from skate.runlog.files import read_events
from skate.runner import run_game
from skate.settings.config import SkateConfig
from skate.tools.estimate import estimate, format_estimate

STYLES = ("hidden", "reasoning_content", "reasoning", "inline")
SKILLS = {"r90": 0.9, "r78": 0.78, "r66": 0.66, "r54": 0.54, "r42": 0.42, "r30": 0.30}
# Each estimator's group choices and values.
ESTIMATORS: dict[str, tuple[dict[str, str], dict[str, Any]]] = {
    "algorithm1": ({"estimator": "algorithm1"}, {}),
    "fixed_n": ({"estimator": "fixed_n"}, {"estimator.n": 20}),
    "decided": ({"estimator": "decided"}, {}),
    "adaptive": ({"estimator": "adaptive"}, {}),
    "fewer_calls": ({"experiment": "fewer_calls"}, {}),  # irt + adaptive (+ stop.settled, capped at --rounds)
    "greedy": ({"estimator": "greedy"}, {}),
    "logprobs": ({"estimator": "logprobs"}, {}),
}


def models(thinking: bool, tokens: int) -> dict[str, FakeModel]:
    out = {}
    for i, (name, skill) in enumerate(SKILLS.items()):
        style = STYLES[i % len(STYLES)] if thinking else ""
        out[name] = FakeModel(
            skill, thinking=style, thinking_tokens=tokens, rules="openai_reasoning" if style == "hidden" else ""
        )
    return out


def cohort(base: str, names: list[str], fake: dict[str, FakeModel]) -> list[LLMPlayerConfig]:
    return [
        LLMPlayerConfig(
            name=n,
            model=f"{'openai' if fake[n].rules else 'hosted_vllm'}/{n}",
            api_base=base,
            api_key_env="SKATE_BENCH_NO_KEY",
        )
        for n in names
    ]


def settings(
    base: str,
    names: list[str],
    fake: dict[str, FakeModel],
    folder: Path,
    choices: dict[str, str],
    values: dict[str, Any],
    cache: bool = False,
) -> SkateConfig:
    """The fake cohort's game: ``choices`` (group options) and ``values`` (dotted keys) over no
    logger, no report and the response cache (off unless ``cache``) in ``folder``."""
    return skate.config(
        values={
            "report": False,
            "players.simulated": [],
            "players.llm": cohort(base, names, fake),
            "llm.cache": cache,
            "llm.cache_dir": f"{folder}/responses",
            **values,
        },
        **{"logger": "none", **choices},
    )


def answering(usage: dict[str, Any]) -> dict[str, float]:
    tot: dict[str, float] = {}
    for parts in usage.get("purposes", {}).values():
        for purpose in ("answer", "read"):
            for k, v in (parts.get(purpose) or {}).items():
                if isinstance(v, (int, float)):
                    tot[k] = tot.get(k, 0) + v
    return tot


def part_estimators(args: argparse.Namespace) -> None:
    print(
        f"## Estimators on six reasoning players ({args.thinking} thinking tokens a reply), game=cop, "
        f"{args.rounds} rounds, seeds {args.seeds}"
    )
    print(
        "| estimator | calls / estimate | samples / estimate | prompt / estimate | completion / estimate | "
        "thinking / estimate | setting calls / round | τ mean | τ worst | s / game |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    fake = models(True, args.thinking)
    names = list(SKILLS)
    for label in args.estimators:
        rows, taus, secs = [], [], []
        for seed in args.seeds:
            folder = Path(tempfile.mkdtemp())
            with FakeLLMServer(fake) as srv:
                t0 = time.perf_counter()
                choices, values = ESTIMATORS[label]
                result = run_game(
                    settings(
                        srv.api_base, names, fake, folder, choices, {**values, "seed": seed, "game.rounds": args.rounds}
                    ),
                    folder / "run",
                )
                secs.append(time.perf_counter() - t0)
            usage = json.loads((folder / "run" / "usage.json").read_text())
            events = read_events(folder / "run")
            estimates = [e for e in events if e["event"] == "estimate" and not e.get("skipped")]
            rounds = sum(e["event"] == "round_end" for e in events)
            ans = answering(usage)
            setting = sum((p.get("set") or {}).get("calls", 0) for p in usage["purposes"].values())
            rows.append(
                (
                    ans.get("calls", 0),
                    ans.get("samples", 0),
                    ans.get("prompt_tokens", 0),
                    ans.get("completion_tokens", 0),
                    ans.get("thinking_tokens", 0),
                    len(estimates),
                    setting,
                    rounds,
                )
            )
            scores = {r["player"]: r["score"] for r in result.table}
            taus.append(kendalltau([SKILLS[n] for n in names], [scores[n] for n in names]).statistic)
        est = sum(r[5] for r in rows) or 1
        per = [sum(r[i] for r in rows) / est for i in range(5)]
        per_round = sum(r[6] for r in rows) / max(1, sum(r[7] for r in rows))
        print(
            f"| {label} | {per[0]:.2f} | {per[1]:.2f} | {per[2]:,.0f} | {per[3]:,.0f} | {per[4]:,.0f} | "
            f"{per_round:.2f} | {sum(taus) / len(taus):.3f} | {min(taus):.3f} | {sum(secs) / len(secs):.1f} |"
        )
        sys.stdout.flush()


def part_typical(args: argparse.Namespace) -> None:
    print("\n## Typical tokens per call, the fake cohort without thinking, two rounds of each game")
    print(
        "| game | setting prompt / call | setting completion / reply | answer prompt / call | "
        "answer completion / reply |"
    )
    print("|---|---:|---:|---:|---:|")
    fake = models(False, 0)
    names = list(SKILLS)[:4]
    extra: dict[str, dict[str, Any]] = {"scp": {"game.mode": "player_set"}, "pyjail": {}, "mathquiz": {}, "cop": {}}
    for game in ("cop", "mathquiz", "pyjail", "scp"):
        folder = Path(tempfile.mkdtemp())
        with FakeLLMServer(fake) as srv:
            run_game(
                settings(
                    srv.api_base,
                    names,
                    fake,
                    folder,
                    {"game": game, "estimator": "fixed_n"},
                    {"game.rounds": 2, "estimator.n": 4, **extra[game]},
                ),
                folder / "run",
            )
        usage = json.loads((folder / "run" / "usage.json").read_text())
        tot: dict[str, dict[str, float]] = {"set": {}, "answer": {}}
        for parts in usage["purposes"].values():
            for purpose in tot:
                for k, v in (parts.get(purpose) or {}).items():
                    if isinstance(v, (int, float)):
                        tot[purpose][k] = tot[purpose].get(k, 0) + v
        s, a = tot["set"], tot["answer"]
        print(
            f"| {game} | {s['prompt_tokens'] / s['calls']:,.0f} | {s['completion_tokens'] / s['samples']:,.0f} | "
            f"{a['prompt_tokens'] / a['calls']:,.0f} | {a['completion_tokens'] / a['samples']:,.0f} |"
        )
        sys.stdout.flush()


def part_check(args: argparse.Namespace) -> None:
    print(
        f"\n## The estimate against the fake server's count: four reasoning players, game=cop, {args.check_rounds} "
        f"rounds, played first with seeds {args.history_seeds}, then estimated and played with seed {args.target_seed}"
    )
    print("| estimator | | calls | prompt | completion | thinking |")
    print("|---|---|---:|---:|---:|---:|")
    fake = {n: m for n, m in list(models(True, args.thinking).items())[:4]}
    names = list(fake)
    for label in args.check_estimators:
        folder = Path(tempfile.mkdtemp())
        with FakeLLMServer(fake) as srv:
            choices, values = ESTIMATORS[label]
            common = {**values, "game.rounds": args.check_rounds}
            for seed in args.history_seeds:
                run_game(
                    settings(srv.api_base, names, fake, folder, choices, {**common, "seed": seed}, cache=True),
                    folder / f"first-{seed}",
                )
            later = settings(
                srv.api_base, names, fake, folder, choices, {**common, "seed": args.target_seed}, cache=True
            )
            guess = estimate(later)
            before = (
                srv.stats.requests,
                srv.stats.prompt_tokens,
                srv.stats.completion_tokens,
                srv.stats.thinking_tokens,
            )
            run_game(later, folder / "second")
            after = (
                srv.stats.requests,
                srv.stats.prompt_tokens,
                srv.stats.completion_tokens,
                srv.stats.thinking_tokens,
            )
        counted = [b - a for a, b in zip(before, after, strict=False)]
        guessed = [
            sum(m.calls for m in guess.models),
            sum(m.prompt_tokens for m in guess.models),
            sum(m.completion_tokens for m in guess.models),
            sum(m.thinking_tokens for m in guess.models),
        ]
        print(f"| {label} | estimate | " + " | ".join(f"{g:,.0f}" for g in guessed) + " |")
        print("| | counted | " + " | ".join(f"{c:,.0f}" for c in counted) + " |")
        print(
            "| | estimate / counted | "
            + " | ".join(f"{g / c:.2f}" if c else "-" for g, c in zip(guessed, counted, strict=False))
            + " |"
        )
        if args.verbose:
            print(format_estimate(guess))
        sys.stdout.flush()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("estimators", "typical", "check", "all"), default="all")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--thinking", type=int, default=800, help="thinking tokens a reply of each fake model")
    ap.add_argument("--estimators", nargs="+", default=list(ESTIMATORS))
    ap.add_argument("--check-estimators", nargs="+", default=["fixed_n", "algorithm1", "decided"])
    ap.add_argument("--check-rounds", type=int, default=4)
    ap.add_argument("--history-seeds", type=int, nargs="+", default=[0], help="the games played before the estimate")
    ap.add_argument("--target-seed", type=int, default=1, help="the game estimated, then played")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    if args.part in ("estimators", "all"):
        part_estimators(args)
    if args.part in ("typical", "all"):
        part_typical(args)
    if args.part in ("check", "all"):
        part_check(args)


if __name__ == "__main__":
    main()

"""How often a real model's first attempt at setting a task is valid: N setter calls per model,
each checked by the game's own ``validate`` (sandbox included), without playing a game.

A quick measure for changing a game's setter prompt or reader: every model of the list is
asked for its round-1 task (no history) ``--n`` times with different seeds, in the
``llm.structured`` mode given, and each reply is read and validated as the game would. Needs the
servers running (``skate local serve --models ...`` prints their addresses; pass each
as ``--model NAME=API_BASE``).

    .venv/bin/python bench/probe_setters.py --model qwen2.5-coder-1.5b=http://127.0.0.1:8081/v1 --n 6 game=cop
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skate.cli.compose import compose_config  # noqa: E402
from skate.games.base import Checks, GameEnv  # noqa: E402
from skate.players.config import LLMPlayerConfig  # noqa: E402
from skate.players.llm import build_llm_players  # noqa: E402
from skate.runlog.records import Rejection, SetterContext, VoidProposal  # noqa: E402
from skate.settings.build import build_client, build_game, build_sandbox  # noqa: E402
from skate.settings.options import build_settings  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", action="append", required=True, help="NAME=API_BASE (repeat)")
    ap.add_argument("--n", type=int, default=4)
    ap.add_argument("--max-tokens", type=int, default=1024)
    ap.add_argument("--show", type=int, default=2, help="replies shown per model")
    ap.add_argument("--jsonl", type=Path, help="append every attempt here")
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    llm = []
    for m in args.model:
        name, _, base = m.partition("=")
        llm.append(
            LLMPlayerConfig(
                name=name,
                model=f"hosted_vllm/{name}",
                api_base=base,
                max_tokens=args.max_tokens,
                timeout_s=1800.0,
                temperature=0.7,
            )
        )
    # Command-line overrides: composed by Hydra, as skate composes them.
    settings = build_settings(compose_config(["llm.cache=false", *args.overrides]))
    game = build_game(settings.game)
    sandbox = build_sandbox(settings.sandbox)
    env = GameEnv(sandbox=sandbox, seed=0, pass_mark=float(settings.rating.p_thresh))
    client = build_client(settings.llm)
    players = build_llm_players(llm, client, lambda: game.modules(env))
    names = tuple(p.name for p in players)
    rng = np.random.default_rng(0)
    for player in players:
        reasons: Counter = Counter()
        t0 = time.perf_counter()
        shown = 0
        for i in range(args.n):
            assignment = game.assignment(player.name, 1, rng)
            ctx = SetterContext(
                player=player.name,
                players=names,
                round=1,
                rounds=int(settings.game.rounds),
                attempt=1,
                attempts_left=3,
                failed=(),
                history=(),
                strategy=str(settings.aug.strategy),
                assignment=assignment or {},
            )
            prop = player.set_task(ctx, np.random.default_rng(i))
            if isinstance(prop, VoidProposal):
                reasons["void"] += 1
                continue
            checks = Checks(
                round=1,
                setter=player.name,
                assignment=assignment or {},
                sandbox=sandbox,
                rng=np.random.default_rng(i),
                solve=lambda qs, r, p=player: p.answer(qs, r),
            )
            res = game.validate(prop, checks)
            ok = not isinstance(res, Rejection)
            reasons["valid" if ok else str(res.reason)] += 1
            if args.jsonl:
                with args.jsonl.open("a") as f:
                    f.write(
                        json.dumps(
                            {
                                "model": player.name,
                                "i": i,
                                "valid": ok,
                                "reason": None if ok else str(res.reason),
                                "detail": None if ok else res.detail,
                                "text": game.proposal_text(prop),
                            }
                        )
                        + "\n"
                    )
            if shown < args.show:
                shown += 1
                print(
                    f"--- {player.name} #{i}: {'VALID' if ok else f'{res.reason}: {res.detail[:300]}'}\n"
                    f"{game.proposal_text(prop)[:800]}\n    wrong: {getattr(prop, 'distractors', '')!s:.300}"
                )
        u = client.usage.get(player.name)
        print(
            f"== {player.name}: {dict(reasons)} in {time.perf_counter() - t0:.0f} s; "
            f"{u.completion_tokens / max(u.calls, 1):.0f} completion tokens/call, cut {u.cut}, empty {u.empty}",
            flush=True,
        )
    sandbox.close()


if __name__ == "__main__":
    main()

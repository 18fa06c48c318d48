"""Prompt and completion tokens per call (the fake server counts 4 characters a token), and
requests, for one game played with llm.structured=auto and =off against the loopback fake server.

    .venv/bin/python bench/bench_structured_tokens.py game=cop     (or game=mathquiz, "game=scp game.questions=8", ...)
"""

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from skate.cli.compose import compose_config
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.runner import run_game
from skate.settings.options import build_settings

game = sys.argv[1:] or ["game=cop"]
SK = {"ace": 0.9, "mid": 0.6, "low": 0.3}
for mode in ("off", "auto"):
    with tempfile.TemporaryDirectory() as tmp, FakeLLMServer({n: FakeModel(s) for n, s in SK.items()}) as srv:
        base = srv.api_base
        players = (
            "["
            + ", ".join(f"{{name: {n}, model: openai/{n}, api_base: '{base}', api_key_env: NO_KEY}}" for n in SK)
            + "]"
        )
        cfg = compose_config(
            [
                *game,
                "game.rounds=3",
                "logger=none",
                "report=false",
                "players.simulated=[]",
                f"players.llm={players}",
                "estimator=fixed_n",
                "estimator.n=6",
                "llm.cache=false",
                "llm.preflight=false",
                f"llm.structured={mode}",
            ]
        )
        t = time.perf_counter()
        run_game(build_settings(cfg), Path(tmp) / "run")
        wall = time.perf_counter() - t
        u = json.loads((Path(tmp) / "run" / "usage.json").read_text())["total"]
        print(
            f"{' '.join(game)} structured={mode}: {u['calls']} calls ({u['structured']} with a schema), "
            f"{u['prompt_tokens'] / u['calls']:.0f} prompt + {u['completion_tokens'] / u['calls']:.1f} completion "
            f"tokens per call; game {wall:.1f} s"
        )

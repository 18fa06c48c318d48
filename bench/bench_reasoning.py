"""Mean p(correct), unparsable samples and completion tokens of the fake models with
game.reasoning on and off, COP and SCP, against the loopback fake server (issue 15).

    .venv/bin/python bench/bench_reasoning.py"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import json
import tempfile

from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.runlog.files import read_events
from skate.runner import run_game
from skate.settings.options import build_settings
from tests.llm.conftest import SKILLS, llm_config

for game in ("cop", "scp"):
    for on in (False, True):
        tmp = Path(tempfile.mkdtemp())
        with FakeLLMServer({n: FakeModel(s) for n, s in SKILLS.items()}) as srv:
            extra = ("game=scp", "game.questions=24", "game.rounds=2") if game == "scp" else ("game.rounds=5",)
            cfg = llm_config(srv.api_base, tmp / "cache", *extra, "estimator.n=10", f"game.reasoning={str(on).lower()}")
            run_game(build_settings(cfg), tmp / "run")
        est = [e for e in read_events(tmp / "run") if e["event"] == "estimate"]
        usage = json.loads((tmp / "run" / "usage.json").read_text())["total"]
        row = {
            p: round(sum(e["p"] for e in est if e["player"] == p) / max(1, sum(e["player"] == p for e in est)), 4)
            for p in SKILLS
        }
        print(
            f"{game} reasoning={on}: mean p(correct) {row}; estimates {len(est)}; unparsable samples "
            f"{sum(e['unparsable'] for e in est)}; completion tokens {usage['completion_tokens']}, calls {usage['calls']}"
        )

"""Rating a stored run again: the same table as live, other backends, and the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from skate.rate import rate_run
from skate.runner import run_game
from tests.test_game import config

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    result = run_game(config("seed=5", "game.rounds=8"), out)
    return out, result


def test_recomputing_a_run_gives_the_live_table(stored_run):
    out, result = stored_run
    name, rows = rate_run(out, [])
    assert name == "TrueSkillRating"
    live = {r["player"]: (r["mu"], r["sigma"]) for r in result.table}
    again = {r["player"]: (r["mu"], r["sigma"]) for r in rows}
    assert again == pytest.approx(live)


def test_recomputing_keeps_the_runs_rating_settings_and_takes_overrides(tmp_path):
    out = tmp_path / "abs"
    result = run_game(config("seed=2", "game.rounds=5", "rating.outcome=absolute", "rating.tau=0.2"), out)
    _, rows = rate_run(out, [])
    assert {r["player"]: r["mu"] for r in rows} == pytest.approx({r["player"]: r["mu"] for r in result.table})
    _, relative = rate_run(out, ["rating.outcome=relative"])
    assert {r["player"]: r["mu"] for r in relative} != pytest.approx({r["player"]: r["mu"] for r in rows})


def test_other_backends_rate_the_same_games(stored_run):
    out, result = stored_run
    truth = [r["player"] for r in sorted(result.table, key=lambda r: -r["true_skill"])]
    _, bt = rate_run(out, ["rating=bradley_terry", "rating.bootstrap=200"])
    assert [r["player"] for r in sorted(bt, key=lambda r: -r["score"])] == truth
    assert all(r["lo"] <= r["score"] <= r["hi"] for r in bt)
    _, elo = rate_run(out, ["rating=elo"])
    assert [r["player"] for r in elo] == truth


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "skate.rate", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


def test_cli_prints_and_saves_the_table(stored_run):
    out, _ = stored_run
    res = run_cli(str(out), "rating=bradley_terry", "rating.bootstrap=100")
    assert res.returncode == 0, res.stderr
    assert "interval" in res.stdout and all(n in res.stdout for n in ("hi", "mid", "lo"))
    saved = json.loads((out / "ratings.BradleyTerryRating.json").read_text())
    assert {r["player"] for r in saved} == {"hi", "mid", "lo"} and all("lo" in r for r in saved)


def test_cli_bad_input_says_what_to_fix(tmp_path, stored_run):
    missing = run_cli(str(tmp_path / "nowhere"))
    assert missing.returncode == 3 and "events.jsonl" in missing.stderr
    out, _ = stored_run
    bad = run_cli(str(out), "rating=glicko")
    assert bad.returncode == 2 and "glicko" in bad.stderr
    bad_value = run_cli(str(out), "rating=bradley_terry", "rating.alpha=0")
    assert bad_value.returncode == 2 and "rating.alpha" in bad_value.stderr

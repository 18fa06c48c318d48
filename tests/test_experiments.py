"""Every experiment preset composes and plays a tiny version on the simulated cohort."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from skate.config import compose_config, validate
from skate.runner import run_game

ROOT = Path(__file__).resolve().parents[1]
PRESETS = sorted(p.stem for p in (ROOT / "conf" / "experiment").glob("*.yaml"))
TINY = ["game.rounds=1", "logger=none", "report=false", "print_table=false"]


def compose_preset(name: str, *extra: str, hydra: bool = False):
    return compose_config([f"experiment={name}", *TINY, *extra], return_hydra_config=hydra)


def test_the_papers_studies_are_all_there():
    assert {"aug_ablation", "six_player", "cohort_permutations", "sensitivity_sigma_star",
            "sensitivity_p_thresh", "sensitivity_distractors", "sensitivity_rounds",
            "sensitivity_embedder", "weaker_judges", "added_models_xy", "added_models_yx"} <= set(PRESETS)


@pytest.mark.parametrize("name", PRESETS)
def test_each_preset_composes_and_plays_a_tiny_game(name, tmp_path):
    cfg = compose_preset(name)
    validate(cfg)
    for stage in cfg.stages:  # staged presets: one round per stage that plays at all
        stage.rounds = min(stage.rounds, 1)
    if cfg.schedule.mode == "matches":  # one match a round: one round-robin, so everyone plays
        n = len(cfg.players.simulated)
        cfg.game.rounds = n * (n - 1)
    with contextlib.ExitStack() as stack:
        if cfg.players.llm:  # a cohort of models (prompt_optimization): the fake server plays them
            from skate.llm.fake_server import FakeLLMServer, FakeModel

            srv = stack.enter_context(FakeLLMServer({"*": FakeModel(0.6)}))
            for p in cfg.players.llm:
                p.api_base = srv.api_base
            cfg.llm.cache_dir = str(tmp_path / "cache")
            cfg.optimizer.store = str(tmp_path / "programs")
            cfg.optimizer.train, cfg.optimizer.val = 4, 2

        result = run_game(cfg, tmp_path / "run")
    assert result.table and all(r["rank"] for r in result.table)


def test_the_augmentation_ablation_is_four_players_by_ten_settings():
    cfg = compose_preset("aug_ablation", hydra=True)
    assert len(cfg.players.simulated) == 4
    params = cfg.hydra.sweeper.params
    assert params["aug"].split(",") == ["no_info", "hist_tasks", "hist_perf", "full_personal", "full_context"]
    assert params["rating.outcome"].split(",") == ["relative", "absolute"]


def test_a_preset_takes_any_cohort_by_override(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "x")
    monkeypatch.setenv("GEMINI_API_KEY", "x")
    cfg = compose_preset("six_player", "players=paper_six")
    validate(cfg)
    assert len(cfg.players.llm) == 6 and cfg.aug.strategy == "hist_perf"


def test_the_ablation_sweep_runs_all_ten_games(tmp_path):
    res = subprocess.run([sys.executable, "-m", "skate", "-m", "experiment=aug_ablation", *TINY,
                          f"hydra.sweep.dir={tmp_path}"], capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert res.returncode == 0, res.stderr[-2000:]
    starts = [json.loads((tmp_path / str(i) / "events.jsonl").read_text().splitlines()[0]) for i in range(10)]
    combos = {(s["aug"], s["config"]["rating"]["outcome"]) for s in starts}
    assert len(combos) == 10 and all(len(s["players"]) == 4 for s in starts)

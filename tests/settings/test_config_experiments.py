"""Every experiment preset composes and plays a tiny version on the simulated cohort."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from skate.cli.compose import compose_config
from skate.runner import run_game
from skate.settings.options import build_settings

ROOT = Path(__file__).resolve().parents[2]
PRESETS = sorted(p.stem for p in (ROOT / "conf" / "experiment").glob("*.yaml"))
TINY = ["game.rounds=1", "logger=none", "report=false", "print_table=false"]


def compose_preset(name: str, *extra: str, hydra: bool = False):
    return compose_config([f"experiment={name}", *TINY, *extra], return_hydra_config=hydra)


def test_the_papers_studies_are_all_there():
    assert {
        "aug_ablation",
        "six_player",
        "cohort_permutations",
        "sensitivity_sigma_star",
        "sensitivity_p_thresh",
        "sensitivity_distractors",
        "sensitivity_rounds",
        "sensitivity_embedder",
        "weaker_judges",
        "added_models_xy",
        "added_models_yx",
    } <= set(PRESETS)


@pytest.mark.parametrize("name", PRESETS)
def test_each_preset_composes_and_plays_a_tiny_game(name, tmp_path):
    cfg = compose_preset(name)
    build_settings(cfg)
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

        result = run_game(build_settings(cfg), tmp_path / "run")
    assert result.table and all(r["rank"] for r in result.table)


def test_the_augmentation_ablation_is_five_games_each_rated_relative_and_absolute():
    cfg = compose_preset("aug_ablation", hydra=True)
    assert len(cfg.players.simulated) == 4 and not cfg.players.llm
    params = cfg.hydra.sweeper.params
    assert dict(params) == {"aug": "no_info,hist_tasks,hist_perf,full_personal,full_context"}
    assert cfg.rating.outcome == "relative" and cfg.rating.average_last == 100
    assert [dict(r) for r in cfg.rerate] == [
        {"name": "relative", "outcome": "relative"},
        {"name": "absolute", "outcome": "absolute"},
    ]


def test_the_four_player_presets_take_the_papers_four_whole(monkeypatch):
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(key, "x")
    for preset in ("aug_ablation", "zerosumeval"):
        cfg = compose_preset(preset, "players=paper_four")
        build_settings(cfg)
        assert not cfg.players.simulated  # not mixed with the preset's simulated four
        assert [p.model for p in cfg.players.llm] == [
            "anthropic/claude-3-haiku-20240307",
            "anthropic/claude-3-5-sonnet-20241022",
            "gemini/gemini-2.0-flash",
            "openai/gpt-4o-2024-11-20",
        ]


def test_a_preset_takes_any_cohort_by_override(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "x")
    monkeypatch.setenv("GEMINI_API_KEY", "x")
    cfg = compose_preset("six_player", "players=paper_six")
    build_settings(cfg)
    assert len(cfg.players.llm) == 6 and cfg.aug.strategy == "hist_perf"


def test_the_ablation_sweep_plays_five_games_and_rates_each_both_ways(tmp_path):
    # report=false: the sweep page's Figs. 2 and 9 from such a folder are tests/report/test_plots.py's,
    # the callback that draws it after a sweep is tests/cli/test_play_sweep.py's.
    res = subprocess.run(
        [sys.executable, "-m", "skate", "-m", "experiment=aug_ablation", *TINY, f"hydra.sweep.dir={tmp_path}"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=900,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert not (tmp_path / "5").exists()
    for i in range(5):
        lines = (tmp_path / str(i) / "events.jsonl").read_text().splitlines()
        start, end = json.loads(lines[0]), json.loads(lines[-1])
        assert start["aug"] == ["no_info", "hist_tasks", "hist_perf", "full_personal", "full_context"][i]
        assert len(start["players"]) == 4 and end["event"] == "run_end"
        assert set(end["rerated"]) == {"relative", "absolute"}
        for name, rows in end["rerated"].items():
            assert len(rows) == 4 and all({"mu", "sigma", "lo", "hi", "rank"} <= set(r) for r in rows)
            assert json.loads((tmp_path / str(i) / f"ratings.{name}.json").read_text()) == rows
        assert end["rerated"]["relative"] == end["ratings"]  # the game's own rule, rated again

"""The report's figures for the paper's novelty and staged-game plots (SKATE Figs. 5, 7–8, 10)."""

from __future__ import annotations

import re

import pytest

from skate.report import build_report
from skate.report.data import load_run
from skate.runner import run_game
from skate.store import read_events
from tests.test_game import config

STAGES = ("stages=[{name: base, rounds: 2}, {name: watch, join: [hi], setters: [], rounds: 0},"
          " {name: play, rounds: 2}]")


def figures(page):
    return dict(re.findall(r'<img alt="([a-z_]+\.png)" src="data:image/png;base64,[^"]*"><figcaption>([^<]*)<',
                           page.read_text()))


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    out = tmp_path_factory.mktemp("staged")
    run_game(config("seed=2", STAGES, "embedder.threshold=0.5"), out)
    return out


def test_novelty_distances_of_accepted_and_turned_away_proposals(staged):
    events = read_events(staged)
    tested = [e for e in events if e["event"] == "attempt" and e.get("novelty_distance") is not None]
    turned_away = [e for e in tested if e["reason"] == "not_unique"]
    assert turned_away and all(e["novelty_distance"] <= 0.5 for e in turned_away)  # the threshold bites
    d = load_run(staged)
    assert d.novelty_threshold == 0.5
    assert d.attempts["novelty_distance"].notna().sum() == len(tested)
    assert (d.attempts["reason"] == "not_unique").sum() == len(turned_away)
    shown = figures(build_report(staged, data=d))
    assert "novelty_distances.png" in shown and "Figs. 7–8" in shown["novelty_distances.png"]
    assert (staged / "report" / "novelty_distances.png").stat().st_size > 5000


def test_stage_panels_and_mu_sigma_paths_from_the_stage_ends(staged):
    d = load_run(staged)
    assert [e["stage"] for e in d.stages] == ["base", "watch", "play"]
    assert all({"mu", "sigma"} <= set(r) for e in d.stages for r in e["ratings"])
    shown = figures(build_report(staged, data=d))
    assert {"stage_panels.png", "mu_sigma_paths.png"} <= set(shown)
    assert "Fig. 5" in shown["stage_panels.png"] and "Fig. 10" in shown["mu_sigma_paths.png"]


def test_a_game_without_stages_draws_neither_stage_figure(tmp_path):
    run_game(config("game.rounds=1"), tmp_path)
    shown = figures(build_report(tmp_path))
    assert "rating_evolution.png" in shown and not {"stage_panels.png", "mu_sigma_paths.png"} & set(shown)

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


@pytest.fixture(scope="module")
def staged_page(staged):
    """The staged game's report page, drawn once for the tests that read its figures."""
    return build_report(staged, data=load_run(staged))


def test_novelty_distances_of_accepted_and_turned_away_proposals(staged, staged_page):
    events = read_events(staged)
    tested = [e for e in events if e["event"] == "attempt" and e.get("novelty_distance") is not None]
    turned_away = [e for e in tested if e["reason"] == "not_unique"]
    assert turned_away and all(e["novelty_distance"] <= 0.5 for e in turned_away)  # the threshold bites
    d = load_run(staged)
    assert d.novelty_threshold == 0.5
    assert d.attempts["novelty_distance"].notna().sum() == len(tested)
    assert (d.attempts["reason"] == "not_unique").sum() == len(turned_away)
    shown = figures(staged_page)
    assert "novelty_distances.png" in shown and "Figs. 7–8" in shown["novelty_distances.png"]
    assert (staged / "report" / "novelty_distances.png").stat().st_size > 5000


def test_stage_panels_and_mu_sigma_paths_from_the_stage_ends(staged, staged_page):
    d = load_run(staged)
    assert [e["stage"] for e in d.stages] == ["base", "watch", "play"]
    assert all({"mu", "sigma"} <= set(r) for e in d.stages for r in e["ratings"])
    shown = figures(staged_page)
    assert {"stage_panels.png", "mu_sigma_paths.png"} <= set(shown)
    assert "Fig. 5" in shown["stage_panels.png"] and "Fig. 10" in shown["mu_sigma_paths.png"]


def test_a_game_without_stages_draws_neither_stage_figure(tmp_path):
    run_game(config("game.rounds=1"), tmp_path)
    shown = figures(build_report(tmp_path))
    assert "rating_evolution.png" in shown and not {"stage_panels.png", "mu_sigma_paths.png"} & set(shown)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """Two jobs, one per augmentation strategy, as a sweep folder holds them."""
    root = tmp_path_factory.mktemp("sweep")
    for i, aug in enumerate(("hist_perf", "no_info")):
        run_game(config(f"aug={aug}", "game.rounds=2", "report=false"), root / str(i))
        (root / str(i) / ".hydra").mkdir()
        (root / str(i) / ".hydra" / "overrides.yaml").write_text(f"- aug={aug}\n")
    return root


@pytest.fixture(scope="module")
def sweep_page(sweep):
    """The sweep's page (build_sweep_report: each job's report, then the comparison), drawn once."""
    from skate.report import build_sweep_report

    return build_sweep_report(sweep)


def test_the_sweep_page_draws_the_strategy_grid_and_the_curves_side_by_side(sweep, sweep_page):
    from skate.report.sweep import job_of, strategy_grid

    shown = figures(sweep_page)
    assert {"strategy_grid.png", "rating_curves.png"} <= set(shown)
    assert "Fig. 2" in shown["strategy_grid.png"] and "Fig. 9" in shown["rating_curves.png"]
    assert (sweep / "report" / "strategy_grid.png").stat().st_size > 5000
    jobs = [job_of(load_run(sweep / str(i)), f"job{i}") for i in (0, 1)]
    assert [(j.aug, j.rule) for j in jobs] == [("hist_perf", "relative"), ("no_info", "relative")]
    assert strategy_grid(jobs[:1], sweep) is None  # one strategy, one rule: nothing to compare


def test_a_game_re_rated_under_another_rule_adds_a_row_to_the_grid(sweep, tmp_path):
    """run_end's ``rerated`` (rule -> final rows) is read as one more row of Fig. 2."""
    import json

    from skate.report.sweep import job_of

    log = (sweep / "0" / "events.jsonl").read_text().splitlines()
    end = json.loads(log[-1])
    end["rerated"] = {"absolute": [{**r, "mu": r["mu"] + 1.0} for r in end["ratings"]]}
    (tmp_path / "events.jsonl").write_text("\n".join([*log[:-1], json.dumps(end)]) + "\n")
    job = job_of(load_run(tmp_path), "job")
    assert list(job.ratings) == ["relative", "absolute"]
    assert [r["mu"] - 1.0 for r in job.ratings["absolute"]] == pytest.approx([r["mu"] for r in job.ratings["relative"]])


def test_the_sweep_figures_and_table_go_to_one_wandb_run_in_the_jobs_group(sweep, sweep_page):
    from skate.tracking import log_sweep
    from tests.tracking.wandb_records import summarise

    log_sweep(sweep, {"_target_": "skate.tracking.WandbLogger", "mode": "disabled"})
    assert not (sweep / "wandb").exists()  # disabled: nothing written
    log_sweep(sweep, {"_target_": "skate.tracking.WandbLogger", "mode": "offline", "project": "skate"})
    s = summarise(sweep)
    assert s["exit_code"] == 0 and s["name"] == "sweep report"
    assert s["group"] == str(sweep).replace("/", "_").strip("_")
    assert {"sweep/strategy_grid/_type", "sweep/rating_curves/_type", "sweep/jobs/_type"} <= s["history_keys"]

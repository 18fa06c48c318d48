"""The report's figures for the paper's novelty, staged-game and sweep plots (SKATE Figs. 2, 5, 7, 9, 10)."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest

from skate.report import build_report
from skate.report.data import load_run
from skate.runlog.files import read_events
from skate.runner import run_game
from skate.settings.config import StageConfig as Stage
from tests.test_runner_game import config

STAGES = [
    Stage(name="base", rounds=2),
    Stage(name="watch", join=["hi"], setters=[], rounds=0),
    Stage(name="play", rounds=2),
]


def figures(page):
    return dict(
        re.findall(
            r'<img alt="([a-z_]+\.png)" src="data:image/png;base64,[^"]*"><figcaption>([^<]*)<', page.read_text()
        )
    )


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    out = tmp_path_factory.mktemp("staged")
    run_game(config({"seed": 2, "stages": STAGES, "embedder.threshold": 0.5}), out)
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
    assert "novelty_distances.png" in shown and "Fig. 7" in shown["novelty_distances.png"]
    assert (staged / "report" / "novelty_distances.png").stat().st_size > 5000


def test_stage_panels_and_mu_sigma_paths_from_the_stage_ends(staged, staged_page):
    d = load_run(staged)
    assert [e["stage"] for e in d.stages] == ["base", "watch", "play"]
    assert all({"mu", "sigma"} <= set(r) for e in d.stages for r in e["ratings"])
    shown = figures(staged_page)
    assert {"stage_panels.png", "mu_sigma_paths.png"} <= set(shown)
    assert "Fig. 5" in shown["stage_panels.png"] and "Fig. 10" in shown["mu_sigma_paths.png"]


def test_a_game_without_stages_draws_neither_stage_figure(tmp_path):
    run_game(config({"game.rounds": 1}), tmp_path)
    shown = figures(build_report(tmp_path))
    assert "rating_evolution.png" in shown and not {"stage_panels.png", "mu_sigma_paths.png"} & set(shown)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """Two jobs, one per augmentation strategy, as a sweep folder holds them."""
    root = tmp_path_factory.mktemp("sweep")
    for i, aug in enumerate(("hist_perf", "no_info")):
        run_game(config({"game.rounds": 2, "report": False}, aug=aug), root / str(i))
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
    assert {"strategy_grid.png", "strategy_difficulty.png", "rating_curves.png"} <= set(shown)
    assert "Fig. 2" in shown["strategy_grid.png"] and "Fig. 9" in shown["strategy_difficulty.png"]
    assert "Fig. 9" not in shown["rating_curves.png"]  # μ ± σ over the updates is not the paper's Fig. 9
    assert (sweep / "report" / "strategy_grid.png").stat().st_size > 5000
    jobs = [job_of(load_run(sweep / str(i)), f"job{i}") for i in (0, 1)]
    assert [(j.aug, j.rule) for j in jobs] == [("hist_perf", "relative"), ("no_info", "relative")]
    assert strategy_grid(jobs[:1], sweep) is None  # one strategy, one rule: nothing to compare


def cumulative_from_events(events: list[dict]) -> dict[tuple[str, str, int], float]:
    """(setter, "own" | "others", k) -> the mean, over the setter's first k tasks, of its own
    p(correct) or of the other players' mean p(correct), void (null) estimates left out; straight
    from the event log."""
    players = [p["name"] for p in events[0]["players"]]
    p = {(e["task_id"], e["player"]): e["p"] for e in events if e["event"] == "estimate"}
    seen: dict[str, dict[str, list]] = {}
    out = {}
    for t in (e for e in events if e["event"] == "task"):
        mine = seen.setdefault(t["setter"], {"own": [], "others": []})
        mine["own"].append(p.get((t["task_id"], t["setter"])))
        theirs = [p.get((t["task_id"], q)) for q in players if q != t["setter"]]
        theirs = [v for v in theirs if v is not None]
        mine["others"].append(sum(theirs) / len(theirs) if theirs else None)
        for solvers, values in mine.items():
            got = [v for v in values if v is not None]
            if got:
                out[(t["setter"], solvers, len(values))] = sum(got) / len(got)
    return out


def test_fig_9_holds_each_strategy_s_cumulative_average_p_correct_as_the_events_give_it(sweep, sweep_page):
    """The sweep's Fig. 9 (cumulative_p.csv, the curves it draws) equals the cumulative average
    p(correct) of each setter's tasks computed from each job's events alone."""
    expected = {}
    for i, aug in enumerate(("hist_perf", "no_info")):
        expected |= {(aug, *key): v for key, v in cumulative_from_events(read_events(sweep / str(i))).items()}
    curves = pd.read_csv(sweep / "report" / "cumulative_p.csv")
    got = {(r.panel, r.setter, r.solvers, r.step): r.cumulative_p for r in curves.itertuples()}
    assert set(got) == set(expected) and len(got) == 2 * 3 * 2 * 2  # 2 strategies, 3 setters, own/others, 2 tasks
    for key, value in expected.items():
        assert got[key] == pytest.approx(value), key
    assert (curves["jobs"] == 1).all()
    assert list(dict.fromkeys(curves["panel"])) == ["no_info", "hist_perf"]  # the paper's order of strategies


def test_fig_9_averages_jobs_sharing_a_strategy_step_by_step_and_skips_void_estimates(tmp_path):
    from skate.report.sweep import Job, cumulative_p, strategy_difficulty

    nan = math.nan

    def job(label, aug, rows):
        steps = pd.DataFrame(rows, columns=["setter", "step", "round", "own", "others"])
        return Job(label, aug, "relative", ["x", "y"], {}, steps=steps)

    a = job(
        "aug=no_info seed=1",
        "no_info",
        [("x", 1, 1, 0.2, 0.5), ("y", 1, 1, nan, 0.1), ("x", 2, 2, 0.4, nan), ("y", 2, 2, 0.6, 0.3)],
    )
    b = job("aug=no_info seed=2", "no_info", [("x", 1, 1, 0.6, 0.7)])
    c = job("aug=full_context seed=1", "full_context", [("x", 1, 1, 1.0, 0.0)])
    curves = cumulative_p([c, a, b])
    got = {(r.panel, r.setter, r.solvers, r.step): (round(r.cumulative_p, 9), r.jobs) for r in curves.itertuples()}
    assert got == {
        ("no_info", "x", "own", 1): (0.4, 2),
        ("no_info", "x", "own", 2): (0.3, 1),  # (0.2+0.6)/2; (0.2+0.4)/2
        ("no_info", "x", "others", 1): (0.6, 2),
        ("no_info", "x", "others", 2): (0.5, 1),  # a void others: 0.5 kept
        ("no_info", "y", "own", 2): (0.6, 1),  # no point before the first non-void estimate
        ("no_info", "y", "others", 1): (0.1, 1),
        ("no_info", "y", "others", 2): (0.2, 1),
        ("full_context", "x", "own", 1): (1.0, 1),
        ("full_context", "x", "others", 1): (0.0, 1),
    }
    drawn = strategy_difficulty([c, a, b], tmp_path)
    assert drawn is not None and drawn[0] == "strategy_difficulty.png" and "averaged step by step" in drawn[1]
    assert (tmp_path / "strategy_difficulty.png").stat().st_size > 5000
    # A sweep that keeps one strategy (e.g. seeds) gets one column per job, named by what differs.
    assert list(dict.fromkeys(cumulative_p([a, b])["panel"])) == ["seed=1", "seed=2"]
    empty = job("aug=no_info", "no_info", [])
    assert cumulative_p([empty]).empty and strategy_difficulty([empty], tmp_path) is None


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
    from skate.loggers.console import ConsoleLoggerConfig
    from skate.loggers.wandb_logger import WandbLoggerConfig, log_sweep
    from tests.wandb_records import summarise

    log_sweep(sweep, WandbLoggerConfig(mode="disabled"))
    log_sweep(sweep, ConsoleLoggerConfig())
    assert not (sweep / "wandb").exists()  # disabled, or not W&B: nothing written
    log_sweep(sweep, WandbLoggerConfig(mode="offline", project="skate"))
    s = summarise(sweep)
    assert s["exit_code"] == 0 and s["name"] == "sweep report"
    assert s["group"] == str(sweep).replace("/", "_").strip("_")
    assert {
        "sweep/strategy_grid/_type",
        "sweep/strategy_difficulty/_type",
        "sweep/rating_curves/_type",
        "sweep/jobs/_type",
        "sweep/cumulative_p/_type",
    } <= s["history_keys"]

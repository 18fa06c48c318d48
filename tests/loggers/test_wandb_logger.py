"""W&B logging, offline: one closed run per game inside the run folder, grouped by sweep."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from skate.runner import run_game
from skate.sandbox import SandboxError
from tests.test_runner_game import config
from tests.wandb_records import summarise


def test_a_game_leaves_a_closed_offline_run_with_series_and_tables(tmp_path):
    out = tmp_path / "run"
    run_game(config({"game.rounds": 3, "logger.progress": "plain", "report": True}, logger="wandb"), out)
    s = summarise(out)
    assert {"plots/rating_evolution/_type", "plots/self_preference/_type"} <= s["history_keys"]  # every plot
    assert s["exit_code"] == 0 and s["kinds"]["exit"] == 1  # finished and closed
    for player in ("hi", "mid", "lo"):
        assert {f"mu/{player}", f"sigma/{player}"} <= s["history_keys"]
        assert f"final/{player}" in s["summary_keys"]
    assert {"ratings/_type", "tasks/_type", "round", "samples"} <= s["history_keys"]
    updates = sum(1 for e in map(json.loads, (out / "events.jsonl").read_text().splitlines()) if e["event"] == "rating")
    assert s["kinds"]["history"] >= updates  # one history row per rating update, and more
    tables = list((s["files"][-1].parent / "files" / "media" / "table").glob("tasks_*.table.json"))
    task_table = json.loads(tables[0].read_text())
    assert task_table["columns"][:4] == ["task_id", "round", "setter", "answer"]
    assert len(task_table["data"]) == 9 and set(task_table["columns"][4:]) == {"hi", "mid", "lo"}
    # The report's question clusters (SKATE Fig. 8): the figure and its table, as the report wrote them.
    assert {"plots/question_clusters/_type", "question_clusters/_type"} <= s["history_keys"]
    tables = list((s["files"][-1].parent / "files" / "media" / "table").glob("question_clusters_*.table.json"))
    clusters = json.loads(tables[0].read_text())
    assert clusters["columns"] == ["cluster", "terms", "tasks", "example", "hi", "mid", "lo"]
    assert sum(row[2] for row in clusters["data"]) == 9  # every valid task in one cluster
    for j in (4, 5, 6):  # each setter's shares add up to 1
        assert sum(row[j] for row in clusters["data"]) == pytest.approx(1.0)
    report = pd.read_csv(out / "report" / "question_clusters.csv")
    pd.testing.assert_frame_equal(
        pd.DataFrame(clusters["data"], columns=clusters["columns"]), report, check_dtype=False
    )


def test_a_round_with_many_rating_updates_logs_a_bounded_number_of_curve_points(tmp_path):
    """logger.updates_per_round=2: each round's 3 tasks (9 updates) become 2 points, each carrying
    every player's latest μ and σ, the round's last among them (so the curves end at the final
    ratings)."""
    out = tmp_path / "run"
    run_game(config({"game.rounds": 3, "logger.progress": "plain", "logger.updates_per_round": 2}, logger="wandb"), out)
    s = summarise(out)
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    rated = [e for e in events if e["event"] == "rated"]
    points = [r for r in s["rows"] if "update" in r]
    assert len(rated) == 9 and [int(r["update"]) for r in points] == [3, 9, 12, 18, 21, 27]
    assert all({f"{k}/{n}" for k in ("mu", "sigma") for n in ("hi", "mid", "lo")} <= set(r) for r in points)
    final = {r["player"]: r["mu"] for r in events[-1]["ratings"]}
    assert {n: json.loads(points[-1][f"mu/{n}"]) for n in final} == pytest.approx(final)


def test_a_crashed_game_still_leaves_a_closed_run(tmp_path):
    out = tmp_path / "crash"
    with pytest.raises(SandboxError):
        run_game(
            config(
                {"game.rounds": 2, "logger.progress": "plain", "sandbox.python": "/nonexistent/python"},
                logger="wandb",
                sandbox="subprocess",
            ),
            out,
        )
    s = summarise(out)
    assert s["exit_code"] == 1 and s["kinds"]["exit"] == 1


def test_logger_none_writes_no_wandb_run(tmp_path):
    run_game(config({"game.rounds": 1}, logger="none"), tmp_path / "quiet")
    assert not (tmp_path / "quiet" / "wandb").exists()


@pytest.mark.xdist_group("games_sweep")  # the sweep tests' sweep (tests/conftest.py), played once
def test_sweep_jobs_are_grouped_by_sweep(games_sweep):
    tmp_path, res = games_sweep  # python -m skate -m game=cop,mathquiz, the default logger (W&B offline)
    assert res.returncode == 0, res.stderr[-2000:]
    jobs = [summarise(tmp_path / str(i)) for i in (0, 1)]
    assert all(j["exit_code"] == 0 for j in jobs)
    assert jobs[0]["group"] == jobs[1]["group"] and str(tmp_path).strip("/").replace("/", "_") in jobs[0]["group"]
    assert jobs[0]["name"].startswith("job0: ") and "game=cop" in jobs[0]["name"]
    assert jobs[1]["name"].startswith("job1: ") and "game=mathquiz" in jobs[1]["name"]

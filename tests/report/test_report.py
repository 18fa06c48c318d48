"""The report from a stored run: plots in one HTML page, exports, correlations, sweeps, the CLI."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from scipy.stats import pearsonr, spearmanr

from skate.report import build_report, correlations
from skate.report.plots import rating_evolution
from skate.runlog.files import read_events
from skate.runner import run_game
from tests.test_runner_game import config

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    result = run_game(config({"seed": 3, "game.rounds": 6}), out)
    return out, result


@pytest.fixture(scope="module")
def stored_page(stored_run):
    """The stored run's report (build_report), drawn once for the tests that read it."""
    return build_report(stored_run[0])


def test_the_page_names_every_player_and_embeds_every_plot(stored_run, stored_page):
    out, result = stored_run
    page = stored_page
    text = page.read_text()
    for player in ("hi", "mid", "lo"):
        assert player in text
    images = re.findall(r'<img alt="([a-z_]+\.png)" src="data:image/png;base64,', text)
    assert set(images) >= {
        "rating_evolution.png",
        "final_ratings.png",
        "setter_progress.png",
        "self_preference.png",
        "variance_histogram.png",
        "asking_vs_answering.png",
        "recovered_vs_true.png",
    }
    assert "<script" not in text and 'src="http' not in text  # self-contained: nothing fetched
    for name in images:
        assert (out / "report" / name).stat().st_size > 5000
    assert "Example task, highest variance" in text


def test_a_long_game_plots_a_sample_of_its_tasks_ending_at_the_final_ratings(stored_run, monkeypatch, tmp_path):
    """The report holds about KEEP_UPDATES of the players' numbers: those after evenly spaced
    tasks, and after the last; the plot says so, and each curve ends at the final ratings."""
    import skate.report.data as data

    out, result = stored_run
    rated = [e for e in read_events(out) if e["event"] == "rated"]
    monkeypatch.setattr(data, "KEEP_UPDATES", 30)  # 3 players x (mu, sigma): 5 tasks' numbers
    d = data.load_run(out)
    assert len(rated) == 18 and d.per_task and d.update_count == 54 and d.update_stride == 4
    assert sorted(set(d.updates["update"])) == [rated[i]["update"] for i in (0, 4, 8, 12, 16, 17)]
    ends = d.updates.sort_values("update").groupby("player")["mu"].last().to_dict()
    assert ends == {r["player"]: r["mu"] for r in result.table}
    _, caption = rating_evolution(d, tmp_path)
    assert caption.endswith("after one task in 4 (and the last) (54 pairwise updates in all).")


def test_a_long_game_logged_per_pair_plots_a_sample_of_its_rating_updates(tmp_path, monkeypatch):
    """A log per pair (events.rating_updates=pair, and runs from before it): at most
    KEEP_UPDATES single updates (a 50-player, 50-round game logs 3 million), and each player's
    curve still ends at its last update."""
    import skate.report.data as data

    out = tmp_path / "run"
    run_game(config({"seed": 3, "game.rounds": 6, "events.rating_updates": "pair", "report": False}), out)
    rating = [e for e in read_events(out) if e["event"] == "rating"]
    monkeypatch.setattr(data, "KEEP_UPDATES", 10)
    d = data.load_run(out)
    assert d.update_count == len(rating) == 54 and d.update_stride == 8
    last = {n: max((r for r in rating if n in (r["a"], r["b"])), key=lambda r: r["update"]) for n in d.players}
    assert {r["update"] for r in last.values()} <= set(d.updates["update"])
    assert len(d.updates) <= 2 * (10 + 3) and not d.per_task  # two rows (a and b) per update
    _, caption = rating_evolution(d, tmp_path)
    assert caption.endswith("after one update in 8 of 54 (and each player's last).")


def test_the_task_by_player_table_is_exported_as_parquet_and_csv(stored_run, stored_page):
    out, _ = stored_run
    pq = pd.read_parquet(out / "report" / "p_correct.parquet")
    csv = pd.read_csv(out / "report" / "p_correct.csv")
    assert list(pq.columns) == ["task_id", "round", "setter", "hi", "mid", "lo"]
    assert len(pq) == len(csv) == 18
    ests = {(e["task_id"], e["player"]): e["p"] for e in read_events(out) if e["event"] == "estimate"}
    for _, row in pq.iterrows():
        for player in ("hi", "mid", "lo"):
            assert row[player] == pytest.approx(ests[(row["task_id"], player)])


def test_correlations_with_external_benchmarks():
    ratings = [{"player": p, "score": s} for p, s in [("a", 3.0), ("b", 2.0), ("c", 1.5), ("d", 0.1)]]
    bench = pd.DataFrame(
        {
            "player": ["a", "b", "c", "d", "e"],
            "mmlu": [90, 80, 70, 40, 99],
            "reversed": [1, 2, 3, 4, 5],
            "sparse": [1, None, None, 2, 3],
        }
    )
    corr = correlations(ratings, bench).set_index("benchmark")
    assert corr.loc["mmlu", "players"] == 4  # e has no rating
    assert corr.loc["mmlu", "pearson"] == pytest.approx(pearsonr([3, 2, 1.5, 0.1], [90, 80, 70, 40]).statistic)
    assert corr.loc["mmlu", "spearman"] == pytest.approx(1.0)
    assert corr.loc["reversed", "spearman"] == pytest.approx(spearmanr([3, 2, 1.5, 0.1], [1, 2, 3, 4]).statistic)
    assert corr.loc["sparse", "pearson"] is None or pd.isna(corr.loc["sparse", "pearson"])  # 2 pairs: too few


def test_cli_with_benchmarks_and_bad_input(stored_run, tmp_path, capsys):
    from skate.cli.report import main

    out, result = stored_run
    bench = tmp_path / "bench.csv"
    pd.DataFrame({"player": ["hi", "mid", "lo"], "truth": [0.85, 0.6, 0.35]}).to_csv(bench, index=False)
    res = subprocess.run(
        [sys.executable, "-m", "skate", "report", str(out), "--benchmarks", str(bench)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    corr = pd.read_csv(out / "report" / "correlations.csv")
    assert corr.loc[0, "spearman"] == pytest.approx(1.0)
    assert "Correlation with external benchmarks" in (out / "report" / "index.html").read_text()
    # bad input: the same main() in this process (the command's exit status is its return value)
    capsys.readouterr()
    assert main([str(tmp_path / "nothing")]) == 2 and "events.jsonl" in capsys.readouterr().err
    assert main([str(tmp_path)]) == 2 and "no job folders" in capsys.readouterr().err


def test_every_game_ends_with_its_report(tmp_path):
    run_game(config({"game.rounds": 2, "report": True}), tmp_path / "r")
    assert (tmp_path / "r" / "report" / "index.html").exists()


def test_the_pass_mark_is_the_run_s_own(tmp_path):
    """Plots that mark passing (setter progress, self-preference on passed tasks) use the run's
    rating.p_thresh, not a constant."""
    from skate.report.data import load_run
    from skate.report.plots import self_preference

    run_game(config({"seed": 3, "game.rounds": 3, "rating.p_thresh": 0.9, "report": False}), tmp_path)
    d = load_run(tmp_path)
    assert d.pass_mark == 0.9
    strict = self_preference(d, filtered=True)
    d.pass_mark = 0.0
    assert not self_preference(d, filtered=True).equals(strict)  # every task passes at 0

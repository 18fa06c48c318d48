"""The report's accuracy by task group (tasks whose events carry ``groups``, as game=scp's do):
the section, ``accuracy_by_group.csv`` and its plot, checked against the estimate events; no
setter plots when no player set a task; nothing of it for a game without groups."""

from __future__ import annotations

import statistics
import warnings
from pathlib import Path

import pandas as pd
import pytest

import skate
from skate.report import build_report, group_tables
from skate.report.data import load_run
from skate.runlog.events import Estimated, RunEnded, RunStarted, TaskSet
from skate.runlog.files import EventLog, read_events
from skate.runlog.records import BENCHMARK
from skate.runner import run_game
from tests.test_runner_game import config as cop_config

SCP = {"game.questions": 30, "game.rounds": 2, "estimator.n": 4}


def scp_config(values=None):
    return skate.config(values={**SCP, **(values or {})}, game="scp", estimator="fixed_n", logger="none")


SETTER_PLOTS = ("setter_progress.png", "self_preference.png", "asking_vs_answering.png")

# A built SCP benchmark by hand: task -> (groups, {player: p}); None is a void estimate.
RUN_TASKS = {
    "t1": ({"type": "cloze", "domain": "law"}, {"A": 1.0, "B": 0.5, "C": 0.5}),
    "t2": ({"type": "cloze", "domain": "law"}, {"A": 0.5, "B": None, "C": 0.5}),
    "t3": ({"type": "prediction", "domain": "law"}, {"A": 0.25, "B": 0.75, "C": 0.5}),
    "t4": ({"type": "prediction", "domain": "bio"}, {"A": 0.0, "B": 1.0, "C": 0.5}),
    "t5": ({"type": "sequencing", "domain": "bio"}, {"A": None, "B": 0.5, "C": 0.5}),
}


def write_run(out: Path, tasks=RUN_TASKS, players=("A", "B", "C"), finished=True, game="scp") -> Path:
    """A run folder with real events: run_start, each task (its ``groups`` in the event's extra,
    none when the groups are None) with every player's estimate, and run_end."""
    with EventLog(out / "events.jsonl") as log:
        log.write(RunStarted(game=game, rounds=1, players=[{"name": p, "kind": "simulated"} for p in players]))
        for task_id, (groups, ps) in tasks.items():
            log.write(
                TaskSet(
                    task_id=task_id,
                    round=1,
                    setter=BENCHMARK,
                    prompt=f"question {task_id}",
                    answer="A",
                    extra={} if groups is None else {"groups": groups},
                )
            )
            for player, p in ps.items():
                log.write(
                    Estimated(
                        task_id=task_id,
                        round=1,
                        player=player,
                        p=p,
                        n=4,
                        correct=0 if p is None else round(4 * p),
                        void=4 if p is None else 0,
                    )
                )
        if finished:
            log.write(RunEnded(ratings=[], summary={"tasks": len(tasks)}))
    return out


@pytest.fixture(scope="module")
def scp_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("scp")
    run_game(scp_config({"report": True}), out)
    return out


def direct_means(run_dir: Path) -> dict[tuple[str, str, str], tuple[int, float]]:
    """(player, key, value) -> (non-void estimates, their mean p), straight from the events."""
    events = read_events(run_dir)
    groups = {e["task_id"]: e["groups"] for e in events if e["event"] == "task"}
    got: dict[tuple[str, str, str], list[float]] = {}
    for e in events:
        if e["event"] != "estimate" or e["p"] is None:
            continue
        g = groups[e["task_id"]]
        for key, value in (("type", g["type"]), ("domain", g["domain"]), ("type×domain", f"{g['type']}×{g['domain']}")):
            got.setdefault((e["player"], key, value), []).append(e["p"])
    return {k: (len(v), statistics.fmean(v)) for k, v in got.items()}


def test_the_page_has_the_section_the_csv_and_the_plot(scp_run):
    text = (scp_run / "report" / "index.html").read_text()
    assert "<h2>Accuracy by type and domain</h2>" in text
    for title in ("by type", "by domain", "by type × domain"):
        assert f"<h3>{title}</h3>" in text
    assert '<img alt="accuracy_by_group.png" src="data:image/png;base64,' in text
    assert (scp_run / "report" / "accuracy_by_group.png").stat().st_size > 5000
    assert "<code>accuracy_by_group.csv</code>" in text
    csv = pd.read_csv(scp_run / "report" / "accuracy_by_group.csv")
    assert list(csv.columns) == ["player", "key", "value", "type", "domain", "tasks", "accuracy", "se"]
    assert set(csv["key"]) == {"type", "domain", "type×domain"}


def test_the_csv_equals_means_of_the_estimate_events(scp_run):
    csv = pd.read_csv(scp_run / "report" / "accuracy_by_group.csv")
    expected = direct_means(scp_run)
    assert len(csv) == len(expected)  # no void estimates here: every player has every group
    for row in csv.itertuples():
        tasks, mean = expected[(row.player, row.key, row.value)]
        assert row.tasks == tasks
        assert row.accuracy == pytest.approx(mean)
        if row.key == "type":
            assert row.type == row.value and pd.isna(row.domain)
        elif row.key == "type×domain":
            assert f"{row.type}×{row.domain}" == row.value
    n_tasks = sum(1 for e in read_events(scp_run) if e["event"] == "task")
    for key in ("type", "domain"):  # each player's estimates over one key's groups cover every task
        assert set(csv[csv["key"] == key].groupby("player")["tasks"].sum()) == {n_tasks}


def test_the_page_tables_count_the_tasks(scp_run):
    d = load_run(scp_run)
    tables = dict(group_tables(d))
    by_type = tables["by type"].set_index("player")
    counts = d.groups.loc[d.p.index, "type"].value_counts()
    for value, n in counts.items():
        assert by_type.loc["(tasks)", value] == n
    assert by_type.loc["(tasks)", "tasks"] == len(d.p)
    combo = tables["by type × domain"]
    assert list(combo.columns) == ["type", "domain", "tasks", *d.players]
    assert combo["tasks"].sum() == len(d.p)


def test_a_built_benchmark_has_no_setter_plots_and_no_legend_warning(scp_run):
    d = load_run(scp_run)
    assert set(d.tasks["setter"]) == {BENCHMARK} and not d.set_by_players
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        text = build_report(scp_run, data=d).read_text()
    assert not [w for w in caught if "legend" in str(w.message)], [str(w.message) for w in caught]
    for name in SETTER_PLOTS:
        assert name not in text and not (scp_run / "report" / name).exists()
    assert f"set by {BENCHMARK})" in text  # the example tasks still name their source


def test_void_estimates_are_left_out(tmp_path):
    """A hand-written log: B's estimate on t2 and A's on t5 are void."""
    run = write_run(tmp_path)
    build_report(run)
    csv = pd.read_csv(run / "report" / "accuracy_by_group.csv").set_index(["player", "value"])
    assert csv.loc[("B", "cloze×law"), "tasks"] == 1 and csv.loc[("B", "cloze×law"), "accuracy"] == 0.5
    assert csv.loc[("A", "cloze"), "tasks"] == 2 and csv.loc[("A", "cloze"), "accuracy"] == 0.75
    assert csv.loc[("A", "sequencing×bio"), "tasks"] == 0 and pd.isna(csv.loc[("A", "sequencing×bio"), "accuracy"])
    assert csv.loc[("A", "bio"), "tasks"] == 1 and csv.loc[("A", "bio"), "accuracy"] == 0.0


def test_player_set_scp_keeps_setter_plots_and_groups(tmp_path):
    run_game(scp_config({"game.mode": "player_set", "report": True}), tmp_path)
    text = (tmp_path / "report" / "index.html").read_text()
    assert "<h2>Accuracy by type and domain</h2>" in text
    assert '<img alt="setter_progress.png"' in text and '<img alt="self_preference.png"' in text


def test_a_game_without_groups_has_no_group_section(tmp_path):
    run_game(cop_config({"game.rounds": 2, "report": True}), tmp_path)
    d = load_run(tmp_path)
    assert d.groups.empty and d.group_keys == [] and group_tables(d) == []
    text = (tmp_path / "report" / "index.html").read_text()
    assert "Accuracy by" not in text and "accuracy_by_group" not in text
    assert not (tmp_path / "report" / "accuracy_by_group.csv").exists()
    assert '<img alt="setter_progress.png"' in text  # set by players: the setter plots stay

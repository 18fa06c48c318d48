"""SKATE Fig. 6: a finished multiple-choice game's tasks asked again over option sets and orders."""

from __future__ import annotations

import pandas as pd
import pytest

from skate.cli.sensitivity import main
from skate.runner import run_game
from skate.settings.build import build_game
from skate.settings.recorded import run_settings
from skate.tools.sensitivity import SensitivityError, run_probe, variants
from tests.test_runner_game import config
from tests.wandb_records import summarise


@pytest.fixture(scope="module")
def cop_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("cop")
    run_game(config({"game.rounds": 1, "report": False}), out)
    return out


def test_each_task_is_asked_over_fresh_option_sets_and_over_orders_of_one_set(cop_run):
    import numpy as np

    from skate.runlog import events as ev
    from skate.runlog.records import Task

    log = ev.read_run(cop_run)
    game = build_game(run_settings(log.start, check=False).game)  # the recorded game, typed by its schema
    t = log.of(ev.TaskSet)[0]
    task = Task(t.task_id, t.round, t.setter, t.prompt, t.answer, dict(t.extra))
    vs = variants(game, task, 4, 5, np.random.default_rng(0))
    sets = [v.query.options for v in vs if v.probe == "option set"]
    orders = [v.query.options for v in vs if v.probe == "ordering"]
    assert len(sets) == 4 and len(orders) == 5
    assert all(t.answer in o for o in sets + orders)
    assert len({frozenset(o) for o in sets}) > 1  # different wrong options shown
    assert len({frozenset(o) for o in orders}) == 1 and len(set(orders)) > 1  # the same options, reordered
    assert orders[0] == sets[0]


def test_the_probe_writes_its_table_and_the_report_draws_it(cop_run, capsys):
    assert main([str(cop_run), "--tasks", "2", "--sets", "3", "--orders", "2", "--samples", "5"]) == 0
    table = pd.read_csv(cop_run / "sensitivity.csv")
    assert len(table) == 3 * 2 * (3 + 2)  # players x tasks x variants
    assert set(table["player"]) == {"hi", "mid", "lo"} and (table["samples"] == 5).all()
    assert ((table["fraction"] - table["correct"] / 5).abs() < 1e-9).all()
    spread = capsys.readouterr().out
    assert "option set" in spread and "ordering" in spread
    page = (cop_run / "report" / "index.html").read_text()
    assert 'alt="mcqa_sensitivity.png"' in page and "Fig. 6" in page
    # the same seed gives the same table
    again = run_probe(cop_run, n_tasks=2, sets=3, orders=2, samples=5)
    pd.testing.assert_frame_equal(again, table, check_dtype=False)
    assert main([str(cop_run), "--tasks", "1", "--sets", "1", "--orders", "1", "--samples", "1", "--wandb"]) == 0
    assert "W&B: not logged (the run's logger is not W&B)" in capsys.readouterr().out  # the tests' runs log nothing
    assert (
        main([str(cop_run), "--tasks", "1", "--sets", "1", "--orders", "1", "--samples", "1", "--wandb", "offline"])
        == 0
    )
    s = summarise(cop_run)
    assert s["exit_code"] == 0 and s["name"] == f"sensitivity {cop_run.name}"
    assert {"sensitivity/mcqa_sensitivity/_type", "sensitivity/table/_type"} <= s["history_keys"]


def test_bad_input_says_what_to_fix(cop_run, tmp_path, capsys):
    with pytest.raises(SensitivityError, match="no player nobody in the run: choose from hi, mid, lo"):
        run_probe(cop_run, players=["nobody"], n_tasks=1, sets=1, orders=1, samples=1)
    with pytest.raises(SensitivityError, match="no task r999-x in the run"):
        run_probe(cop_run, task_ids=["r999-x"])
    assert main([str(tmp_path), "--samples", "0"]) == 2
    assert "has no events.jsonl" in capsys.readouterr().err
    assert main([str(cop_run), "--samples", "0"]) == 2
    assert "--samples=0: give at least 1" in capsys.readouterr().err


def test_a_game_without_multiple_choice_is_refused(tmp_path):
    run_game(config({"game.rounds": 1, "report": False}, game="mathquiz"), tmp_path)
    with pytest.raises(SensitivityError, match="not multiple choice"):
        run_probe(tmp_path, n_tasks=1, sets=1, orders=1, samples=1)

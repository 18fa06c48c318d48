"""What ``skate play`` prints once a game is over (skate.report.console), read from the run's typed summary."""

from __future__ import annotations

from pathlib import Path

from skate.report.console import OUTAGE_STATUS, print_summary
from skate.engine import GameResult, Summary

ROWS = [{"rank": 1, "player": "hi", "score": 30.0, "lo": 25.0, "hi": 35.0},
        {"rank": 2, "player": "lo", "score": 20.0, "lo": 15.0, "hi": 25.0}]
USAGE = {"total": {"calls": 9, "samples": 12, "cached": 3, "void": 1, "retries": 2, "prompt_tokens": 100,
                   "completion_tokens": 40, "cost_usd": 0.0123}, "players": {}}


def test_the_report_reads_counts_usage_and_the_tasks_each_player_set(capsys):
    summary = Summary(attempts=7, tasks=5, samples=40, updates=5, tasks_by_setter={"hi": 4}, elapsed_s=2.0,
                      sandbox_executions=10, read_estimates=6, usage=USAGE)
    print_summary(GameResult(ROWS, [], summary), Path("out"), print_table=True)
    out, err = capsys.readouterr()
    assert "tasks set" in out and out.splitlines()[2].rstrip().endswith("4")
    assert out.splitlines()[3].rstrip().endswith("0")  # lo set none
    assert "5 valid tasks from 7 attempts, 6 answers read from the models' probabilities, 40 answer samples" in out
    assert "sandbox executions: 10 (5.0 per second)" in out
    assert "model calls: 9 for 12 samples (3 from the cache, 1 void, 2 retries)" in out and "$0.0123" in out
    assert out.rstrip().endswith("results: out") and err == ""


def test_a_stopped_run_says_where_and_how_to_resume_even_without_the_table(capsys):
    summary = Summary(tasks=3, stopped="BudgetExceeded: spent", stopped_round=2)
    assert print_summary(GameResult(ROWS, [], summary), Path("run"), print_table=False) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert err.strip() == ("skate: BudgetExceeded: spent in round 2; 3 tasks rated. "
                           "Resume with: python -m skate resume=run llm.budget_usd=<more>")


def test_a_run_stopped_by_a_model_that_did_not_answer_says_so_in_one_line_and_exits_75(capsys):
    why = "openai/mid at http://gpu-box:8000/v1 did not answer for 600 s (llm.outage_wait_s=600; last: transport: refused)"
    summary = Summary(tasks=3, stopped=f"ModelUnreachable: {why}", stopped_round=6)
    assert print_summary(GameResult(ROWS, [], summary), Path("run"), print_table=False) == OUTAGE_STATUS == 75
    assert capsys.readouterr().err == (f"skate: {why} in round 6; 3 tasks rated. "
                                       "Resume with: python -m skate resume=run once it answers\n")

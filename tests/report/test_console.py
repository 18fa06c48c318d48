"""What ``skate play`` prints once a game is over (skate.report.console), read from the run's typed summary."""

from __future__ import annotations

from pathlib import Path

from skate.loop import GameResult, Summary
from skate.report.console import OUTAGE_STATUS, print_summary

ROWS = [
    {"rank": 1, "player": "hi", "score": 30.0, "lo": 25.0, "hi": 35.0},
    {"rank": 2, "player": "lo", "score": 20.0, "lo": 15.0, "hi": 25.0},
]
USAGE = {
    "total": {
        "calls": 9,
        "samples": 12,
        "cached": 3,
        "void": 1,
        "retries": 2,
        "prompt_tokens": 100,
        "completion_tokens": 40,
        "cost_usd": 0.0123,
    },
    "players": {},
}


def test_the_report_reads_counts_usage_and_the_tasks_each_player_set(capsys):
    summary = Summary(
        attempts=7,
        tasks=5,
        samples=40,
        updates=5,
        tasks_by_setter={"hi": 4},
        elapsed_s=2.0,
        sandbox_executions=10,
        read_estimates=6,
        usage=USAGE,
    )
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
    assert err.strip() == (
        "skate: BudgetExceeded: spent in round 2; 3 tasks rated. Resume with: skate resume=run llm.budget_usd=<more>"
    )


def test_a_run_stopped_by_a_model_that_did_not_answer_says_so_in_one_line_and_exits_75(capsys):
    why = "openai/mid at http://gpu-box:8000/v1 did not answer for 600 s (llm.outage_wait_s=600; last: transport: refused)"
    summary = Summary(tasks=3, stopped=f"ModelUnreachable: {why}", stopped_round=6)
    assert print_summary(GameResult(ROWS, [], summary), Path("run"), print_table=False) == OUTAGE_STATUS == 75
    assert capsys.readouterr().err == (
        f"skate: {why} in round 6; 3 tasks rated. Resume with: skate resume=run once it answers\n"
    )


# ------------------------------------------------------------------ what the tasks told
def _cohort(base, names):
    """The fake models as a ``players.llm=`` override, for the command line."""
    return "[" + ", ".join(f"{{name: {n}, model: hosted_vllm/{n}, api_base: '{base}'}}" for n in names) + "]"


def test_a_cohort_that_sets_nothing_is_told_so_with_what_to_try(tmp_path):
    """The fake server's models write nothing valid (one copies its request back to the token
    limit, one lists placeholders for its wrong options): no ranking and no leader, the
    rejections by reason with the setting that addresses each, a finished run's exit status."""
    import json
    import subprocess
    import sys

    from skate.llm.fake_server import FakeLLMServer, FakeModel

    with FakeLLMServer({"echo": FakeModel(0.5, {"echo": 1.0}), "lists": FakeModel(0.5, {"placeholder": 1.0})}) as srv:
        res = subprocess.run(
            [
                sys.executable,
                "-m",
                "skate",
                "game.rounds=2",
                "logger=console",
                "logger.progress=plain",
                "report=false",
                "players.simulated=[]",
                f"players.llm={_cohort(srv.api_base, ['echo', 'lists'])}",
                "llm.structured=off",
                f"llm.cache_dir={tmp_path}/cache",
                f"hydra.run.dir={tmp_path}/run",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp_path,
        )
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "no ranking: nobody was rated (0 valid tasks from" in out and "rank  player" not in out
    assert "rejected attempts by reason: (no valid task was set)" in out
    assert "too_few_distractors 6 (lists 6): too few distinct wrong options: game.fill_distractors=true" in out
    assert "game.n_distractors=3" in out
    assert "malformed 6 (echo 6)" in out
    progress = (tmp_path / "run" / "skate.log").read_text()
    assert "valid tasks so far" in progress and "no one rated yet" in progress and "leader" not in progress
    rows = json.loads((tmp_path / "run" / "ratings.json").read_text())
    assert all(r["rank"] is None and r["no_data"] for r in rows)


def test_the_summary_gives_the_share_of_tasks_that_separated_and_who_answered_at_a_guess(tmp_path):
    import skate
    from skate.llm.fake_server import FakeLLMServer, FakeModel
    from skate.players.config import LLMPlayerConfig
    from skate.report.console import summary_text
    from skate.runlog.files import read_events
    from skate.runner import run_game

    models = {"ace": FakeModel(0.9), "mid": FakeModel(0.6), "blank": FakeModel(0.5, {"no_option": 1.0})}
    with FakeLLMServer(models) as srv:
        cohort = [LLMPlayerConfig(name=n, model=f"hosted_vllm/{n}", api_base=srv.api_base) for n in models]
        settings = skate.config(
            values={
                "game.rounds": 2,
                "report": False,
                "players.simulated": [],
                "players.llm": cohort,
                "estimator.n": 4,
                "llm.cache_dir": f"{tmp_path}/c",
            },
            logger="none",
            estimator="fixed_n",
        )
        result = run_game(settings, tmp_path / "run")
    events = read_events(tmp_path / "run")
    by_task: dict = {}
    for e in events:
        if e["event"] == "estimate" and e["p"] is not None:
            by_task.setdefault(e["task_id"], []).append(e["p"])
    apart = sum(max(ps) - min(ps) > 0.05 for ps in by_task.values())
    s = result.summary
    assert s.tasks == len(by_task) > 0 and s.separating == apart and s.at_guess == ["blank"]
    text = summary_text(result, tmp_path / "run")
    assert f"{apart} of {s.tasks} valid tasks separated the players" in text
    assert "at or below a guess on every task: blank" in text
    assert "rejected attempts by reason" in text and "blank" in text  # it set nothing valid: its rejections are shown

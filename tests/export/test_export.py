"""skate export: a finished game's tasks, or a built SCP benchmark, as plain JSONL (with
its schema), an lm-evaluation-harness task and an Inspect task; lm-eval and Inspect themselves
run the exports against the fake OpenAI-compatible server and score a fake model as skate's own
estimator=greedy does on the same tasks."""

from __future__ import annotations

import json
import logging
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import skate
from skate.cli.export import main
from skate.estimators.base import task_rng
from skate.export import EXECUTED_NOTE, export
from skate.games.cop.rules import COPGame
from skate.games.scp.questions import from_json, stem
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.llm.modules import render_options
from skate.runlog.events import Estimated, TaskSet, read_run
from skate.runlog.records import Task
from skate.runner import run_game
from tests.llm.conftest import llm_players

MODELS = {"ace": 0.9, "low": 0.3}


@pytest.fixture(scope="module")
def server():
    with FakeLLMServer({n: FakeModel(s) for n, s in MODELS.items()}) as srv:
        yield srv


def _greedy_run(srv, folder: Path, game: str, values: dict) -> Path:
    cfg = skate.config(
        game=game,
        estimator="greedy",
        logger="none",
        values={
            **values,
            "report": False,
            "players.simulated": [],
            "llm.preflight": False,
            "players.llm": llm_players(srv.api_base, tuple(MODELS)),
            "llm.cache_dir": str(folder / "cache"),
        },
    )
    run_game(cfg, folder / "run")
    return folder / "run"


@pytest.fixture(scope="module")
def cop_run(server, tmp_path_factory):
    """A COP game of the fake models (they set the programs on this server, so it knows the
    outputs), answered at temperature 0: skate's greedy score of each model on every task."""
    return _greedy_run(server, tmp_path_factory.mktemp("cop"), "cop", {"game.rounds": 2, "seed": 5})


@pytest.fixture(scope="module")
def scp_bench(server, tmp_path_factory):
    """A small built SCP benchmark and the one-round built game of the fake models on it."""
    from skate.tools.scp.study import build_benchmark

    folder = tmp_path_factory.mktemp("scp")
    build_benchmark("shipped", folder / "all.jsonl", seed=0, per_doc=1)
    lines = (folder / "all.jsonl").read_text().splitlines()[:12]
    bench = folder / "bench.jsonl"
    bench.write_text("\n".join(lines) + "\n")
    run = _greedy_run(
        server,
        folder,
        "scp",
        {"game.mode": "built", "game.benchmark": str(bench), "game.rounds": 1, "game.max_doc_age_days": None},
    )
    return bench, run


def greedy_scores(run: Path) -> dict[str, float]:
    """Each model's skate greedy score: its mean p(correct) over the run's tasks."""
    ests = read_run(run).of(Estimated)
    assert ests and all(e.n == 1 and e.p in (0.0, 1.0) for e in ests)  # one answer each, right or wrong
    return {m: float(np.mean([e.p for e in ests if e.player == m])) for m in MODELS}


def _records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "tasks.jsonl").read_text().splitlines()]


# ------------------------------------------------------------------ JSONL, schema, bad input
def test_jsonl_holds_every_task_as_a_solver_sees_it_with_a_schema(cop_run, tmp_path, capsys):
    import jsonschema

    assert main([str(cop_run), "--to", "jsonl", "--out", str(tmp_path / "j")]) == 0
    printed = capsys.readouterr().out
    tasks = read_run(cop_run).of(TaskSet)
    assert printed.startswith(f"wrote {len(tasks)} tasks (cop {len(tasks)}) from {cop_run} as jsonl")
    records = _records(tmp_path / "j")
    schema = json.loads((tmp_path / "j" / "tasks.schema.json").read_text())
    game = COPGame()
    assert [r["id"] for r in records] == [f"cop/{t.task_id}" for t in tasks]
    for r, t in zip(records, tasks, strict=True):
        jsonschema.validate(r, schema)
        task = Task(t.task_id, t.round, t.setter, t.prompt, t.answer, dict(t.extra))
        query = game.make_query(task, task_rng(task))  # the order estimator=greedy shows every player
        assert r["options"] == list(query.options) and r["labels"] == ["A", "B", "C", "D"]
        assert r["options"][r["labels"].index(r["answer"])] == t.answer == r["answer_text"]
        assert (
            f"[[ ## program ## ]]\n{t.prompt}\n\n[[ ## options ## ]]\n{render_options(query.options)}\n\n"
            in r["prompt"]
        )
        assert (r["setter"], r["round"]) == (t.setter, t.round)
        assert r["provenance"] == {"run": str(cop_run.resolve()), "game": "cop", "seed": 5, "task_id": t.task_id}


def test_a_built_benchmark_and_a_mathquiz_game_export_too(scp_bench, tmp_path):
    bench, scp_run = scp_bench
    export(bench, "jsonl", tmp_path / "s")
    export(scp_run, "jsonl", tmp_path / "r")  # the game played on it: the same tasks, shown the same way
    same = ("id", "prompt", "options", "answer", "setter", "round")
    assert all(r["provenance"].get("doc_date") for r in _records(tmp_path / "r"))
    assert sorted(({k: r[k] for k in same} for r in _records(tmp_path / "r")), key=lambda r: r["id"]) == [
        {k: r[k] for k in same} for r in _records(tmp_path / "s")
    ]
    built = [json.loads(line) for line in bench.read_text().splitlines()]
    records = _records(tmp_path / "s")
    assert [r["provenance"]["question_id"] for r in records] == [q["id"] for q in built]
    for r, q in zip(records, built, strict=True):
        assert r["labels"] == ["1", "2", "3", "4"] and r["options"][int(r["answer"]) - 1] == q["options"][q["answer"]]
        assert (r["provenance"]["doc"], r["provenance"]["build_seed"], r["setter"]) == (
            q["doc"],
            q["seed"],
            "(benchmark)",
        )
        # the benchmark's dates travel with it: it expires as its documents age
        assert (r["provenance"]["doc_date"], r["provenance"]["doc_date_source"], r["provenance"]["built"]) == (
            q["doc_date"],
            q["doc_date_source"],
            q["built"],
        )
        assert f"[[ ## question ## ]]\n{stem(from_json(q))}\n\n[[ ## options ## ]]\n1. " in r["prompt"]
    run_game(
        skate.config(game="mathquiz", estimator="greedy", logger="none", values={"game.rounds": 1, "report": False}),
        tmp_path / "mq",
    )
    export(tmp_path / "mq", "jsonl", tmp_path / "m")
    tasks = read_run(tmp_path / "mq").of(TaskSet)
    records = _records(tmp_path / "m")
    assert len(records) == len(tasks) > 0
    for r, t in zip(records, tasks, strict=True):
        assert (
            r["options"] == []
            and r["answer"] == str(int(t.answer))
            and f"[[ ## question ## ]]\n{t.prompt}" in r["prompt"]
        )


def _bad(argv, capsys) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


def test_bad_input_gets_one_line_status_2_and_writes_nothing(cop_run, tmp_path, capsys):
    unfinished = tmp_path / "unfinished"
    unfinished.mkdir()
    lines = (cop_run / "events.jsonl").read_text().splitlines()
    (unfinished / "events.jsonl").write_text("\n".join(x for x in lines if '"event": "run_end"' not in x) + "\n")
    assert "has not finished (no run_end event" in _bad(
        [str(unfinished), "--to", "jsonl", "--out", str(tmp_path / "o")], capsys
    )
    assert "unknown --to 'csv': use one of jsonl, lm-eval, inspect" in _bad(
        [str(cop_run), "--to", "csv", "--out", str(tmp_path / "o")], capsys
    )
    (tmp_path / "taken").mkdir()
    assert "already exists" in _bad([str(cop_run), "--to", "jsonl", "--out", str(tmp_path / "taken")], capsys)
    jail = tmp_path / "jail"
    jail.mkdir()
    (jail / "events.jsonl").write_text(
        (cop_run / "events.jsonl").read_text().replace('"game": "cop"', '"game": "pyjail"')
    )
    assert "pyjail " + EXECUTED_NOTE.split("{game} ")[1] in _bad(
        [str(jail), "--to", "jsonl", "--out", str(tmp_path / "o")], capsys
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jail", "taken", "unfinished"]  # no output, no temp folder
    assert list((tmp_path / "taken").iterdir()) == []


def test_the_skate_export_command_runs_the_tool(cop_run, tmp_path, capsys):
    from skate.cli import main

    assert main(["export", str(cop_run), "--to", "lm-eval", "--out", str(tmp_path / "x")]) == 0
    assert "--include_path" in capsys.readouterr().out and (tmp_path / "x" / "utils.py").exists()


# ------------------------------------------------------------------ the harnesses themselves
def test_lm_eval_scores_the_exports_as_skate_greedy_does(server, cop_run, scp_bench, tmp_path):
    pytest.importorskip("lm_eval")
    import lm_eval
    from lm_eval.tasks import TaskManager

    bench, scp_run = scp_bench
    export(cop_run, "lm-eval", tmp_path / "cop")
    export(bench, "lm-eval", tmp_path / "scp")
    names = [next((tmp_path / d).glob("*.yaml")).stem for d in ("cop", "scp")]
    manager = TaskManager(include_path=[str(tmp_path / "cop"), str(tmp_path / "scp")], include_defaults=False)
    logging.getLogger("lm_eval").setLevel(logging.WARNING)
    for model in MODELS:
        res = lm_eval.simple_evaluate(
            model="local-chat-completions",
            tasks=names,
            task_manager=manager,
            apply_chat_template=True,
            model_args=f"model={model},base_url={server.api_base}/chat/completions,num_concurrent=1,"
            "max_retries=1,tokenized_requests=False",
        )
        got = [res["results"][n]["exact_match,answer"] for n in names]
        want = [greedy_scores(cop_run)[model], greedy_scores(scp_run)[model]]
        print(
            f"lm-eval {model}: cop {got[0]:.3f} (skate greedy {want[0]:.3f}), scp {got[1]:.3f} "
            f"(skate greedy {want[1]:.3f})"
        )
        assert got == pytest.approx(want, abs=1e-12)
    assert greedy_scores(cop_run)["ace"] > greedy_scores(cop_run)["low"]  # the fake knows its programs


INSPECT_PYTHON = Path(__file__).resolve().parents[2] / ".venv" / "inspect" / "bin" / "python"


def test_inspect_scores_the_exports_as_skate_greedy_does(server, cop_run, scp_bench, tmp_path):
    if not INSPECT_PYTHON.exists():
        pytest.skip("Inspect is not installed in .venv/inspect: run bash scripts/setup.sh test")
    bench, scp_run = scp_bench
    export(cop_run, "inspect", tmp_path / "cop")
    export(bench, "inspect", tmp_path / "scp")
    # inspect-ai's openai/<name> sends no temperature for a model name it does not know (it takes it for a
    # new frontier model); openai-api/<service>/<name> is its provider for any OpenAI-compatible server.
    # Task files go by relative path: inspect-ai refuses an absolute one.
    files = [str(next((tmp_path / g).glob("skate_*.py")).relative_to(tmp_path)) for g in ("cop", "scp")]
    env = {**os.environ, "SKATE_BASE_URL": server.api_base, "SKATE_API_KEY": "unused"}
    res = subprocess.run(
        [
            str(INSPECT_PYTHON),
            str(Path(__file__).with_name("inspect_driver.py")),
            str(tmp_path / "logs"),
            ",".join(f"openai-api/skate/{m}" for m in MODELS),
            *files,
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    logs = json.loads(res.stdout.strip().splitlines()[-1])
    assert [log["status"] for log in logs] == ["success"] * 4
    got = {
        (log["model"].rsplit("/", 1)[1], log["task"].rsplit("/", 1)[-1].split("_")[1]): log["accuracy"] for log in logs
    }
    for model in MODELS:
        want = {"cop": greedy_scores(cop_run)[model], "scp": greedy_scores(scp_run)[model]}
        print(
            f"inspect {model}: cop {got[model, 'cop']:.3f} (skate greedy {want['cop']:.3f}), "
            f"scp {got[model, 'scp']:.3f} (skate greedy {want['scp']:.3f})"
        )
        assert {g: got[model, g] for g in want} == pytest.approx(want, abs=1e-12)

"""skate calibrate: labelled pairs from real CRUXEval programs, the ROC, the
threshold at a false-rejection rate, and its outputs."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import random
from pathlib import Path

import numpy as np
import pytest
import yaml

import skate
from skate.cli.calibrate import main
from skate.embedders import minilm
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.paths import CONF_DIR
from skate.tools.calibrate import (
    NEAR_KINDS,
    build_pairs,
    change_constants,
    load_cruxeval,
    near_duplicates,
    reformat,
    rename,
    roc,
    task_text,
    threshold_at,
)

RECORDS = load_cruxeval()


def output_of(src: str) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(src, "<task>", "exec"), {})  # CRUXEval programs are pure functions
    return buf.getvalue()


@pytest.mark.parametrize("index", [0, 7, 42, 123, 400])
def test_renaming_and_reformatting_keep_the_program(index):
    src = task_text(RECORDS[index])
    rng = random.Random(index)
    renamed, layout = rename(src, rng), reformat(src)
    assert renamed != src and output_of(renamed) == output_of(src)
    assert output_of(layout) == output_of(src)
    bound = {n.id for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    left = {n.id for n in ast.walk(ast.parse(renamed)) if isinstance(n, ast.Name)}
    assert not (bound & left)  # every variable the program binds has a new name
    assert "def f(" in src and "def f(" not in renamed


def test_changed_constants_parse_and_differ_only_in_literals():
    src = "def f(s, n):\n    return s.replace('ab', 'Cd') * (n + 10)\nprint(f('abc', 2))\n"
    new = change_constants(src, random.Random(0))
    ast.parse(new)
    assert new != src
    old_toks = [n for n in ast.walk(ast.parse(src)) if not isinstance(n, ast.Constant)]
    new_toks = [n for n in ast.walk(ast.parse(new)) if not isinstance(n, ast.Constant)]
    assert [type(n) for n in old_toks] == [type(n) for n in new_toks]
    assert "'Cd'" not in new and "+ 10)" not in new and "def f(s, n)" in new


def test_pairs_are_labelled_and_drawn_from_real_programs():
    texts, pairs = build_pairs(RECORDS, programs=20, distinct=50, seed=3)
    near = [p for p in pairs if p.near]
    far = [p for p in pairs if not p.near]
    assert {p.kind for p in near} == set(NEAR_KINDS) and len(far) == 50
    assert all(p.a_id == p.b_id.split("~")[0] for p in near)
    assert all(p.a_id != p.b_id and texts[p.a] != texts[p.b] for p in far)
    assert all(texts[p.a] != texts[p.b] for p in near)
    assert build_pairs(RECORDS, 20, 50, seed=3)[0] == texts  # seeded


def test_roc_and_threshold_on_known_distances():
    distinct = np.arange(1, 11) / 10  # 0.1 .. 1.0
    near = np.array([0.05, 0.15, 0.22, 0.6])
    t = threshold_at(distinct, 0.2)  # may reject 2 of the 10 distinct pairs: between 0.2 and 0.3
    assert t == 0.25 and np.mean(distinct <= t) == 0.2 and np.mean(near <= t) == 0.75
    assert threshold_at(distinct, 0.0) == 0.05  # rejects none of them
    th, frr, catch, auc = roc(near, distinct)
    assert frr[0] == catch[0] == 0 and frr[-1] == catch[-1] == 1
    assert np.all(np.diff(frr) >= 0) and np.all(np.diff(catch) >= 0)
    # AUC = P(a near-duplicate is closer than a distinct pair), a tie counting half: 0.6 ties 0.6
    assert auc == pytest.approx((10 + 9 + 8 + 4 + 0.5) / 40)
    assert roc(near / 100, distinct)[3] == pytest.approx(1.0)


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    from skate.runner import run_game

    out = tmp_path_factory.mktemp("run")
    run_game(
        skate.config(game="cop", logger="none", sandbox="subprocess", values={"game.rounds": 3, "report": False}), out
    )
    return out


def test_the_command_writes_plots_tables_and_a_summary(tmp_path, finished_run, capsys):
    out = tmp_path / "cal"
    code = main(
        [
            "--embedders",
            "hashing",
            "--programs",
            "30",
            "--distinct",
            "200",
            "--runs",
            str(finished_run),
            "--frr",
            "0.1",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    summary = json.loads((out / "calibration.json").read_text())
    r = summary["embedders"]["hashing"]
    assert r["distinct_pairs"] > 200 and r["near_pairs"] >= 30 * 4
    assert r["at_threshold_frr"] <= 0.1 and 0.5 < r["auc"] <= 1.0
    assert r["default_threshold"] == skate.preset("hashing", "embedder").threshold
    assert r["by_kind"]["run"]["pairs"] > 0
    assert (out / "distances.png").stat().st_size > 10_000 and (out / "roc.png").stat().st_size > 10_000
    rows = (out / "pairs.csv").read_text().splitlines()
    assert rows[0] == "label,kind,a,b,hashing" and len(rows) == summary["pairs"] + 1
    assert "roc" not in capsys.readouterr().err
    # The threshold rejects what the table says it rejects.
    dist = {"near": [], "distinct": []}
    for line in rows[1:]:
        label, *_, d = line.split(",")
        dist[label].append(float(d))
    assert np.mean(np.array(dist["distinct"]) <= r["threshold"]) == pytest.approx(r["at_threshold_frr"], abs=1e-4)
    assert np.mean(np.array(dist["near"]) <= r["threshold"]) == pytest.approx(r["at_threshold_catch"], abs=1e-4)


def test_openai_calibrates_against_an_endpoint(tmp_path, capsys):
    with FakeLLMServer({"*": FakeModel()}) as srv:
        code = main(
            [
                "--embedders",
                "hashing",
                "openai",
                "--programs",
                "12",
                "--distinct",
                "40",
                "--set",
                f"openai.api_base={srv.api_base}",
                "openai.model=openai/emb",
                "openai.cache=false",
                "--out",
                str(tmp_path),
            ]
        )
        assert code == 0 and srv.stats.embedding_requests == 1  # one batch: every text in one request
    printed = capsys.readouterr().out
    assert printed.splitlines()[0].split()[:3] == ["embedder", "AUC", "FRR"]
    assert any(line.startswith("openai") and "0.336" in line for line in printed.splitlines())


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--embedders", "nope"], "embedder=nope"),
        (["--runs", "{tmp}"], "has no events.jsonl"),
        (["--set", "openai"], "write EMBEDDER.KEY=VALUE"),
        (["--data", "{tmp}/none.jsonl"], "none.jsonl"),
    ],
)
def test_bad_input_is_one_line(tmp_path, capsys, argv, message):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main([*argv, "--programs", "4", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_missing_minilm_weights_name_the_install_command(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(minilm, "packaged_model_dir", lambda: None)
    assert main(["--embedders", "minilm", "--programs", "4", "--out", str(tmp_path)]) == 2
    assert "scripts/setup.sh minilm" in capsys.readouterr().err


def test_near_duplicates_skip_copies_that_equal_the_original():
    src = "print(1)\n"
    kinds = near_duplicates(src, random.Random(0))
    assert "renamed" not in kinds and "reformatted" not in kinds and "constants" in kinds


def test_the_threshold_sweep_is_on_the_default_embedders_scale():
    """sensitivity_embedder sweeps hashing thresholds at rising false-rejection rates: on a
    fresh sample of real programs each value rejects more distinct pairs than the one before,
    and the one calibrated at 5 % rejects about that share."""
    # the sweep's values, as the preset gives them to Hydra's sweeper (skate -m experiment=sensitivity_embedder)
    sweep = yaml.safe_load(Path(CONF_DIR, "experiment", "sensitivity_embedder.yaml").read_text())["hydra"]["sweeper"]
    values = [float(v) for v in str(sweep["params"]["embedder.threshold"]).split(",")]
    embedder = skate.config(experiment="sensitivity_embedder").embedder
    assert embedder._target_.endswith("HashingEmbedder") and embedder.threshold in values
    texts, pairs = build_pairs(RECORDS, programs=80, distinct=1500, seed=11)
    from skate.embedders import HashingEmbedder

    vec = HashingEmbedder().embed(texts)
    dist = np.array([1 - vec[p.a] @ vec[p.b] for p in pairs if not p.near])
    frr = [float(np.mean(dist <= v)) for v in sorted(values)]
    assert all(a < b for a, b in zip(frr[1:], frr[2:], strict=False)) and frr[0] <= frr[1]
    assert 0.01 <= float(np.mean(dist <= 0.399)) <= 0.12

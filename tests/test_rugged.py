"""Rugged Scores (skate.rugged): hand-worked values on a tiny table, the private side from an SCP
run folder, and the CLI's bad-input errors."""

from __future__ import annotations

import math
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from skate.rugged import main, private_from_run, read_scores, rugged_scores
from tests.test_report_groups import RUN_TASKS, write_run

REPO = Path(__file__).resolve().parents[1]

# Domains: math (two public benchmarks, averaged; one private) and code are matched;
# law is public only and bio private only. Models A and B tie on mathq and on p_math.
ROWS = [
    # model, benchmark, kind, domain, score
    ("A", "gsm", "public", "math", 0.8),
    ("A", "mathq", "public", "math", 0.6),
    ("A", "p_math", "private", "math", 0.5),
    ("A", "hum", "public", "code", 0.6),
    ("A", "p_code", "private", "code", 0.6),
    ("A", "pub_law", "public", "law", 0.9),
    ("A", "p_bio", "private", "bio", 0.3),
    ("B", "gsm", "public", "math", 0.6),
    ("B", "mathq", "public", "math", 0.6),
    ("B", "p_math", "private", "math", 0.5),
    ("B", "hum", "public", "code", 0.4),
    ("B", "p_code", "private", "code", 0.2),
    ("B", "pub_law", "public", "law", 0.5),
    ("B", "p_bio", "private", "bio", 0.5),
]
COLS = ["model", "benchmark", "kind", "domain", "score"]


def table(rows=ROWS) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=COLS)


def by_model(rows=ROWS) -> dict[str, dict]:
    return {r["model"]: r for r in rugged_scores(table(rows)).to_dict("records")}


def test_rs1_abs_hand_computed():
    rs = by_model()
    # A: math (0.8+0.6)/2=0.7 vs 0.5 -> 0.2/1.2 = 1/6; code 0.6 vs 0.6 -> 0;
    #    paired = 2/2 * (1/6 + 0); unmatched 0.9 vs 0.3 -> 2 * 0.6/1.2 = 1.
    assert rs["A"]["rs1_abs"] == pytest.approx(1 / 6 + 1)
    # B: math 0.6 vs 0.5 -> 1/11; code 0.4 vs 0.2 -> 1/3; unmatched 0.5 vs 0.5 -> 0.
    assert rs["B"]["rs1_abs"] == pytest.approx(1 / 11 + 1 / 3)


def test_rs1_rel_ranks_per_benchmark_with_ties_before_averaging():
    rs = by_model()
    # Ranks (worst 1, best 2; ties 1.5): gsm A2 B1, mathq 1.5/1.5, p_math 1.5/1.5,
    # hum A2 B1, p_code A2 B1, pub_law A2 B1, p_bio A1 B2.
    # A: math pub (2+1.5)/2 = 1.75 vs 1.5 -> 0.25/3.25 = 1/13; code 2 vs 2 -> 0;
    #    unmatched 2 vs 1 -> 2 * 1/3.
    assert rs["A"]["rs1_rel"] == pytest.approx(1 / 13 + 2 / 3)
    # B: math pub (1+1.5)/2 = 1.25 vs 1.5 -> -1/11; code 1 vs 1 -> 0; unmatched 1 vs 2 -> -2/3.
    assert rs["B"]["rs1_rel"] == pytest.approx(-1 / 11 - 2 / 3)
    # (Ranking the domain averages instead would give A's math public side rank 2, not 1.75.)


def test_rs2_is_sample_std_of_per_benchmark_private_accuracies():
    rs = by_model()
    # A private: 0.5, 0.6, 0.3 -> mean 14/30, squared deviations (1+16+25)/900, / (3-1).
    assert rs["A"]["rs2"] == pytest.approx(math.sqrt(7 / 300))
    assert rs["A"]["rs2_norm"] == pytest.approx(math.sqrt(7 / 300) / (14 / 30))
    # B private: 0.5, 0.2, 0.5 -> mean 0.4, deviations .1 -.2 .1 -> 0.06 / 2.
    assert rs["B"]["rs2"] == pytest.approx(math.sqrt(0.03))
    assert rs["B"]["rs2_norm"] == pytest.approx(math.sqrt(0.03) / 0.4)


def test_rs2_uses_benchmarks_not_domain_averages_and_nan_below_two():
    rows = [
        ("C", "p1", "private", "cs", 0.2),
        ("C", "p2", "private", "cs", 0.4),
        ("C", "p3", "private", "bio", 0.9),
        ("D", "p1", "private", "cs", 0.4),
    ]
    rs = by_model(rows)
    assert rs["C"]["rs2"] == pytest.approx(pd.Series([0.2, 0.4, 0.9]).std())  # not of [0.3, 0.9]
    assert rs["C"]["rs2_norm"] == pytest.approx(pd.Series([0.2, 0.4, 0.9]).std() / 0.5)
    assert math.isnan(rs["D"]["rs2"]) and math.isnan(rs["D"]["rs2_norm"])
    # No public benchmarks at all: both RS_I terms are 0.
    assert rs["C"]["rs1_abs"] == 0 and rs["C"]["rs1_rel"] == 0


def test_unmatched_term_is_zero_when_one_side_is_empty():
    rows = [
        ("A", "pm", "public", "math", 0.9),
        ("A", "cm", "private", "math", 0.6),
        ("A", "pl", "public", "law", 0.2),  # unmatched public, no unmatched private
        ("A", "cm2", "private", "math", 0.3),  # second private math benchmark: averaged to 0.45
    ]
    rs = by_model(rows)
    # 2/1 * (0.9 - 0.45) / (0.9 + 0.45); law contributes nothing.
    assert rs["A"]["rs1_abs"] == pytest.approx(2 * 0.45 / 1.35)


def test_no_matched_domain_leaves_only_the_unmatched_term():
    rows = [("A", "pl", "public", "law", 0.6), ("A", "cb", "private", "bio", 0.2),
            ("A", "cc", "private", "cs", 0.4)]
    # unmatched private mean of domain values (0.2 + 0.4) / 2 = 0.3 -> 2 * 0.3 / 0.9
    assert by_model(rows)["A"]["rs1_abs"] == pytest.approx(2 / 3)


# ----------------------------------------------------------------- the private side from a run
# RUN_TASKS (tests/test_report_groups.py): a built SCP benchmark written by hand.
# Each player's mean over the group's non-void estimates (A has only a void one in
# sequencing/bio, so no row there; B's void t2 is left out of cloze/law).
RUN_PRIVATE = [
    ("A", "scp-cloze/law", "private", "law", 0.75),
    ("A", "scp-prediction/bio", "private", "bio", 0.0),
    ("A", "scp-prediction/law", "private", "law", 0.25),
    ("B", "scp-cloze/law", "private", "law", 0.5),
    ("B", "scp-prediction/bio", "private", "bio", 1.0),
    ("B", "scp-prediction/law", "private", "law", 0.75),
    ("B", "scp-sequencing/bio", "private", "bio", 0.5),
    ("C", "scp-cloze/law", "private", "law", 0.5),
    ("C", "scp-prediction/bio", "private", "bio", 0.5),
    ("C", "scp-prediction/law", "private", "law", 0.5),
    ("C", "scp-sequencing/bio", "private", "bio", 0.5),
]


def test_private_from_run_means_per_type_and_domain_without_void(tmp_path):
    got = private_from_run(write_run(tmp_path))
    pd.testing.assert_frame_equal(got, table(RUN_PRIVATE), check_dtype=False)
    rugged_scores(got)  # a valid private side on its own


def test_private_from_run_ignores_tasks_without_groups(tmp_path):
    tasks = {**RUN_TASKS, "t6": (None, {"A": 1.0, "B": 1.0, "C": 1.0})}
    pd.testing.assert_frame_equal(private_from_run(write_run(tmp_path, tasks)), table(RUN_PRIVATE),
                                  check_dtype=False)


@pytest.mark.parametrize(("case", "message"), [
    ("no_log", "has no events.jsonl: give the folder of a finished SCP run"),
    ("unfinished", "is not a finished run"),
    ("no_groups", "its tasks carry no type and domain group(s), so it is not an SCP run"),
    ("no_domain", "its tasks carry no domain group(s)"),
    ("all_void", "no task with type and domain has a non-void estimate"),
])
def test_private_from_run_refuses_what_is_not_a_finished_scp_run(tmp_path, case, message):
    if case == "unfinished":
        write_run(tmp_path, finished=False)
    elif case == "no_groups":
        write_run(tmp_path, {k: (None, ps) for k, (_, ps) in RUN_TASKS.items()}, game="cop")
    elif case == "no_domain":
        write_run(tmp_path, {k: ({"type": g["type"]}, ps) for k, (g, ps) in RUN_TASKS.items()})
    elif case == "all_void":
        write_run(tmp_path, {k: (g, {p: None for p in ps}) for k, (g, ps) in RUN_TASKS.items()})
    with pytest.raises(ValueError, match=re.escape(message)):
        private_from_run(tmp_path)


def test_private_from_a_real_scp_run_matches_its_estimates(tmp_path):
    """A tiny real game=scp run: each row is the mean of the player's non-void estimates over
    the tasks whose event carries that type and domain."""
    from skate.config import compose_config
    from skate.runner import run_game
    from skate.store import read_events

    run_game(compose_config(["game=scp", "game.questions=12", "game.rounds=2", "estimator=fixed_n",
                             "estimator.n=4", "logger=none", "report=false"]), tmp_path)
    events = read_events(tmp_path)
    group = {e["task_id"]: (e["groups"]["type"], e["groups"]["domain"]) for e in events if e["event"] == "task"}
    scores: dict[tuple[str, str], list[float]] = {}
    for e in events:
        if e["event"] == "estimate" and e["p"] is not None:
            t, d = group[e["task_id"]]
            scores.setdefault((e["player"], f"scp-{t}/{d}"), []).append(e["p"])
    got = private_from_run(tmp_path)
    assert len(group) == 12 and len(got) == len(scores) >= 6
    assert set(got["kind"]) == {"private"}
    for row in got.itertuples():
        assert row.score == pytest.approx(statistics.fmean(scores[(row.model, row.benchmark)]))
        assert row.benchmark.endswith("/" + row.domain)


def run_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "skate.rugged", *map(str, args)],
                          check=False, capture_output=True, text=True, cwd=REPO, timeout=60)


def write_csv(path: Path, rows, cols=COLS) -> Path:
    pd.DataFrame(rows, columns=cols).to_csv(path, index=False)
    return path


def test_cli_prints_table_and_writes_out(tmp_path):
    src = write_csv(tmp_path / "scores.csv", ROWS)
    out = tmp_path / "rs.csv"
    res = run_cli(src, "--out", out)
    assert res.returncode == 0, res.stderr
    assert "rs1_abs" in res.stdout and "rs2_norm" in res.stdout
    got = pd.read_csv(out)
    assert list(got.columns) == ["model", "rs1_abs", "rs1_rel", "rs2", "rs2_norm"]
    pd.testing.assert_frame_equal(got, rugged_scores(read_scores(src)), check_dtype=False)


BAD = {
    "missing_column": ([r[:4] for r in ROWS], COLS[:4], "missing column(s) score"),
    "bad_kind": ([("A", "x", "secret", "math", 0.5)], COLS, "kind must be 'public' or 'private'"),
    "score_above_one": ([("A", "x", "private", "math", 73)], COLS, "score outside [0, 1]"),
    "score_negative": ([("A", "x", "private", "math", -0.1)], COLS, "score outside [0, 1]"),
    "score_not_a_number": ([("A", "x", "private", "math", "high")], COLS, "non-numeric score"),
    "no_private": ([("A", "x", "private", "math", 0.5), ("B", "y", "public", "math", 0.5)], COLS,
                   "model(s) B have no private benchmark"),
    "duplicate": ([("A", "x", "private", "math", 0.5), ("A", "x", "private", "math", 0.6)], COLS,
                  "duplicated (model, benchmark) rows: (A, x)"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_cli_bad_input_exits_2_with_one_line(tmp_path, case, capsys):
    rows, cols, message = BAD[case]
    src = write_csv(tmp_path / "scores.csv", rows, cols)
    if case == "bad_kind":  # one case as a user runs it, a process of its own
        res = run_cli(src)
        status, err = res.returncode, res.stderr
    else:  # the others through the same main() in this process: its return value is the exit status
        status, err = main([str(src)]), capsys.readouterr().err
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("skate.rugged: "), err
    assert message in lines[0]
    assert "Traceback" not in err


def test_cli_missing_file_exits_2(tmp_path):
    res = run_cli(tmp_path / "nope.csv")
    assert res.returncode == 2
    assert res.stderr.strip() == f"skate.rugged: {tmp_path / 'nope.csv'}: no such file"


# ----------------------------------------------------------- the CLI with --private-run RUN_DIR
PUBLIC = [
    ("A", "pub_law", "public", "law", 0.9),
    ("A", "pub_cs", "public", "cs", 0.6),
    ("B", "pub_law", "public", "law", 0.5),
    ("B", "pub_cs", "public", "cs", 0.8),
]


def test_cli_private_run_hand_computed(tmp_path):
    run = write_run(tmp_path / "run")
    src = write_csv(tmp_path / "public.csv", PUBLIC)
    out = tmp_path / "rs.csv"
    res = run_cli(src, "--private-run", run, "--out", out)
    assert res.returncode == 0, res.stderr
    rs = {r["model"]: r for r in pd.read_csv(out).to_dict("records")}
    assert list(rs) == ["A", "B", "C"]  # the CSV's models, then the run's other players
    # Private per domain (RUN_PRIVATE): A law (0.75 + 0.25)/2 = 0.5, bio 0; B law 0.625, bio 0.75.
    # A: matched law d(0.9, 0.5) = 2/7 -> 2/1 * 2/7; unmatched cs 0.6 vs bio 0 -> 2 * 1.
    assert rs["A"]["rs1_abs"] == pytest.approx(4 / 7 + 2)
    # B: law d(0.5, 0.625) = -1/9 -> -2/9; unmatched 0.8 vs 0.75 -> 2 * 0.05/1.55 = 2/31.
    assert rs["B"]["rs1_abs"] == pytest.approx(-2 / 9 + 2 / 31)
    # Ranks (worst 1): cloze/law A3 B1.5 C1.5; prediction/bio A1 C2 B3; prediction/law A1 C2 B3;
    # sequencing/bio B1.5 C1.5; pub_law A2 B1; pub_cs A1 B2.
    # A: law pub 2 vs pri (3+1)/2 = 2 -> 0; unmatched cs 1 vs bio 1 -> 0.
    assert rs["A"]["rs1_rel"] == pytest.approx(0)
    # B: law 1 vs (1.5+3)/2 = 2.25 -> 2 * (-1.25/3.25); unmatched cs 2 vs bio (3+1.5)/2 -> 2 * (-0.25/4.25).
    assert rs["B"]["rs1_rel"] == pytest.approx(-10 / 13 - 2 / 17)
    # C is only in the run: no public side, so both RS_I terms are 0; its private scores are equal.
    assert rs["C"]["rs1_abs"] == 0 and rs["C"]["rs1_rel"] == 0
    assert rs["C"]["rs2"] == 0 and rs["C"]["rs2_norm"] == 0
    # rs2 over the private benchmarks (type x domain), not the domain averages.
    assert rs["A"]["rs2"] == pytest.approx(math.sqrt(21) / 12)  # [0.75, 0, 0.25], mean 1/3
    assert rs["A"]["rs2_norm"] == pytest.approx(math.sqrt(21) / 4)
    assert rs["B"]["rs2"] == pytest.approx(statistics.stdev([0.5, 1.0, 0.75, 0.5]))
    assert rs["B"]["rs2_norm"] == pytest.approx(statistics.stdev([0.5, 1.0, 0.75, 0.5]) / 0.6875)


def test_cli_private_run_keeps_the_csv_s_own_private_rows(tmp_path):
    run = write_run(tmp_path / "run")
    own = [("D", "pub_law", "public", "law", 0.7), ("D", "old_law", "private", "law", 0.35),
           ("A", "old_law", "private", "law", 0.5)]
    src = write_csv(tmp_path / "scores.csv", PUBLIC + own)
    out = tmp_path / "rs.csv"
    assert main([str(src), "--private-run", str(run), "--out", str(out)]) == 0
    rs = {r["model"]: r for r in pd.read_csv(out).to_dict("records")}
    assert rs["D"]["rs1_abs"] == pytest.approx(2 * 0.35 / 1.05)  # D is not a player: its own private row
    # A's private law is now the mean of old_law 0.5 and the run's law benchmarks 0.75, 0.25.
    assert rs["A"]["rs1_abs"] == pytest.approx(2 * (0.9 - 0.5) / 1.4 + 2)
    assert rs["A"]["rs2"] == pytest.approx(statistics.stdev([0.75, 0.0, 0.25, 0.5]))


@pytest.mark.parametrize(("case", "message"), [
    ("stranger", "model(s) Z are not players of the run"),
    ("not_a_run", "has no events.jsonl: give the folder of a finished SCP run (game=scp)"),
    ("unfinished", "is not a finished run"),
    ("not_scp", "so it is not an SCP run"),
    ("clash", "duplicated (model, benchmark) rows: (A, scp-cloze/law)"),
])
def test_cli_private_run_bad_input_exits_2_with_one_line(tmp_path, capsys, case, message):
    """In-process (``main``), as the subprocess tests above already check the exit path."""
    rows = PUBLIC
    run = tmp_path / "run"
    run.mkdir()
    if case == "stranger":
        rows = PUBLIC + [("Z", "pub_law", "public", "law", 0.4)]
    if case in ("stranger", "clash"):
        write_run(run)
    if case == "clash":
        rows = PUBLIC + [("A", "scp-cloze/law", "private", "law", 0.4)]
    if case == "unfinished":
        write_run(run, finished=False)
    if case == "not_scp":
        write_run(run, {k: (None, ps) for k, (_, ps) in RUN_TASKS.items()}, game="cop")
    assert main([str(write_csv(tmp_path / "scores.csv", rows)), "--private-run", str(run)]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("skate.rugged: "), err
    assert message in lines[0]
    if case == "stranger":
        assert "model names must match the run's players (A, B, C)" in lines[0]

"""Rugged Scores (skate.rugged): hand-worked values on a tiny table, and the CLI's bad-input errors."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from skate.rugged import private_from_run, read_scores, rugged_scores

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


def test_private_from_run_is_an_unimplemented_hook(tmp_path):
    with pytest.raises(NotImplementedError, match="game=scp"):
        private_from_run(tmp_path)


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
def test_cli_bad_input_exits_2_with_one_line(tmp_path, case):
    rows, cols, message = BAD[case]
    res = run_cli(write_csv(tmp_path / "scores.csv", rows, cols))
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("skate.rugged: "), res.stderr
    assert message in lines[0]
    assert "Traceback" not in res.stderr


def test_cli_missing_file_exits_2(tmp_path):
    res = run_cli(tmp_path / "nope.csv")
    assert res.returncode == 2
    assert res.stderr.strip() == f"skate.rugged: {tmp_path / 'nope.csv'}: no such file"

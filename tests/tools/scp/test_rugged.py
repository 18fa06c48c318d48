"""Rugged Scores (skate rugged): hand-worked values on a tiny table, the private side from an SCP
run folder, the CLI's bad-input errors, each choice between the paper's and rs.py's way
(--pairing, --unmatched, --rank, --rs2-over, --rs2-divisor, --rs2-norm) on a hand-worked example,
and the plot."""

from __future__ import annotations

import math
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import skate
from skate.tools.scp.rugged import CHOICES, Choices, main, private_from_run, read_scores, rugged_scores
from tests.report.test_data_groups import RUN_TASKS, write_run

REPO = Path(__file__).resolve().parents[3]

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
    rows = [("A", "pl", "public", "law", 0.6), ("A", "cb", "private", "bio", 0.2), ("A", "cc", "private", "cs", 0.4)]
    # unmatched private mean of domain values (0.2 + 0.4) / 2 = 0.3 -> 2 * 0.3 / 0.9
    assert by_model(rows)["A"]["rs1_abs"] == pytest.approx(2 / 3)


# ----------------------------------------------------------------- the private side from a run
# RUN_TASKS (tests/report/test_data_groups.py): a built SCP benchmark written by hand.
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
    pd.testing.assert_frame_equal(private_from_run(write_run(tmp_path, tasks)), table(RUN_PRIVATE), check_dtype=False)


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("no_log", "has no events.jsonl: give the folder of a finished SCP run"),
        ("unfinished", "is not a finished run"),
        ("no_groups", "its tasks carry no type and domain group(s), so it is not an SCP run"),
        ("no_domain", "its tasks carry no domain group(s)"),
        ("all_void", "no task with type and domain has a non-void estimate"),
    ],
)
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
    from skate.runlog.files import read_events
    from skate.runner import run_game

    run_game(
        skate.config(
            game="scp",
            estimator="fixed_n",
            logger="none",
            values={"game.questions": 12, "game.rounds": 2, "estimator.n": 4, "report": False},
        ),
        tmp_path,
    )
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
    return subprocess.run(
        [sys.executable, "-m", "skate", "rugged", *map(str, args)],
        check=False,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )


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
    "no_private": (
        [("A", "x", "private", "math", 0.5), ("B", "y", "public", "math", 0.5)],
        COLS,
        "model(s) B have no private benchmark",
    ),
    "duplicate": (
        [("A", "x", "private", "math", 0.5), ("A", "x", "private", "math", 0.6)],
        COLS,
        "duplicated (model, benchmark) rows: (A, x)",
    ),
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
    own = [
        ("D", "pub_law", "public", "law", 0.7),
        ("D", "old_law", "private", "law", 0.35),
        ("A", "old_law", "private", "law", 0.5),
    ]
    src = write_csv(tmp_path / "scores.csv", PUBLIC + own)
    out = tmp_path / "rs.csv"
    assert main([str(src), "--private-run", str(run), "--out", str(out)]) == 0
    rs = {r["model"]: r for r in pd.read_csv(out).to_dict("records")}
    assert rs["D"]["rs1_abs"] == pytest.approx(2 * 0.35 / 1.05)  # D is not a player: its own private row
    # A's private law is now the mean of old_law 0.5 and the run's law benchmarks 0.75, 0.25.
    assert rs["A"]["rs1_abs"] == pytest.approx(2 * (0.9 - 0.5) / 1.4 + 2)
    assert rs["A"]["rs2"] == pytest.approx(statistics.stdev([0.75, 0.0, 0.25, 0.5]))


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("stranger", "model(s) Z are not players of the run"),
        ("not_a_run", "has no events.jsonl: give the folder of a finished SCP run (game=scp)"),
        ("unfinished", "is not a finished run"),
        ("not_scp", "so it is not an SCP run"),
        ("clash", "duplicated (model, benchmark) rows: (A, scp-cloze/law)"),
    ],
)
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


# ------------------------------------------------------------- the choices (paper / rs.py)
def scores_with(rows=ROWS, **choices) -> dict[str, dict]:
    return {r["model"]: r for r in rugged_scores(table(rows), Choices(**choices)).to_dict("records")}


def test_the_defaults_are_the_first_value_of_each_choice_and_change_nothing(tmp_path, capsys):
    assert Choices() == Choices(**{name: values[0] for name, values in CHOICES.items()})
    assert Choices().changed() == {}
    pd.testing.assert_frame_equal(rugged_scores(table()), rugged_scores(table(), Choices()))
    src = write_csv(tmp_path / "scores.csv", ROWS)
    assert main([str(src), "--out", str(tmp_path / "plain.csv")]) == 0
    plain = capsys.readouterr().out
    spelled = [f"--{name.replace('_', '-')}={values[0]}" for name, values in CHOICES.items()]
    assert main([str(src), "--out", str(tmp_path / "spelled.csv"), *spelled]) == 0
    assert capsys.readouterr().out == plain.replace("plain.csv", "spelled.csv")  # no "choices:" line
    assert (tmp_path / "plain.csv").read_text() == (tmp_path / "spelled.csv").read_text()


def test_pairing_benchmark_pairs_every_public_with_every_private_benchmark_of_a_domain():
    rs = scores_with(pairing="benchmark")
    # A: pairs (gsm, p_math) d(0.8, 0.5) = 3/13, (mathq, p_math) d(0.6, 0.5) = 1/11,
    #    (hum, p_code) d(0.6, 0.6) = 0: N_p = 3 -> 2/3 * (3/13 + 1/11); unmatched as by default, 1.
    assert rs["A"]["rs1_abs"] == pytest.approx(2 / 3 * (3 / 13 + 1 / 11) + 1)
    # B: (gsm, p_math) 1/11, (mathq, p_math) 1/11, (hum, p_code) d(0.4, 0.2) = 1/3; unmatched 0.
    assert rs["B"]["rs1_abs"] == pytest.approx(2 / 3 * (2 / 11 + 1 / 3))
    # Ranks as in test_rs1_rel_...: A's pairs (2, 1.5) -> 1/7, (1.5, 1.5) and (2, 2) -> 0;
    # unmatched 2 vs 1 -> 2/3.
    assert rs["A"]["rs1_rel"] == pytest.approx(2 / 3 * (1 / 7) + 2 / 3)
    assert rs["A"]["rs2"] == by_model()["A"]["rs2"]  # RS_II does not pair


def test_unmatched_benchmarks_averages_unmatched_benchmarks_one_by_one():
    rows = [
        ("A", "pl", "public", "law", 0.6),
        ("A", "cb", "private", "bio", 0.2),
        ("A", "cb2", "private", "bio", 0.4),
        ("A", "cc", "private", "cs", 0.9),
    ]
    # domains (default): bio (0.2 + 0.4)/2 = 0.3 and cs 0.9 -> 0.6; d(0.6, 0.6) = 0.
    assert by_model(rows)["A"]["rs1_abs"] == pytest.approx(0)
    # benchmarks: (0.2 + 0.4 + 0.9)/3 = 0.5 -> 2 * d(0.6, 0.5) = 2 * 0.1/1.1.
    assert scores_with(rows, unmatched="benchmarks")["A"]["rs1_abs"] == pytest.approx(2 / 11)


# Three models, two matched domains d1, d2 (in this order), unmatched law (public) and bio (private):
# model: pub1/d1, pri1/d1, pub2/d2, pri2/d2, u_pub/law, u_pri/bio.
ARGSORT = {
    "X": (0.9, 0.3, 0.2, 0.6, 0.5, 0.4),
    "Y": (0.5, 0.8, 0.6, 0.1, 0.9, 0.2),
    "Z": (0.7, 0.5, 0.4, 0.9, 0.1, 0.6),
}
ARGSORT_ROWS = [
    row
    for m, v in ARGSORT.items()
    for row in (
        (m, "pub1", "public", "d1", v[0]),
        (m, "pri1", "private", "d1", v[1]),
        (m, "pub2", "public", "d2", v[2]),
        (m, "pri2", "private", "d2", v[3]),
        (m, "u_pub", "public", "law", v[4]),
        (m, "u_pri", "private", "bio", v[5]),
    )
]


def test_rank_argsort_reproduces_rs_py_positions_not_ranks():
    rs = scores_with(ARGSORT_ROWS, rank="argsort")
    # 1 + argsort (models X=0, Y=1, Z=2 from the lowest value up), per column:
    #   public d1 (.9 .5 .7) -> Y Z X -> 2 3 1;  public d2 (.2 .6 .4) -> X Z Y -> 1 3 2
    #   private d1 (.3 .8 .5) -> X Z Y -> 1 3 2; private d2 (.6 .1 .9) -> Y X Z -> 2 1 3
    #   law (.5 .9 .1) -> Z X Y -> 3 1 2;        bio (.4 .2 .6) -> Y X Z -> 2 1 3
    # The columns are reversed (d2 first) and row i goes to model i:
    #   X: pairs (1, 2), (2, 1) -> -1/3 + 1/3 = 0; unmatched 2 * d(3, 2) = 2/5.
    #   Y: pairs (3, 1), (3, 3) -> 2 * (1/2 + 0)/2 = 1/2; unmatched d(1, 1) = 0.
    #   Z: pairs (2, 3), (1, 2) -> 2 * (-1/5 - 1/3)/2 = -8/15; unmatched 2 * d(2, 3) = -2/5.
    assert [rs[m]["rs1_rel"] for m in "XYZ"] == pytest.approx([2 / 5, 1 / 2, -8 / 15 - 2 / 5])
    # With ranks, X (best public on d1 and law, worst private on d1) is the most overestimated:
    # d1 3 vs 1 -> 1/2, d2 1 vs 2 -> -1/3, law 2 vs 2 -> 0 => 2/2 * (1/2 - 1/3) + 0 = 1/6.
    ranked = scores_with(ARGSORT_ROWS)
    assert ranked["X"]["rs1_rel"] == pytest.approx(1 / 6)
    assert [rs[m]["rs1_abs"] for m in "XYZ"] == pytest.approx([ranked[m]["rs1_abs"] for m in "XYZ"])


def test_rs2_over_domains_and_divisor_none():
    rows = [
        ("C", "p1", "private", "cs", 0.2),
        ("C", "p2", "private", "cs", 0.4),
        ("C", "p3", "private", "bio", 0.9),
        ("D", "p1", "private", "cs", 0.4),
    ]
    # domains: cs (0.2 + 0.4)/2 = 0.3, bio 0.9 -> sample std 0.6/sqrt(2), mean 0.6.
    over_domains = scores_with(rows, rs2_over="domains")
    assert over_domains["C"]["rs2"] == pytest.approx(0.6 / math.sqrt(2))
    assert over_domains["C"]["rs2_norm"] == pytest.approx(1 / math.sqrt(2))
    # no divisor (eq. 2 as printed): [0.2, 0.4, 0.9], mean 0.5, squared deviations .09 + .01 + .16.
    printed = scores_with(rows, rs2_divisor="none")
    assert printed["C"]["rs2"] == pytest.approx(math.sqrt(0.26))
    assert printed["C"]["rs2_norm"] == pytest.approx(math.sqrt(0.26) / 0.5)
    assert printed["D"]["rs2"] == 0 and printed["D"]["rs2_norm"] == 0  # one value: no spread, not NaN


def test_rs2_norm_twice_counts_the_matched_domains_private_values_twice():
    rs = scores_with(rs2_norm="twice")
    # A's private: math 0.5 and code 0.6 (matched, twice), bio 0.3 (unmatched, once):
    # [0.5, 0.6, 0.3, 0.5, 0.6], mean 0.5, squared deviations 0 + .01 + .04 + 0 + .01 = .06, / 4.
    assert rs["A"]["rs2_norm"] == pytest.approx(math.sqrt(0.015) / 0.5)
    assert rs["A"]["rs2"] == pytest.approx(math.sqrt(7 / 300))  # rs2 itself unchanged


def test_the_plot_is_written_beside_the_csv(tmp_path, capsys):
    src = write_csv(tmp_path / "scores.csv", ROWS)
    assert main([str(src), "--out", str(tmp_path / "rs.csv"), "--plot", "--rs2-over", "domains"]) == 0
    png = tmp_path / "rs.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    out = capsys.readouterr().out
    assert f"saved {png}" in out and out.rstrip().endswith("choices: --rs2-over domains")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pairing", "domains"], "argument --pairing: invalid choice: 'domains' (choose from 'domain', 'benchmark')"),
        (["--rank", "ranks"], "argument --rank: invalid choice: 'ranks'"),
        (["--rs2-divisor", "n"], "argument --rs2-divisor: invalid choice: 'n' (choose from 'n-1', 'none')"),
        (["--plot"], "--plot without a file name needs --out"),
        (["--plot", "rs.jpg"], "--plot rs.jpg: the file must end in .png, .pdf, .svg"),
        (["--rank", "argsort"], "--rank argsort needs every model to have the same pairs and unmatched benchmarks"),
    ],
)
def test_bad_choices_exit_2_with_one_line(tmp_path, capsys, args, message):
    rows = ROWS[:-1]  # B without p_bio: not the complete table --rank argsort needs
    assert main([str(write_csv(tmp_path / "scores.csv", rows)), *args]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("skate.rugged: "), err
    assert message in lines[0]
    with pytest.raises(ValueError, match="--rs2-norm must be once or twice, got 'double'"):
        Choices(rs2_norm="double")

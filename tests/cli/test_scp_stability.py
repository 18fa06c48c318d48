"""``skate scp stability``: each seed's benchmark played as a game plays it (the runner),
by simulated players or by language models served over HTTP on loopback (skate.llm.fake_server),
with one-line errors for an unknown cohort or a server that is down."""

from __future__ import annotations

import csv
import shutil

import pytest

from skate.cli.scp import main
from skate.games.scp.corpus import SHIPPED_DIR
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.llm.transport import close_pools
from skate.runlog.files import read_events

# Three short PEPs: the fake models find the questions' text in the shipped corpus, so their
# skill shows (on a corpus of their own they would guess).
PEPS = ("pep-0616.rst", "pep-0602.rst", "pep-0203.rst")


@pytest.fixture(autouse=True)
def _close_connections():
    yield
    close_pools()


@pytest.fixture(scope="module")
def peps(tmp_path_factory):
    folder = tmp_path_factory.mktemp("peps")
    for name in PEPS:
        shutil.copy(SHIPPED_DIR / name, folder / name)
    return folder


def llm_cohort(base: str, names=("ace", "low")) -> list[str]:
    models = ", ".join(
        f"{{name: {n}, model: openai/{n}, api_base: '{base}', api_key_env: SKATE_TEST_NO_KEY}}" for n in names
    )
    return ["players.simulated=[]", f"players.llm=[{models}]"]


def table_rows(out: str) -> dict[str, list[str]]:
    lines = out.strip().splitlines()
    assert lines[0] == "accuracy over 2 benchmark seeds (one answer per question; points)"
    return {ln.split()[0]: ln.split()[1:] for ln in lines[3:] if not ln.startswith("largest std")}


def test_language_models_answer_every_seeds_benchmark_through_the_game(peps, tmp_path, capsys):
    with FakeLLMServer({"ace": FakeModel(1.0), "low": FakeModel(0.0)}) as srv:
        code = main(
            [
                "stability",
                str(peps),
                "--seeds",
                "2",
                "--per-doc",
                "2",
                "--out",
                str(tmp_path / "s.csv"),
                "--runs",
                str(tmp_path / "runs"),
                *llm_cohort(srv.api_base),
                f"llm.cache_dir={tmp_path / 'cache'}",
            ]
        )
        by_model = dict(srv.stats.by_model)
    out, err = capsys.readouterr()
    assert code == 0
    # the PEPs are years old: the game's warning, once, after the table (an error would stay one line)
    assert err.count("skate.scp: warning: game=scp: ") == 1 and "more than 183 days old" in err
    with open(tmp_path / "s.csv", encoding="utf-8") as fh:
        per_seed = list(csv.DictReader(fh))
    assert [(r["seed"], r["player"]) for r in per_seed] == [("0", "ace"), ("0", "low"), ("1", "ace"), ("1", "low")]
    questions = [int(r["questions"]) for r in per_seed[::2]]
    assert all(q >= 8 for q in questions) and all(r["void"] == "0" for r in per_seed)
    # every answer came from the server: one greedy call per question, model and seed, plus
    # the run's preflight probe of each model before each seed's game
    assert by_model == {"ace": sum(questions) + 2, "low": sum(questions) + 2}
    acc = {(r["seed"], r["player"]): float(r["accuracy"]) for r in per_seed}
    for seed in ("0", "1"):  # the fake models' skill order, seed by seed
        assert acc[(seed, "ace")] > acc[(seed, "low")] + 20
    # one row per model: mean and spread over the seeds (no true skill for a language model)
    rows = table_rows(out)
    assert list(rows) == ["ace", "low"]
    for name, row in rows.items():
        skill, mean, std, lo, hi, expected = row
        mine = [acc[(s, name)] for s in ("0", "1")]
        assert skill == "-" and expected == "-"
        assert float(mean) == pytest.approx(sum(mine) / 2, abs=0.06)
        assert float(lo) == pytest.approx(min(mine), abs=0.06) and float(hi) == pytest.approx(max(mine), abs=0.06)
        assert float(std) == pytest.approx(abs(mine[0] - mine[1]) / 2**0.5, abs=0.006)
    # each seed was a game run: its events hold the language-model players and their estimates
    for seed in (0, 1):
        events = read_events(tmp_path / "runs" / f"seed-{seed:03d}")
        start = events[0]
        assert [(p["name"], p["model"], p["api_base"]) for p in start["players"]] == [
            (n, f"openai/{n}", srv.api_base) for n in ("ace", "low")
        ]
        assert start["config"]["game"]["build_seed"] == seed
        estimates = [e for e in events if e["event"] == "estimate"]
        assert len(estimates) == 2 * questions[seed] and all(e["n"] == 1 for e in estimates)


def test_the_simulated_cohort_keeps_its_true_skills_and_expected_spread(peps, tmp_path, capsys):
    assert main(["stability", str(peps), "--seeds", "2", "--per-doc", "1", "--out", str(tmp_path / "s.csv")]) == 0
    rows = table_rows(capsys.readouterr().out)  # players=simulated, the default
    assert list(rows) == ["sim-ace", "sim-strong", "sim-good", "sim-fair", "sim-weak", "sim-novice"]
    assert [float(r[0]) for r in rows.values()] == [0.9, 0.78, 0.66, 0.54, 0.42, 0.3]
    assert float(rows["sim-ace"][1]) > float(rows["sim-novice"][1])
    assert all(
        float(r[2]) >= 0 and float(r[3]) <= float(r[1]) <= float(r[4]) and float(r[5]) >= 0 for r in rows.values()
    )
    with open(tmp_path / "s.csv", encoding="utf-8") as fh:
        per_seed = list(csv.DictReader(fh))
    assert len(per_seed) == 12 and all(25 <= float(r["expected"]) <= 100 for r in per_seed)


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("skate.scp: ") and "Traceback" not in err[0], err
    return err[0]


def test_an_unknown_cohort_is_one_line_and_status_2(peps, capsys):
    assert main(["stability", str(peps), "--seeds", "2", "--players", "no_such_cohort"]) == 2
    line = one_line_error(capsys)
    assert "players=no_such_cohort is not an option of players" in line and "fake_local" in line


def test_a_server_that_is_down_is_one_line_and_status_2(peps, tmp_path, capsys, monkeypatch):
    with FakeLLMServer({"ace": FakeModel(0.9)}) as srv:
        base = srv.api_base
    # fake_local (conf/players) points at FAKE_LLM_API_BASE: a server that has stopped
    monkeypatch.setenv("FAKE_LLM_API_BASE", base)
    assert (
        main(
            [
                "stability",
                str(peps),
                "--seeds",
                "2",
                "--per-doc",
                "1",
                "--players",
                "fake_local",
                f"llm.cache_dir={tmp_path / 'cache'}",
            ]
        )
        == 2
    )
    line = one_line_error(capsys)
    assert "seed 0: " in line and "cannot reach" in line and "player 'ace'" in line


@pytest.mark.parametrize(
    "args, message",
    [
        (("--seeds", "1"), "--seeds must be at least 2"),
        (("--seeds", "2", "game.docs=elsewhere"), "game.docs is set by the stability study itself"),
    ],
)
def test_bad_arguments_are_one_line_and_status_2(peps, capsys, args, message):
    assert main(["stability", str(peps), *args]) == 2
    assert message in one_line_error(capsys)


def test_a_missing_folder_is_one_line_and_status_2(tmp_path, capsys):
    assert main(["stability", str(tmp_path / "nope"), "--seeds", "2"]) == 2
    assert "no such folder" in one_line_error(capsys)

"""rating=zerosumeval against ZeroSumEval's own rating code, and its match rules.

The reference is ``calculate_ratings`` from zero-sum-eval 0.3.0 on PyPI, installed by
``scripts/setup.sh test`` into a throwaway environment (``.venv/zse``, not a dependency of skate)
and run on the matches of a skate game as ``skate.ratings.zerosumeval.write_matches`` writes
them (``bench/zerosumeval_rate.py``). ``bench/bench_zerosumeval.py`` runs the comparison on the
default cohort of both games (numbers in docs/benchmarks/ratings.md).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import skate
from skate.games.mathquiz.config import MathQuizConfig
from skate.ratings.bradley_terry import BradleyTerryRating, zerosumeval_draws
from skate.ratings.outcomes import PairRule
from skate.ratings.zerosumeval import run_matches, write_matches
from skate.runlog import events as ev
from skate.runlog.files import format_table
from skate.runlog.records import VOID, Task
from skate.runner import run_game
from skate.settings.build import build_game
from skate.settings.recorded import run_settings
from tests.ratings.test_ratings_backends import feed

ROOT = Path(__file__).resolve().parents[2]
ZSE_PYTHON = ROOT / ".venv" / "zse" / "bin" / "python"
# Four players close enough that, over 100 matches, each wins and loses and no resample of 50
# has a player without a win or a loss: where the maximum-likelihood fit exists everywhere.
RESAMPLES = 50
CLOSE = {
    "report": False,
    "seed": 0,
    "players.simulated.0.skill": 0.75,
    "players.simulated.3.skill": 0.45,
    "rating.bootstrap": RESAMPLES,
}


def close(values=None):
    """The preset's MathQuiz game of the close cohort, settled and checked."""
    return skate.config(values={**CLOSE, **(values or {})}, experiment="zerosumeval", game="mathquiz", logger="none")


@pytest.fixture(scope="module")
def close_run(tmp_path_factory) -> Path:
    """The preset's 100 MathQuiz matches on the close cohort, played once for this file."""
    run = tmp_path_factory.mktemp("zse") / "run"
    run_game(close({"events.rating_updates": "pair"}), run)  # every single update logged
    return run


def zse_ratings(matches: Path, resamples: int, weights: dict[str, float]) -> dict[str, dict]:
    if not ZSE_PYTHON.exists():
        pytest.skip("ZeroSumEval's code is not installed in .venv/zse: run bash scripts/setup.sh test")
    res = subprocess.run(
        [
            str(ZSE_PYTHON),
            str(ROOT / "bench" / "zerosumeval_rate.py"),
            str(matches),
            "--bootstrap",
            str(resamples),
            "--weights",
            *(f"{k}={v}" for k, v in weights.items()),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    return {r["player"]: r for r in json.loads(res.stdout)}


def test_skate_rates_the_matches_as_zerosumevals_own_code_does(close_run, tmp_path):
    cfg = close()
    assert dict(cfg.rating.role_weights) == {"setter": 2.0, "solver": 1.0} and cfg.game.tries == 3
    assert write_matches(close_run, tmp_path / "matches", run_settings(close_run).rating) == 100
    theirs = zse_ratings(tmp_path / "matches", RESAMPLES, dict(cfg.rating.role_weights))
    ours = json.loads((close_run / "ratings.json").read_text())
    assert {r["player"] for r in ours} == set(theirs)
    for r in ours:
        assert "unbounded" not in r and "unbounded_resamples" not in r, r  # the fit exists everywhere
        z = theirs[r["player"]]
        assert abs(r["score"] - z["score"]) <= 2, (r, z)  # the point: the fit on every match
        assert abs(r["lo"] - z["lo"]) <= 10 and abs(r["hi"] - z["hi"]) <= 10, (r, z)  # the same resamples


def test_the_matches_are_every_setter_vs_solver_outcome_in_rating_order(close_run, tmp_path):
    rating = run_settings(close_run).rating  # the run's own rule: setter_vs_solver
    matches = run_matches(close_run, rating)
    updates = ev.read_run(close_run).of(ev.RatingUpdated)
    assert [(m.task_id, m.a, m.b, m.result) for m in matches] == [(u.task_id, u.a, u.b, u.result) for u in updates]
    write_matches(close_run, tmp_path / "m", rating)
    first = json.loads((tmp_path / "m" / "matches" / "000" / "scores.json").read_text())
    m = matches[0]
    assert first == {
        m.a: {"score": int(m.result == 1.0), "role": "setter" if m.setter == m.a else "solver", "attempts": 0},
        m.b: {"score": int(m.result == 0.0), "role": "setter" if m.setter == m.b else "solver", "attempts": 0},
    }


def test_the_resamples_are_the_ones_zerosumeval_draws():
    # ZeroSumEval: np.random.seed(1), then battles.sample(frac=1.0, replace=True) per resample
    battles = pd.DataFrame({"match": range(37)})
    np.random.seed(1)
    theirs = [battles.sample(frac=1.0, replace=True)["match"].to_numpy() for _ in range(25)]
    assert np.array_equal(zerosumeval_draws(37, 25, 1), np.stack(theirs))


# ------------------------------------------------------------------------------ unbounded ratings
NEVER_WINS = [
    (f"t{i}", a, b, r)
    for i, (a, b, r) in enumerate(
        [("a", "b", 1), ("b", "a", 1), ("a", "c", 1), ("b", "c", 1), ("a", "b", 0), ("c", "a", 0), ("b", "c", 1)] * 3
    )
]


def test_a_player_with_no_wins_is_flagged_with_what_the_prior_does():
    rows = feed(BradleyTerryRating(bootstrap=100, scale="zerosumeval"), ["a", "b", "c"], NEVER_WINS)
    assert rows["c"].unbounded == (
        f"rating unbounded: 0 wins in 12 matches; the prior (rating.alpha=0.01 "
        f"pseudo-wins each way) holds it at {rows['c'].score:.0f}"
    )
    assert rows["c"].unbounded_resamples == 100 and rows["c"].resamples == 100  # none of them has a win either
    assert "unbounded" not in rows["a"].extra and "unbounded" not in rows["b"].extra
    table = format_table([r.as_dict() for r in rows.values()])
    assert f"* c: {rows['c'].unbounded}" in table.splitlines()
    assert "c in 100 of 100" in table.splitlines()[-1]
    # a stronger prior pulls it in: the number is the prior's doing
    strong = feed(BradleyTerryRating(bootstrap=20, scale="zerosumeval", alpha=1.0), ["a", "b", "c"], NEVER_WINS)
    assert strong["c"].score > rows["c"].score + 50


# ------------------------------------------------------------------------------ match rules
def test_own_unsolved_is_a_loss_or_a_tie():
    for setting, result in (("loss", 1.0), ("tie", 0.5)):
        rule = PairRule("setter_vs_solver", own_unsolved=setting)
        unsolved = rule.forfeit_outcomes("r001-s", "s", ["x", "y"], ["x", "s", "y"], unsolved=True)
        assert [(o.a, o.b, o.result) for o in unsolved] == [("x", "s", result), ("s", "y", 1.0 - result)]
        # a malformed or rule-breaking task stays a loss whatever the setting
        other = rule.forfeit_outcomes("r001-s", "s", ["x"], ["x", "s"], unsolved=False)
        assert [o.result for o in other] == [1.0]
    assert ev.unsolved_own(
        [
            ev.AttemptMade(round=1, player="s", reason="malformed"),
            ev.AttemptMade(round=1, player="s", reason="unsolved"),
        ]
    )
    assert not ev.unsolved_own(
        [
            ev.AttemptMade(round=1, player="s", reason="unsolved"),
            ev.AttemptMade(round=1, player="s", reason="malformed"),
        ]
    )


def test_the_preset_sets_each_games_rules():
    pyjail = skate.config(experiment="zerosumeval", game="pyjail")
    assert (pyjail.rating.own_unsolved, pyjail.game.tries, dict(pyjail.rating.role_weights)) == (
        "tie",
        5,
        {"setter": 2.0, "solver": 1.0},
    )
    mathquiz = skate.config(experiment="zerosumeval", game="mathquiz")
    assert (mathquiz.rating.own_unsolved, mathquiz.game.tries) == ("loss", 3)
    plain = skate.config(game="mathquiz", rating="zerosumeval")  # skate's own rules stay the default
    assert (plain.rating.own_unsolved, plain.game.tries, dict(plain.rating.role_weights)) == (
        "loss",
        1,
        {"setter": 1.0, "solver": 1.0},
    )


def test_role_weights_count_a_setters_win_by_its_weight():
    # s beats x twice as setter, x beats s once as setter: with the setter's wins counted 2,
    # the matrix holds s over x 4, x over s 2.
    r = BradleyTerryRating(outcome="setter_vs_solver", role_weights={"setter": 2.0, "solver": 1.0})
    r.add_players(["s", "x"])
    for task, setter, solved in (("t1", "s", {"x": 0.0}), ("t2", "s", {"x": 0.1}), ("t3", "x", {"s": 0.0})):
        r.update(task, {**solved, setter: 1.0}, setter=setter)
    m = r.task_matrices(["s", "x"]).sum(axis=0).reshape(2, 2)
    assert m.tolist() == [[0.0, 4.0], [2.0, 0.0]]
    with pytest.raises(ValueError, match="rating.role_weights"):
        BradleyTerryRating(role_weights={"teacher": 2.0})


def test_mathquiz_tries_win_a_sample_once_one_answer_is_right():
    game, two = (build_game(MathQuizConfig(tries=k)) for k in (3, 2))
    task = Task("r001-s", 1, "s", "What is 6 times 7?", "42")
    script = {"n": 0}

    def third_time_lucky(queries, rng):  # wrong, unreadable, then right: each sample's third try
        script["n"] += 1
        return [{1: "41", 2: None, 3: "the answer is 42"}[script["n"]]] * len(queries)

    assert game.play(task, third_time_lucky, 4, np.random.default_rng(0)) == [True] * 4 and script["n"] == 3
    script["n"] = 0
    assert two.play(task, third_time_lucky, 4, np.random.default_rng(0)) == [False] * 4
    assert game.play(task, lambda q, rng: [VOID] * len(q), 2, np.random.default_rng(0)) == [VOID, VOID]

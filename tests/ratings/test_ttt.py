"""TrueSkill Through Time: one fit of every outcome, so the order of games does not matter."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import trueskillthroughtime as ttt

from skate.ratings.base import rank_by_intervals
from skate.ratings.outcomes import PairOutcome
from skate.ratings.trueskill_backend import TrueSkillRating
from skate.ratings.ttt import TrueSkillThroughTimeRating, task_round
from tests.ratings.test_ratings_backends import feed

BETA = 25.0 / 6.0


def simulate(skills, n, seed, rounds=1, p_draw=0.10):
    """n games between random pairs under TrueSkill's own model: performance = skill + N(0, β²),
    a draw when the performances are closer than the margin that p_draw sets."""
    rng = np.random.default_rng(seed)
    names = list(skills)
    margin = ttt.compute_margin(p_draw, math.sqrt(2) * BETA)
    games = []
    for k in range(n):
        a, b = rng.choice(len(names), 2, replace=False)
        d = skills[names[a]] - skills[names[b]] + rng.normal(0, math.sqrt(2) * BETA)
        games.append(
            (f"r{1 + k * rounds // n:03d}-q{k:04d}", names[a], names[b], 0.5 if abs(d) < margin else float(d > 0))
        )
    return games


TRUE = {"e": 19.0, "d": 22.0, "c": 25.0, "b": 28.0, "a": 31.0}  # centred on the prior's 25


# ------------------------------------------------------------------------ order independence
def test_the_order_of_outcomes_does_not_change_the_table_but_changes_trueskills():
    games = simulate({"a": 29.0, "b": 26.0, "c": 24.0, "d": 21.0}, 160, seed=3)
    shuffled = [games[i] for i in np.random.default_rng(0).permutation(len(games))]
    fwd = feed(TrueSkillThroughTimeRating(epsilon=1e-7), list("abcd"), games)
    mixed = feed(TrueSkillThroughTimeRating(epsilon=1e-7), list("abcd"), shuffled)
    for n in "abcd":
        assert fwd[n].mu == pytest.approx(mixed[n].mu, abs=1e-6)
        assert fwd[n].sigma == pytest.approx(mixed[n].sigma, abs=1e-6)
        assert fwd[n].rank == mixed[n].rank
    # the defaults (epsilon 1e-4) agree to well within the intervals too
    loose = feed(TrueSkillThroughTimeRating(), list("abcd"), shuffled)
    assert max(abs(loose[n].mu - fwd[n].mu) for n in "abcd") < 1e-3
    # TrueSkill, online, gives another table for the same games in another order
    ts_fwd = feed(TrueSkillRating(), list("abcd"), games)
    ts_mixed = feed(TrueSkillRating(), list("abcd"), shuffled)
    assert max(abs(ts_fwd[n].mu - ts_mixed[n].mu) for n in "abcd") > 0.1


@pytest.mark.parametrize("time, gamma", [("none", 0.0), ("round", 1.0)])
def test_the_fit_is_the_packages_own_fixed_point(time, gamma):
    """The backend steers the sweeps towards the overall level the prior sets; the answer must be
    the one the package reaches alone when left to run to convergence (hundreds of sweeps)."""
    games = simulate({"a": 28.0, "b": 25.0, "c": 22.0}, 40, seed=5, rounds=5)
    backend = TrueSkillThroughTimeRating(time=time, gamma=gamma, epsilon=1e-10, iterations=200)
    rows = feed(backend, list("abc"), games)
    assert backend.fit_info["sweeps"] < 20 and backend.fit_info["batches"] == (5 if time == "round" else 1)
    times = [task_round(t) for t, *_ in games] if time == "round" else [0] * len(games)
    history = ttt.History(
        [[[a], [b]] for _, a, b, _ in games],
        [[r, 1 - r] for *_, r in games],
        times=times,
        mu=25.0,
        sigma=25.0 / 3.0,
        beta=BETA,
        gamma=gamma,
        p_draw=0.10,
    )
    _, sweeps = history.convergence(epsilon=1e-10, iterations=2000, verbose=False)
    assert sweeps > 50  # the package alone is slow to get there
    for n in "abc":
        post = history.learning_curves()[n][-1][1]
        assert rows[n].mu == pytest.approx(post.mu, abs=1e-6)
        assert rows[n].sigma == pytest.approx(post.sigma, abs=1e-6)
    if time == "none":
        assert np.mean([rows[n].mu for n in "abc"]) == pytest.approx(25.0, abs=1e-6)


def test_time_round_without_drift_is_the_same_model():
    games = simulate(TRUE, 200, seed=2, rounds=10)
    one = feed(TrueSkillThroughTimeRating(epsilon=1e-7), list(TRUE), games)
    steps = feed(TrueSkillThroughTimeRating(time="round", gamma=0.0, epsilon=1e-7, iterations=200), list(TRUE), games)
    for n in TRUE:
        assert steps[n].mu == pytest.approx(one[n].mu, abs=1e-4)
        assert steps[n].sigma == pytest.approx(one[n].sigma, abs=1e-4)


# ------------------------------------------------------------------------------ simple cases
def test_an_always_winner_ranks_first_and_a_draw_only_pair_ends_level():
    games = [(f"r001-t{i}", "a", x, 1.0) for i, x in enumerate("bcbcbc")]
    games += [("r002-t1", "b", "c", 1.0), ("r002-t2", "c", "b", 1.0)]
    rows = feed(TrueSkillThroughTimeRating(), list("abc"), games)
    assert rows["a"].rank == 1 and rows["a"].mu > rows["b"].mu + 2
    assert rows["b"].mu == pytest.approx(rows["c"].mu, abs=1e-4)  # one win each: level

    draws = feed(TrueSkillThroughTimeRating(), ["x", "y"], [(f"r001-t{i}", "x", "y", 0.5) for i in range(6)])
    assert draws["x"].mu == pytest.approx(draws["y"].mu, abs=1e-9)
    assert draws["x"].mu == pytest.approx(25.0, abs=1e-9)
    assert draws["x"].sigma < 25.0 / 3.0  # the draws taught something: the two are close


def test_a_draw_pulls_two_players_together():
    base = [("r001-t1", "a", "b", 1.0), ("r001-t2", "a", "b", 1.0)]
    apart = feed(TrueSkillThroughTimeRating(), ["a", "b"], base)
    closer = feed(TrueSkillThroughTimeRating(), ["a", "b"], base + [("r001-t3", "a", "b", 0.5)] * 3)
    assert 0 < closer["a"].mu - closer["b"].mu < apart["a"].mu - apart["b"].mu


def test_table_interval_idle_player_record_and_cache():
    backend = TrueSkillThroughTimeRating()
    rows = feed(backend, ["a", "b", "idle"], [("r001-t1", "a", "b", 1.0)])
    a = rows["a"]
    assert (a.lo, a.hi) == (pytest.approx(a.mu - 2 * a.sigma), pytest.approx(a.mu + 2 * a.sigma))
    assert a.score == a.mu and a.games == 1 and set(a.extra) == {"mu", "sigma", "games"}
    idle = rows["idle"]
    assert (idle.mu, idle.sigma, idle.games, idle.rank) == (25.0, 25.0 / 3.0, 0, None) and idle.no_data
    # the fit is kept until an outcome is added
    fit = backend.fit()
    assert backend.fit() is fit
    record = backend.apply(PairOutcome("r001-t2", "a", "b", 0.9, 0.1, 1.0))
    assert record == {"update": 2, "task_id": "r001-t2", "a": "a", "b": "b", "p_a": 0.9, "p_b": 0.1, "result": 1.0}
    backend.history.append(PairOutcome("r001-t2", "a", "b", 0.9, 0.1, 1.0))
    assert backend.fit() is not fit and backend.fit_info["outcomes"] == 2


def test_update_makes_outcomes_by_the_rule():
    backend = TrueSkillThroughTimeRating(outcome="absolute", p_thresh=0.5, record_pairs=True)
    backend.add_players(["a", "b", "c"])
    records = backend.update("r001-a", {"a": 0.9, "b": 0.2, "c": 0.1}).pairs
    assert [(r["a"], r["b"], r["result"]) for r in records] == [("a", "b", 1.0), ("a", "c", 1.0), ("b", "c", 0.5)]
    rows = {r.player: r for r in backend.table()}
    assert rows["a"].rank == 1 and rows["b"].mu == pytest.approx(rows["c"].mu, abs=1e-6)


# -------------------------------------------------------------------------- known strengths
def test_recovers_known_strengths():
    rows = feed(TrueSkillThroughTimeRating(), list(TRUE), simulate(TRUE, 400, seed=11))
    assert [r.player for r in sorted(rows.values(), key=lambda r: r.rank)] == list("abcde")
    for n, s in TRUE.items():  # same model, level anchored at the prior's 25: the intervals hold the truth
        assert rows[n].lo < s < rows[n].hi
    # no interval lies entirely above that of a truly better player
    ranks = rank_by_intervals({n: (r.lo, r.hi) for n, r in rows.items()})
    assert all(ranks[x] <= ranks[y] for x in TRUE for y in TRUE if TRUE[x] > TRUE[y])
    assert rows["a"].lo > rows["e"].hi and rows["a"].lo > rows["c"].hi


def test_order_confidence_says_how_sure_each_adjacent_pair_is():
    backend = TrueSkillThroughTimeRating()
    feed(backend, list(TRUE) + ["idle"], simulate(TRUE, 400, seed=11))
    order = backend.order_confidence()
    assert [(p.above, p.below) for p in order] == [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e")]
    assert all(p.confidence > 0.5 for p in order)
    assert all(p.confidence > 0.95 for p in order)  # 3 points apart with 400 games: clear
    rows = {r.player: r for r in backend.table()}
    a, b = rows["a"], rows["b"]
    expected = 0.5 * math.erfc(-(a.mu - b.mu) / math.sqrt(2 * (a.sigma**2 + b.sigma**2)))
    assert order[0].confidence == pytest.approx(expected)
    # a coin-flip pair is not sure
    even = TrueSkillThroughTimeRating()
    feed(even, ["x", "y"], [("r001-1", "x", "y", 1.0), ("r001-2", "x", "y", 0.0), ("r001-3", "x", "y", 1.0)])
    assert 0.5 <= even.order_confidence()[0].confidence < 0.8


# ----------------------------------------------------------------------------------- dynamics
def late_bloomer_games():
    """a > b > c throughout; "late" loses to everyone in rounds 1-10 and beats everyone after."""
    games = []
    for r in range(1, 21):
        games += [
            (f"r{r:03d}-a", "a", "b", 1.0),
            (f"r{r:03d}-a", "b", "c", 1.0),
            (f"r{r:03d}-b", "a", "c", 1.0),
            (f"r{r:03d}-c", "b", "a", 0.0 if r % 4 else 1.0),
        ]
        games += [(f"r{r:03d}-late", "late", x, 1.0 if r > 10 else 0.0) for x in "abc"]
    return games


def test_time_round_lets_a_late_improver_climb():
    fixed = feed(TrueSkillThroughTimeRating(), ["a", "b", "c", "late"], late_bloomer_games())
    drift = feed(
        TrueSkillThroughTimeRating(time="round", gamma=1.0, iterations=100),
        ["a", "b", "c", "late"],
        late_bloomer_games(),
    )
    assert fixed["late"].rank > 1  # half its games lost: the fixed model puts it mid-table
    assert drift["late"].rank == 1  # at its last round, it is the best
    assert drift["late"].mu > fixed["late"].mu + 3
    assert [drift[n].rank for n in "abc"] == [2, 3, 4]
    # with drift the recent rounds count more, so the last-round estimate is less sure
    assert drift["a"].sigma > fixed["a"].sigma


def test_task_round_and_fallback_to_one_batch():
    assert task_round("r003-player") == 3 and task_round("r003-q0012") == 3
    assert task_round("r1000-x") == 1000 and task_round("r012") == 12
    assert task_round("t1") is None and task_round("round3-x") is None
    backend = TrueSkillThroughTimeRating(time="round", gamma=1.0)
    with pytest.warns(RuntimeWarning, match="names no round"):
        rows = feed(backend, ["a", "b"], [("r001-a", "a", "b", 1.0), ("t2", "a", "b", 1.0)])
    assert backend.fit_info["batches"] == 1 and rows["a"].rank == 1


def test_time_round_batches_by_round():
    backend = TrueSkillThroughTimeRating(time="round", gamma=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        feed(backend, ["a", "b"], [("r001-a", "a", "b", 1.0), ("r001-b", "a", "b", 1.0), ("r004-a", "a", "b", 0.0)])
    assert backend.fit_info["batches"] == 2


# ----------------------------------------------------------------------------------- settings
@pytest.mark.parametrize(
    "kwargs, key",
    [
        ({"time": "x"}, "rating.time='x': give none or round"),
        ({"gamma": -0.1}, "rating.gamma"),
        ({"sigma": 0.0}, "rating.sigma"),
        ({"beta": -1.0}, "rating.beta"),
        ({"mu": float("nan")}, "rating.mu"),
        ({"draw_probability": 1.0}, "rating.draw_probability"),
        ({"draw_probability": "auto"}, "rating.draw_probability"),
        ({"iterations": 0}, "rating.iterations"),
        ({"iterations": 2.5}, "rating.iterations"),
        ({"epsilon": 0.0}, "rating.epsilon"),
    ],
)
def test_bad_settings_name_their_key(kwargs, key):
    with pytest.raises(ValueError, match=key.replace("(", r"\(")):
        TrueSkillThroughTimeRating(**kwargs)


def test_draw_probability_zero_still_models_draws():
    """The package refuses draws at p_draw = 0 and fails on them below about 0.01 (a draw
    between two new players raised "math domain error" at 1e-4); the backend clamps to 0.01."""
    for p in (0.0, 1e-4):
        backend = TrueSkillThroughTimeRating(draw_probability=p)
        rows = feed(
            backend, ["x", "y", "z"], [("r001-t", "x", "y", 0.5), ("r001-u", "x", "z", 1.0), ("r001-v", "y", "z", 0.5)]
        )
        assert backend.p_draw == 0.01
        assert rows["x"].mu > rows["y"].mu > rows["z"].mu


def test_a_fit_that_does_not_converge_says_so():
    backend = TrueSkillThroughTimeRating(iterations=1, epsilon=1e-12)
    with pytest.warns(RuntimeWarning, match="rating.iterations=1"):
        feed(backend, list(TRUE), simulate(TRUE, 100, seed=1))
    assert backend.fit_info["converged"] is False and backend.fit_info["sweeps"] == 1

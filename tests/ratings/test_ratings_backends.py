"""Bradley–Terry, Elo and TrueSkill's options on small cases checked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skate.ratings.base import rank_by_intervals
from skate.ratings.bradley_terry import BradleyTerryRating
from skate.ratings.elo import EloRating
from skate.ratings.outcomes import PairOutcome
from skate.ratings.trueskill_backend import TrueSkillRating


def feed(backend, players, games):
    """games: (task_id, a, b, result) with result 1 = a wins, 0 = b wins, 0.5 = draw."""
    backend.add_players(players)
    for task, a, b, result in games:
        backend.games[a] += 1
        backend.games[b] += 1
        o = PairOutcome(task, a, b, 0.0, 0.0, result)
        backend.history.append(o)
        backend.apply(o)
    return {r.player: r for r in backend.table()}


# ------------------------------------------------------------------------------ Bradley–Terry
def test_bt_score_difference_is_the_log_odds_of_the_wins():
    rows = feed(
        BradleyTerryRating(alpha=1e-6, bootstrap=50),
        ["a", "b"],
        [("t1", "a", "b", 1), ("t2", "a", "b", 1), ("t3", "a", "b", 1), ("t4", "a", "b", 0)],
    )
    assert rows["a"].score - rows["b"].score == pytest.approx(math.log(3), abs=1e-3)
    assert rows["a"].score == pytest.approx(-rows["b"].score)  # centred on 0


def test_bt_a_draw_is_half_a_win_each_way():
    rows = feed(
        BradleyTerryRating(alpha=1e-6, bootstrap=50),
        ["a", "b"],
        [("t1", "a", "b", 1), ("t2", "a", "b", 0.5), ("t3", "a", "b", 0.5)],
    )
    # a: 1 + 0.5 + 0.5 = 2 wins, b: 0.5 + 0.5 = 1 win
    assert rows["a"].score - rows["b"].score == pytest.approx(math.log(2), abs=1e-3)
    even = feed(BradleyTerryRating(alpha=1e-6, bootstrap=50), ["a", "b"], [("t1", "a", "b", 0.5)])
    assert even["a"].score == pytest.approx(even["b"].score)


def test_bt_an_always_winner_stays_finite_and_ranks_first():
    games = [(f"t{i}", "a", x, 1) for i, x in enumerate(["b", "c", "b", "c"])] + [
        ("t9", "b", "c", 1),
        ("t10", "c", "b", 1),
    ]
    rows = feed(BradleyTerryRating(alpha=0.01, bootstrap=100), ["a", "b", "c"], games)
    assert math.isfinite(rows["a"].score) and rows["a"].score > rows["b"].score
    assert rows["a"].rank == 1 and rows["b"].score == pytest.approx(rows["c"].score, abs=1e-6)


def test_bt_a_player_with_no_games_has_no_score_interval_or_rank():
    rows = feed(BradleyTerryRating(bootstrap=50), ["a", "b", "idle"], [("t1", "a", "b", 1), ("t2", "a", "b", 0)])
    assert (rows["idle"].score, rows["idle"].lo, rows["idle"].hi, rows["idle"].rank) == (None, None, None, None)
    assert rows["idle"].games == 0 and rows["a"].rank == 1


def test_bt_bootstrap_resamples_whole_tasks():
    """All outcomes in one task: every resample is that task, so the interval has no width;
    the same outcomes spread over tasks give a real interval."""
    pairs = [("a", "b", 1), ("a", "c", 1), ("b", "c", 1), ("b", "a", 0), ("c", "a", 0.5)]
    one = feed(BradleyTerryRating(bootstrap=200), ["a", "b", "c"], [("t", *p) for p in pairs] * 4)
    assert all(r.lo == pytest.approx(r.score) == pytest.approx(r.hi) for r in one.values())
    many = feed(
        BradleyTerryRating(bootstrap=200),
        ["a", "b", "c"],
        [(f"t{i}-{k}", *p) for k in range(4) for i, p in enumerate(pairs)],
    )
    assert all(r.hi - r.lo > 0.1 for r in many.values())


def test_bt_bootstrap_is_seeded():
    rng = np.random.default_rng(1)
    games = [(f"t{i}", *rng.choice(["a", "b", "c", "d"], 2, replace=False), float(rng.integers(2))) for i in range(60)]
    first = feed(BradleyTerryRating(bootstrap=100, seed=7), list("abcd"), games)
    again = feed(BradleyTerryRating(bootstrap=100, seed=7), list("abcd"), games)
    other = feed(BradleyTerryRating(bootstrap=100, seed=8), list("abcd"), games)
    assert [(r.lo, r.hi) for r in first.values()] == [(r.lo, r.hi) for r in again.values()]
    assert [(r.lo, r.hi) for r in first.values()] != [(r.lo, r.hi) for r in other.values()]
    assert [r.score for r in first.values()] == [r.score for r in other.values()]  # point estimates: all data


def test_rank_is_one_plus_the_players_entirely_above():
    ranks = rank_by_intervals({"a": (2.0, 3.0), "b": (1.5, 2.5), "c": (0.0, 1.0), "d": None})
    assert ranks == {"a": 1, "b": 1, "c": 3, "d": None}


def test_bt_does_not_depend_on_the_order_of_games():
    games = [("t1", "a", "b", 1), ("t2", "b", "c", 1), ("t3", "c", "a", 0), ("t4", "a", "b", 0.5)]
    fwd = feed(BradleyTerryRating(bootstrap=50), list("abc"), games)
    back = feed(BradleyTerryRating(bootstrap=50), list("abc"), games[::-1])
    assert {n: r.score for n, r in fwd.items()} == pytest.approx({n: r.score for n, r in back.items()})


# ----------------------------------------------------------------------------------------- Elo
def test_elo_updates_by_k_times_surprise():
    rows = feed(EloRating(k=16), ["a", "b"], [("t1", "a", "b", 1)])
    assert rows["a"].score == pytest.approx(1508) and rows["b"].score == pytest.approx(1492)
    elo = EloRating(k=32, scale=400)
    elo.add_players(["x", "y"])
    elo.ratings.update(x=1600.0, y=1400.0)
    elo.apply(PairOutcome("t", "x", "y", 0, 0, 0.5))
    expected = 1 / (1 + 10 ** (-200 / 400))
    assert elo.ratings["x"] == pytest.approx(1600 + 32 * (0.5 - expected))
    assert elo.ratings["x"] + elo.ratings["y"] == pytest.approx(3000)


def test_elo_table_has_no_interval_and_idle_players_keep_the_initial_rating():
    rows = feed(EloRating(), ["a", "b", "idle"], [("t1", "a", "b", 0)])
    assert rows["b"].rank == 1 and rows["idle"].score == 1500 and rows["idle"].lo is None
    with pytest.raises(ValueError, match="k"):
        EloRating(k=0)


# ------------------------------------------------------------------------------------ TrueSkill
def test_trueskill_interval_is_two_sigma_and_idle_players_keep_the_prior():
    rows = feed(TrueSkillRating(), ["a", "b", "idle"], [("t1", "a", "b", 1)])
    a = rows["a"]
    assert (a.lo, a.hi) == (pytest.approx(a.mu - 2 * a.sigma), pytest.approx(a.mu + 2 * a.sigma))
    assert rows["idle"].mu == 25.0 and rows["idle"].games == 0


def test_trueskill_auto_draw_probability_follows_the_observed_rate():
    ts = TrueSkillRating(draw_probability="auto")
    feed(ts, ["a", "b"], [(f"t{i}", "a", "b", 0.5 if i % 4 == 0 else 1) for i in range(40)])
    assert ts.env.draw_probability == pytest.approx(10 / 40)
    with pytest.raises(ValueError, match="auto"):
        TrueSkillRating(draw_probability="sometimes")


def test_trueskill_mean_over_the_last_updates_of_mu_and_sigma():
    games = [("t1", "a", "b", 1), ("t2", "a", "b", 1), ("t3", "a", "b", 0)]
    plain = TrueSkillRating()
    states = []  # (mu, sigma) of a after each update, by hand
    plain.add_players(["a", "b"])
    for task, a, b, result in games:
        plain.apply(PairOutcome(task, a, b, 0.0, 0.0, result))
        states.append((plain.ratings["a"].mu, plain.ratings["a"].sigma))
    ts = TrueSkillRating(average_last=2)
    rows = feed(ts, ["a", "b"], games)
    mu2, sigma2 = (states[1][0] + states[2][0]) / 2, (states[1][1] + states[2][1]) / 2
    a = rows["a"]
    assert (a.score, a.mu, a.sigma) == pytest.approx((mu2, mu2, sigma2))
    assert (a.lo, a.hi) == pytest.approx((mu2 - 2 * sigma2, mu2 + 2 * sigma2))
    assert (a.mu_last, a.sigma_last) == pytest.approx(states[2])  # the final state is kept
    assert a.sigma != pytest.approx(a.sigma_last)


def test_trueskill_orderings_average_is_seeded_and_replay_in_order_is_exact():
    games = [(f"t{i}", *p) for i, p in enumerate([("a", "b", 1), ("b", "c", 1), ("a", "c", 0.5)] * 5)]
    live = TrueSkillRating()
    rows = feed(live, list("abc"), games)
    replayed = live.replay(live.history)
    assert all(replayed[n].mu == pytest.approx(rows[n].mu) for n in "abc")
    k1 = feed(TrueSkillRating(orderings=10, seed=3), list("abc"), games)
    k2 = feed(TrueSkillRating(orderings=10, seed=3), list("abc"), games)
    assert {n: r.mu for n, r in k1.items()} == {n: r.mu for n, r in k2.items()}
    assert all("mu_spread" in r.extra for r in k1.values())


def test_the_batched_bootstrap_fit_gives_the_same_scores_as_choix():
    import numpy as np

    from skate.ratings.bradley_terry import fit_bt, fit_bt_many

    rng = np.random.default_rng(0)
    for p in (2, 4, 7):
        mats = rng.integers(0, 6, size=(60, p, p)).astype(float)
        for m in mats:
            np.fill_diagonal(m, 0)
        mats[0] = 0.0  # no games at all
        mats[1][0, :] = 5.0  # one player beats everyone
        mats[1][:, 0] = 0.0
        start = rng.normal(size=p)
        for initial in (None, start - start.mean()):
            one_by_one = np.array([fit_bt(m, 0.01, initial=initial) for m in mats])
            assert np.abs(fit_bt_many(mats, 0.01, initial=initial) - one_by_one).max() < 1e-6


def test_the_outcome_history_is_kept_only_by_backends_that_read_it():
    """It grows with tasks × players² (61,250 outcomes a round with 50 players), so TrueSkill
    with one ordering and Elo do not keep it; Bradley–Terry refits on it and TrueSkill's
    orderings average replays it."""
    scores = {"a": 0.9, "b": 0.5, "c": 0.1}
    keeps = {}
    for name, backend in [
        ("ts", TrueSkillRating()),
        ("ts_k", TrueSkillRating(orderings=3)),
        ("elo", EloRating()),
        ("bt", BradleyTerryRating()),
    ]:
        backend.add_players(list("abc"))
        updates = backend.update("t1", scores).updates + backend.update("t2", scores).updates
        assert updates == 6 and backend.games == {"a": 4, "b": 4, "c": 4}
        keeps[name] = len(backend.history)
    assert keeps == {"ts": 0, "ts_k": 6, "elo": 0, "bt": 6}


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: TrueSkillRating(**kw),
        lambda **kw: TrueSkillRating(draw_probability="auto", **kw),
        lambda **kw: TrueSkillRating(outcome="absolute", p_thresh=0.5, **kw),
        lambda **kw: EloRating(**kw),
    ],
    ids=["trueskill", "trueskill-auto", "trueskill-absolute", "elo"],
)
def test_the_quick_path_is_the_one_update_at_a_time_path(make):
    """A task's outcomes applied as bare triples in one loop (no records asked for) leave exactly
    the numbers that applying each outcome object in turn leaves (records asked for)."""
    rng = np.random.default_rng(5)
    players = [f"p{i}" for i in range(7)]
    quick, slow = make(), make(record_pairs=True)
    assert not quick.record_pairs and slow.record_pairs
    for backend in (quick, slow):
        backend.add_players(players)
    for t in range(40):
        scores = {n: float(rng.choice([0.0, 0.3, 0.32, 0.5, 0.9, 1.0])) for n in players if rng.random() < 0.9}
        a, b = quick.update(f"t{t}", scores), slow.update(f"t{t}", scores)
        assert (a.updates, a.last, a.players) == (b.updates, b.last, b.players) and len(b.pairs) == b.updates
        assert not a.pairs
    assert quick.ratings == slow.ratings and quick.games == slow.games
    assert [r.as_dict() for r in quick.table()] == [r.as_dict() for r in slow.table()]

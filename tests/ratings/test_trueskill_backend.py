"""TrueSkill backend: defaults, one update per pair, wins move mu, draws pull together."""

from __future__ import annotations

import pytest
import trueskill

from skate.ratings.trueskill_backend import TrueSkillRating


def make(rule="relative", players=("a", "b", "c"), record_pairs=False):
    r = TrueSkillRating(outcome=rule, record_pairs=record_pairs)
    r.add_players(players)
    return r


def test_starts_at_paper_defaults():
    r = make()
    assert all(row.mu == 25.0 and row.sigma == pytest.approx(25 / 3) for row in r.table())


def test_updates_once_per_unique_pair():
    r = make(record_pairs=True)
    applied = r.update("t1", {"a": 0.9, "b": 0.5, "c": 0.1})
    assert [(x["a"], x["b"]) for x in applied.pairs] == [("a", "b"), ("a", "c"), ("b", "c")]
    assert r.n_updates == 3 and (applied.updates, applied.last, applied.players) == (3, 3, ["a", "b", "c"])
    assert r.update("t2", {"a": 0.9, "c": 0.1}).last == 4


def test_matches_trueskill_package_by_hand():
    r = make(players=("a", "b"))
    r.update("t1", {"a": 0.2, "b": 0.9})  # b wins
    env = trueskill.TrueSkill(mu=25, sigma=25 / 3, beta=25 / 6, tau=25 / 300, draw_probability=0.1)
    new_b, new_a = trueskill.rate_1vs1(env.create_rating(), env.create_rating(), env=env)
    assert r.ratings["a"].mu == pytest.approx(new_a.mu) and r.ratings["b"].mu == pytest.approx(new_b.mu)


def test_relative_winner_rises():
    r = make(players=("a", "b"))
    for i in range(20):
        r.update(f"t{i}", {"a": 0.9, "b": 0.4})
    table = r.table()
    assert [row.player for row in table] == ["a", "b"] and table[0].mu > 25 > table[1].mu
    assert table[0].rank == 1 and table[1].rank == 2


def test_absolute_both_pass_is_a_draw_that_leaves_equal_players_equal():
    r = make("absolute", players=("a", "b"))
    r.update("t", {"a": 0.95, "b": 0.6})  # both pass
    assert r.ratings["a"].mu == pytest.approx(r.ratings["b"].mu)
    assert r.ratings["a"].sigma < 25 / 3  # but we learnt something


def test_absolute_pass_beats_fail():
    r = make("absolute", players=("a", "b"))
    r.update("t", {"a": 0.3, "b": 0.6})
    assert r.ratings["b"].mu > r.ratings["a"].mu


def test_relative_and_absolute_disagree_on_both_pass():
    rel, ab = make("relative", ("a", "b")), make("absolute", ("a", "b"))
    for r in (rel, ab):
        r.update("t", {"a": 0.95, "b": 0.6})
    assert rel.ratings["a"].mu > rel.ratings["b"].mu
    assert ab.ratings["a"].mu == pytest.approx(ab.ratings["b"].mu)

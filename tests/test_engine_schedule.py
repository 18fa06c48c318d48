"""ZeroSumEval's match schedule: one ordered pair per round, least-played first; only the solver
answers; the game is rated again to the same table; the preset composes for both games."""

from __future__ import annotations

from collections import Counter

import pytest

import skate
from skate.errors import ConfigError
from skate.games import load_games
from skate.players.config import SimPlayerConfig as Sim
from skate.runlog import events as ev
from skate.runner import run_game
from skate.settings.recorded import rate_run

THREE = [Sim(name="hi", skill=0.85), Sim(name="mid", skill=0.6), Sim(name="lo", skill=0.35)]
MATCHES = {"report": False, "schedule.mode": "matches", "rating.bootstrap": 100, "players.simulated": THREE}


def matches(values):
    """A MathQuiz game of matches between three simulated players, rated as ZeroSumEval does."""
    return skate.config(values={**MATCHES, **values}, logger="none", game="mathquiz", rating="zerosumeval")


def test_matches_go_round_the_ordered_pairs_least_played_first(tmp_path):
    result = run_game(matches({"game.rounds": 12, "seed": 2}), tmp_path)
    run = ev.read_run(tmp_path)
    starts = run.of(ev.RoundStarted)
    pairs = [(s.setters[0], s.answerers[0]) for s in starts]
    assert all(len(s.setters) == 1 and len(s.answerers) == 1 and s.setters != s.answerers for s in starts)
    # 6 ordered pairs of 3 players: the first 6 matches are each pair once, the next 6 again once
    assert len(set(pairs[:6])) == 6 and Counter(pairs) == Counter({p: 2 for p in set(pairs)})
    # only the solver answers each task, and only the setter sets
    by_round = {s.round: s for s in starts}
    for e in run.of(ev.Estimated):
        assert [e.player] == by_round[e.round].answerers
    for a in run.of(ev.AttemptMade):
        assert [a.player] == by_round[a.round].setters
    # every update is one setter-vs-solver game of its match
    for u in run.of(ev.RatingUpdated):
        r = by_round[int(u.task_id[1:4])]
        assert {u.a, u.b} == {r.setters[0], r.answerers[0]}
    _, rows = rate_run(tmp_path)
    assert rows == [{k: v for k, v in r.items() if k != "true_skill"} for r in result.table]


def test_the_same_seed_plays_the_same_matches(tmp_path):
    pairs = []
    for d in ("a", "b"):
        run_game(matches({"game.rounds": 5, "seed": 4}), tmp_path / d)
        pairs.append([(s.setters, s.answerers) for s in ev.read_run(tmp_path / d).of(ev.RoundStarted)])
    assert pairs[0] == pairs[1]


def test_matches_need_the_setter_vs_solver_rule():
    with pytest.raises(ConfigError, match="setter_vs_solver"):
        skate.config(game="mathquiz", rating="trueskill", values={"schedule.mode": "matches"})


def players_set_games() -> list[str]:
    """The games whose players set the tasks (under their defaults): the ones matches can pair."""
    return [name for name, cls in sorted(load_games().items()) if cls.players_set(skate.preset(name, "game"))]


@pytest.mark.parametrize("game", players_set_games())
def test_the_zerosumeval_preset_composes(game):
    cfg = skate.config(experiment="zerosumeval", game=game)
    assert cfg.schedule.mode == "matches" and cfg.game.rounds == 100 and len(cfg.players.simulated) == 4
    assert cfg.rating.outcome == "setter_vs_solver" and cfg.rating.scale == "zerosumeval"
    assert cfg.rating.point == "fit" and cfg.rating.draws == "zerosumeval"

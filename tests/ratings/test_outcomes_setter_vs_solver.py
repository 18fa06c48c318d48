"""ZeroSumEval's match scoring: the setter_vs_solver rule (setter against each answerer; a setter
with no valid task forfeits), played live and replayed from the log by ``skate.rate``."""

from __future__ import annotations

import pytest

import skate
from skate.errors import ConfigError
from skate.estimators.decided import Decided
from skate.games import load_games
from skate.players.config import SimPlayerConfig as Sim
from skate.ratings.bradley_terry import BradleyTerryConfig, BradleyTerryRating
from skate.ratings.config import validate_rating
from skate.ratings.elo import EloConfig, EloRating
from skate.ratings.outcomes import PairRule
from skate.ratings.trueskill_backend import TrueSkillRating
from skate.runlog import events as ev
from skate.runlog.files import EventLog
from skate.runner import run_game
from skate.settings.config import StageConfig as Stage
from skate.settings.options import composed
from skate.settings.recorded import rate_run

SVS = PairRule("setter_vs_solver", p_thresh=0.55)
ORDER = ["a", "b", "c", "d"]
BACKENDS = {
    "trueskill": lambda **kw: TrueSkillRating(**kw),
    "elo": lambda **kw: EloRating(**kw),
    "bradley_terry": lambda **kw: BradleyTerryRating(bootstrap=50, **kw),
}


# ------------------------------------------------------------------------------ the rule
def test_each_answerer_plays_the_setter_and_wins_by_solving():
    p = {"a": 0.9, "b": 0.2, "c": 0.55, "d": 0.54}
    outs = SVS.task_outcomes("t", p, ORDER, setter="b")
    # a/b in roster order: (a, b) a solved: a wins; (b, c) c solved at the mark: c wins; (b, d) d failed
    assert [(o.a, o.b, o.result) for o in outs] == [("a", "b", 1.0), ("b", "c", 0.0), ("b", "d", 1.0)]
    assert not any(o.drawn for o in outs)
    assert [(o.p_a, o.p_b) for o in outs] == [(0.9, 0.2), (0.2, 0.55), (0.2, 0.54)]


def test_the_setters_own_score_makes_no_outcome():
    assert SVS.task_outcomes("t", {"a": 1.0}, ORDER, setter="a") == []
    # the setter's own p is void: the games against the answerers still happen
    outs = SVS.task_outcomes("t", {"b": 0.1, "c": 0.9}, ORDER, setter="a")
    assert [(o.a, o.b, o.result, o.p_a) for o in outs] == [("a", "b", 1.0, None), ("a", "c", 0.0, None)]


def test_the_rule_needs_the_setter():
    with pytest.raises(ValueError, match="setter"):
        SVS.task_outcomes("t", {"a": 0.5, "b": 0.5}, ORDER)
    with pytest.raises(ValueError, match="not a rated player"):
        SVS.task_outcomes("t", {"a": 0.5}, ORDER, setter="zed")


def test_a_forfeit_loses_to_every_answerer_and_only_under_this_rule():
    outs = SVS.forfeit_outcomes("r002-c", "c", ["d", "a", "c"], ORDER)
    assert [(o.a, o.b, o.result) for o in outs] == [("a", "c", 1.0), ("c", "d", 0.0)]
    assert all(o.p_a is None and o.p_b is None for o in outs)
    assert PairRule("relative").forfeit_outcomes("r002-c", "c", ["a", "d"], ORDER) == []
    assert PairRule("absolute").forfeit_outcomes("r002-c", "c", ["a", "d"], ORDER) == []


def test_settled_is_the_absolute_rules():
    absolute = PairRule("absolute", p_thresh=0.55)
    for own in [(0.6, 0.9), (0.1, 0.5), (0.5, 0.6), (0.55, 0.7)]:
        assert SVS.settled(own, [(0.0, 1.0)]) == absolute.settled(own, [(0.0, 1.0)])
    assert Decided(outcome="setter_vs_solver").rule.outcome == "setter_vs_solver"


# ------------------------------------------------------------------------------ every backend
@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_every_backend_rates_setter_against_solver(name):
    r = BACKENDS[name](outcome="setter_vs_solver", record_pairs=True)
    r.add_players(["s", "x", "y"])
    for i in range(6):  # x solves s's tasks, y does not
        records = r.update(f"t{i}", {"s": 1.0, "x": 0.9, "y": 0.1}, setter="s").pairs
        assert [(u["a"], u["b"], u["result"]) for u in records] == [("s", "x", 0.0), ("s", "y", 1.0)]
    score = {row.player: row.score for row in r.table()}
    assert score["x"] > score["s"] > score["y"]
    assert r.games == {"s": 12, "x": 6, "y": 6}


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_every_backend_rates_a_forfeit_as_answerer_wins(name):
    r = BACKENDS[name](outcome="setter_vs_solver", record_pairs=True)
    r.add_players(["x", "s", "y"])
    for i in range(4):
        records = r.forfeit(f"r{i:03d}-s", "s", ["x", "y"]).pairs
        assert [(u["a"], u["b"], u["result"]) for u in records] == [("x", "s", 1.0), ("s", "y", 0.0)]
    score = {row.player: row.score for row in r.table()}
    assert score["x"] > score["s"] and score["y"] > score["s"]


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_forfeits_change_nothing_under_the_other_rules(name):
    for outcome in ("relative", "absolute"):
        r = BACKENDS[name](outcome=outcome)
        r.add_players(["x", "s"])
        assert r.forfeit("r001-s", "s", ["x"]).updates == 0 and r.history == [] and r.games == {"x": 0, "s": 0}


def test_join_re_rating_keeps_only_the_newcomers_games():
    r = EloRating(outcome="setter_vs_solver", record_pairs=True)
    r.add_players(["s", "x", "new"])
    records = r.update("t", {"s": 0.9, "x": 0.9, "new": 0.1}, involving={"new"}, setter="s").pairs
    assert [(u["a"], u["b"], u["result"]) for u in records] == [("s", "new", 1.0)]


# ------------------------------------------------------------------------------ what forfeits
def attempt(reason, valid=False):
    return ev.AttemptMade(round=1, player="s", valid=valid, reason=None if valid else reason)


@pytest.mark.parametrize(
    ("reasons", "forfeits"),
    [
        (["malformed"], True),
        (["void", "unsolved"], True),
        (["void", "void", "void"], False),  # every model call failed: not the setter's fault
        (["infrastructure", "void", "void", "void"], False),  # nor is a broken sandbox
        (["malformed", None], False),  # the second attempt was valid
        ([], False),
    ],
)
def test_only_a_real_attempt_forfeits(reasons, forfeits):
    assert ev.forfeited([attempt(r, valid=r is None) for r in reasons]) is forfeits


# ------------------------------------------------------------------------------ replaying old logs
def test_the_stream_derives_forfeits_from_attempts_with_who_was_in_the_round(tmp_path):
    """A log with no forfeit updates (an old run, relative rule) still gives its forfeits; a
    player joining later does not answer earlier rounds; a round may name its answerers."""
    with EventLog(tmp_path / "events.jsonl") as log:
        for e in [
            ev.RunStarted(players=[{"name": n} for n in ("a", "b", "late", "c")]),
            ev.RoundStarted(round=1),
            ev.AttemptMade(round=1, player="b", reason="malformed"),
            ev.AttemptMade(round=1, player="a", valid=True),
            ev.TaskSet(task_id="r001-a", round=1, setter="a"),
            ev.AttemptMade(round=1, player="c", reason="void"),  # all void: no forfeit
            ev.Estimated(task_id="r001-a", round=1, player="a", p=0.5),
            ev.Estimated(task_id="r001-a", round=1, player="b", p=0.7),
            ev.RoundEnded(round=1),
            ev.PlayersJoined(stage="s2", players=["late"]),
            ev.Estimated(task_id="r001-a", round=1, player="late", p=0.2, joined="s2"),
            ev.RoundStarted(round=2),
            ev.AttemptMade(round=2, player="a", reason="unsolved"),
            ev.RoundEnded(round=2),
            ev.RoundStarted(round=3, setters=["c"], answerers=["c", "late"]),
            ev.AttemptMade(round=3, player="c", reason="unsolved"),
            ev.RoundEnded(round=3),
            ev.RoundStarted(round=4),
            ev.AttemptMade(round=4, player="b", reason="unsolved"),  # unfinished round: left out
        ]:
            log.write(e)
    run = ev.read_run(tmp_path)
    assert run.rating_stream() == [
        ev.Forfeit("r001-b", "b", ["a", "c"]),  # malformed: a loss under every own_unsolved
        ev.RatedTask("r001-a", "a", {"a": 0.5, "b": 0.7, "late": 0.2}),
        ev.Forfeit("r002-a", "a", ["b", "late", "c"], unsolved=True),  # its own task, unsolved
        ev.Forfeit("r003-c", "c", ["late"], unsolved=True),
    ]
    assert run.rated_scores() == [("r001-a", {"a": 0.5, "b": 0.7, "late": 0.2})]
    # the new round fields are left out of the line until set
    assert "setters" not in ev.RoundStarted(round=1).record() and ev.parse({"event": "round_start"}).setters is ev.UNSET


# ------------------------------------------------------------------------------ a whole game
SLOPPY = {
    "report": False,
    "game.attempts": 1,
    "players.simulated": [
        Sim(name="hi", skill=0.85, sloppiness=0.5),
        Sim(name="mid", skill=0.6, sloppiness=0.5),
        Sim(name="lo", skill=0.35, sloppiness=0.5),
    ],
}


def sloppy(values, **choices):
    """A MathQuiz game (unless ``game`` is chosen) of three sloppy players, one attempt each: they forfeit."""
    return skate.config(values={**SLOPPY, **values}, **{"logger": "none", "game": "mathquiz", **choices})


def strip(table):
    """The live table without what the runner adds to it (the simulated players' true skills)."""
    return [{k: v for k, v in r.items() if k != "true_skill"} for r in table]


def forfeit_updates(out):
    """The forfeits of a run, and the single updates they made (a run logged per pair)."""
    run = ev.read_run(out)
    forfeits = {f.task_id: f.setter for f in run.rating_stream() if isinstance(f, ev.Forfeit)}
    return forfeits, [u for u in run.of(ev.RatingUpdated) if u.task_id in forfeits]


@pytest.mark.parametrize("rating", ["trueskill", "elo", "zerosumeval"])
def test_a_played_game_is_rated_again_to_the_same_table(tmp_path, rating):
    result = run_game(
        sloppy(
            {"seed": 3, "game.rounds": 4, "rating.outcome": "setter_vs_solver", "events.rating_updates": "pair"},
            rating=rating,
        ),
        tmp_path,
    )
    forfeits, updates = forfeit_updates(tmp_path)
    assert forfeits, "the sloppy players should forfeit some rounds"
    # a forfeit is a win for every answerer of the round: the setter loses each game
    assert len(updates) == 2 * len(forfeits)
    assert all((u.a == forfeits[u.task_id]) == (u.result == 0.0) for u in updates)
    _, rows = rate_run(tmp_path)
    assert rows == strip(result.table)


def test_a_forfeit_logged_per_task_moves_the_setter_down_and_its_answerers_up(tmp_path):
    result = run_game(sloppy({"seed": 3, "game.rounds": 4, "rating.outcome": "setter_vs_solver"}), tmp_path)
    run = ev.read_run(tmp_path)
    forfeits = {f.task_id: f for f in run.rating_stream() if isinstance(f, ev.Forfeit)}
    assert forfeits and not run.updates  # one `rated` event per task, no single updates
    rated = {e.task_id: e for e in run.of(ev.TaskRated)}
    before: dict[str, float] = {}
    for e in run.of(ev.TaskRated):  # each player's mu after its last task so far
        if e.task_id in forfeits:
            f = forfeits[e.task_id]
            assert e.updates == len(f.answerers) and set(e.state["mu"]) == {f.setter, *f.answerers}
            assert e.state["mu"][f.setter] < before.get(f.setter, 25.0)
            assert all(e.state["mu"][n] > before.get(n, 25.0) for n in f.answerers)
        before.update(e.state["mu"])
    assert sum(e.updates for e in rated.values()) == run.update_count == result.summary.updates
    _, rows = rate_run(tmp_path)
    assert rows == strip(result.table)


def test_a_forfeit_makes_no_update_under_the_relative_rule(tmp_path):
    run_game(sloppy({"seed": 3, "game.rounds": 4}), tmp_path)
    forfeits, updates = forfeit_updates(tmp_path)
    assert forfeits and not updates
    # ... but the same games can be rated again with forfeits counted
    _, rows = rate_run(tmp_path, {"rating.outcome": "setter_vs_solver"})
    assert sum(r["games"] for r in rows) > sum(r["games"] for r in rate_run(tmp_path)[1])


def test_a_staged_game_is_rated_again_to_the_same_table(tmp_path):
    stages = [
        Stage(name="base", rounds=3),
        Stage(name="watch", join=["hi"], setters=[], rounds=0),
        Stage(name="play", rounds=2),
    ]
    result = run_game(
        sloppy(
            {"seed": 1, "stages": stages, "rating.bootstrap": 100, "events.rating_updates": "pair"},
            rating="zerosumeval",
        ),
        tmp_path,
    )
    forfeits, updates = forfeit_updates(tmp_path)
    early = [t for t in forfeits if int(t[1:4]) <= 3]
    assert early, "a forfeit before hi joins"
    assert all("hi" not in (u.a, u.b) for u in updates if u.task_id in early)
    _, rows = rate_run(tmp_path)
    assert rows == strip(result.table)


# ------------------------------------------------------------------------------ config
def test_the_schema_takes_the_new_values_and_names_a_bad_one():
    zse = skate.preset("zerosumeval", "rating")
    assert (zse.outcome, zse.scale, zse.point, zse.draws, zse.seed) == (
        "setter_vs_solver",
        "zerosumeval",
        "fit",
        "zerosumeval",
        1,
    )
    validate_rating(zse)
    for key, bad in (("outcome", "teacher"), ("scale", "elo"), ("point", "mean")):
        with pytest.raises(ConfigError, match=rf"rating\.{key}: Invalid value '{bad}'"):  # the option's typed section
            skate.preset("bradley_terry", "rating", values={key: bad})
        with pytest.raises(ConfigError, match=f"rating.{key}='{bad}' is invalid: must be one of"):
            validate_rating(BradleyTerryConfig(**{key: bad}))  # settings made in code, not read from an option
    validate_rating(skate.preset("elo", "rating", values={"outcome": "setter_vs_solver"}))
    with pytest.raises(ConfigError, match="no rating backend's"):  # a composed section not made settings
        validate_rating(composed(rating="zerosumeval").rating)
    assert EloConfig(scale=-1.0).check() == [("scale", -1.0, "must be > 0")]  # Elo's scale stays a number
    with pytest.raises(ConfigError, match=r"rating.scale=-1.0 is invalid: must be > 0"):
        validate_rating(EloConfig(scale=-1.0))
    skate.config(estimator="decided", values={"rating.outcome": "setter_vs_solver"})


@pytest.mark.parametrize("game", sorted(load_games()))
def test_every_games_runs_can_be_rated_setter_vs_solver(tmp_path, game):
    # SCP's default built benchmark has no setters; its player-set mode does
    extra = {"game.mode": "player_set"} if game == "scp" else {}
    run_game(sloppy({"seed": 0, "game.rounds": 2, **extra}, game=game), tmp_path)
    for backend in ({"rating": "trueskill"}, {"rating": "zerosumeval", "rating.bootstrap": 50}):
        _, rows = rate_run(tmp_path, {**backend, "rating.outcome": "setter_vs_solver"})
        assert {r["player"] for r in rows} == {"hi", "mid", "lo"} and all(r["games"] > 0 for r in rows)


def test_a_built_benchmark_cannot_be_rated_setter_vs_solver(tmp_path):
    run_game(sloppy({"game.questions": 12, "game.rounds": 2}, game="scp"), tmp_path)
    with pytest.raises(ConfigError, match="built by the game itself"):
        rate_run(tmp_path, {"rating.outcome": "setter_vs_solver"})
    _, rows = rate_run(tmp_path, {"rating.outcome": "absolute"})  # the pairwise rules rate it
    assert {r["player"] for r in rows} == {"hi", "mid", "lo"}

"""The typed event schema: what a line holds, reading it back, and the views built on a run's log."""

from __future__ import annotations

import json

import pytest

from skate.runlog import events as ev
from skate.runlog.files import EventLog, read_events


def write(path, *events):
    with EventLog(path / "events.jsonl") as log:
        for e in events:
            log.write(e)


def test_every_kind_reads_back_as_itself(tmp_path):
    written = [
        ev.RunStarted(game="g", rounds=2, players=[{"name": "a", "true_skill": 0.5}], seed=3, config={"x": 1}),
        ev.RoundStarted(round=1),
        ev.AttemptMade(round=1, player="a", attempt=1, text="t", reason="malformed", detail="why"),
        ev.AttemptMade(round=1, player="a", attempt=2, text="u", novelty_distance=None, valid=True),
        ev.TaskSet(
            task_id="r001-a",
            round=1,
            setter="a",
            prompt="p",
            answer="42",
            attempts=2,
            extra={"distractors": ["1", "2"]},
        ),
        ev.Estimated(task_id="r001-a", round=1, player="a", p=0.5, n=10, correct=5, std=0.16),
        ev.Estimated(task_id="r001-a", round=1, player="b", p=None, n=0, void=10, joined="late"),
        ev.RatingUpdated(update=1, task_id="r001-a", a="a", b="b", p_a=0.5, p_b=0.1, result=1.0, extra={"mu_a": 26.0}),
        ev.RoundEnded(round=1, tasks=1, ratings=[{"player": "a"}]),
        ev.ModelCallVoid(player="b", model="openai/x", kind="server", status=500, detail="boom", attempts=5),
        ev.PlayersJoined(stage="late", players=["b"], tasks=1),
        ev.StageEnded(stage="late", round=1, ratings=[]),
        ev.RunStopped(round=2, reason="BudgetExceeded: spent"),
        ev.RunEnded(ratings=[{"player": "a"}], summary={"tasks": 1}),
        ev.RunFailed(error="KeyError: x", summary={}),
    ]
    write(tmp_path, *written)
    back = ev.read_events(tmp_path)
    assert [type(e) for e in back] == [type(e) for e in written]
    assert [e.fields() for e in back] == [e.fields() for e in written]
    assert all(isinstance(e.ts, float) for e in back)


def test_optional_fields_are_left_out_until_set(tmp_path):
    write(
        tmp_path,
        ev.AttemptMade(round=1, player="a", attempt=1, text="t", reason="malformed"),  # never tested
        ev.AttemptMade(round=1, player="a", attempt=2, text="t", novelty_distance=None, valid=True),  # no earlier task
        ev.Estimated(task_id="t", player="a", p=1.0),
        ev.RoundEnded(round=1),
    )
    raw = read_events(tmp_path)
    assert "novelty_distance" not in raw[0] and raw[1]["novelty_distance"] is None
    assert "joined" not in raw[2] and "usage" not in raw[3]
    back = ev.read_events(tmp_path)
    assert back[0].novelty_distance is ev.UNSET and back[0].get("novelty_distance", "none") == "none"
    assert back[1].novelty_distance is None


def test_game_data_and_backend_numbers_are_flat_in_the_line(tmp_path):
    write(
        tmp_path,
        ev.TaskSet(task_id="t", prompt="p", answer="1", extra={"distractors": ["2"]}),
        ev.RatingUpdated(update=1, a="a", b="b", extra={"mu_a": 26.1, "sigma_a": 8.0}),
    )
    task, rating = read_events(tmp_path)
    assert task["distractors"] == ["2"] and rating["mu_a"] == 26.1
    t, r = ev.read_events(tmp_path)
    assert t.extra == {"distractors": ["2"]} and t.get("distractors") == ["2"] and r.get("sigma_a") == 8.0


def test_unknown_kinds_and_fields_survive_and_a_torn_line_is_skipped(tmp_path):
    lines = [
        {"event": "from_the_future", "ts": 1.0, "x": 1},
        {"event": "round_start", "ts": 2.0, "round": 4, "weather": "fine"},
    ]
    text = "".join(json.dumps(line) + "\n" for line in lines) + '{"event": "round_end", "ro'
    (tmp_path / "events.jsonl").write_text(text)
    future, start = ev.read_events(tmp_path)
    assert isinstance(future, ev.UnknownEvent) and future.record() == lines[0]
    assert start.round == 4 and start.extra == {"weather": "fine"} and start.record() == lines[1]


def test_a_run_log_knows_which_tasks_changed_the_ratings(tmp_path):
    task = lambda r, t: ev.TaskSet(task_id=t, round=r, setter="a", prompt="p", answer="1")  # noqa: E731
    est = lambda t, p, pl="a": ev.Estimated(task_id=t, player=pl, p=p)  # noqa: E731
    write(
        tmp_path,
        ev.RunStarted(players=[{"name": "a", "true_skill": 0.9}, {"name": "b", "true_skill": None}]),
        task(1, "t1"),
        est("t1", 0.9),
        est("t1", None, "b"),
        ev.RatingUpdated(task_id="t1"),
        ev.RoundEnded(round=1),
        task(2, "t2"),
        est("t2", 0.3),
        ev.RunStopped(round=2),  # a stopped round rates nothing
        task(3, "t3"),
        est("t3", 0.1),
    )  # a crash mid-round: no round_end, no rating
    run = ev.read_run(tmp_path)
    assert run.players == ["a", "b"] and run.true_skill == {"a": 0.9, "b": None}
    assert run.rated_scores() == [("t1", {"a": 0.9})]  # the void estimate is left out
    assert not run.finished and run.final_ratings() == []


def test_a_folder_without_a_usable_log_says_what_to_give(tmp_path):
    with pytest.raises(ev.RunLogError, match="has no events.jsonl: give the folder of"):
        ev.read_run(tmp_path)
    (tmp_path / "events.jsonl").write_text('{"event": "round_start", "round": 1}\n')
    with pytest.raises(ev.RunLogError, match="no run_start event"):
        ev.read_run(tmp_path)


def test_unset_and_void_are_markers_of_their_own():
    import pickle

    from skate.runlog.records import VOID

    for marker in (ev.UNSET, VOID):
        assert not marker and pickle.loads(pickle.dumps(marker)) is marker
    assert ev.UNSET is not VOID and repr(ev.UNSET) == "UNSET"


def test_a_long_log_can_be_read_with_a_bounded_sample_of_its_rating_updates(tmp_path):
    """1,000 updates among 4 players; read with keep_updates=50: every stride-th update (the
    stride a power of two), each player's last update, and exact counts and rated task ids."""
    players = list("abcd")
    pairs = [(a, b) for i, a in enumerate(players) for b in players[i + 1 :]]
    updates = []
    for i in range(1, 1001):
        a, b = pairs[i % len(pairs)] if i < 995 else ("a", "b")  # c and d play last at 994 and 993
        updates.append(ev.RatingUpdated(update=i, task_id=f"t{(i - 1) // 6}", a=a, b=b, extra={"mu_a": i / 10}))
    write(tmp_path, ev.RunStarted(players=[{"name": n} for n in players]), *updates, ev.RoundEnded(round=1))
    full = ev.read_run(tmp_path)
    assert [u.update for u in full.of(ev.RatingUpdated)] == list(range(1, 1001)) and full.update_stride == 1
    some = ev.read_run(tmp_path, keep_updates=50)
    got = [u.update for u in some.of(ev.RatingUpdated)]
    assert some.update_count == 1000 and some.rated_ids == full.rated_ids and len(some.rated_ids) == 167
    assert some.update_stride == 32 and len(got) <= 50 + len(players)
    sample = list(range(1, 1001, 32))
    assert [u for u in got if u in sample] == sample  # evenly spaced, in order
    last = {n: max(u.update for u in updates if n in (u.a, u.b)) for n in players}
    assert set(last.values()) <= set(got) and got == sorted(got)  # each player's last update, in place
    assert [type(e) for e in some.events] == [ev.RunStarted, ev.RoundEnded]  # held apart from the rest
    none = ev.read_run(tmp_path, keep_updates=0)
    assert none.of(ev.RatingUpdated) == [] and none.update_count == 1000 and none.rated_ids == full.rated_ids
    with pytest.raises(ValueError, match="keep_updates=-1"):
        ev.read_run(tmp_path, keep_updates=-1)

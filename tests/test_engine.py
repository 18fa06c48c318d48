"""The engine with scripted players: attempts and their feedback, uniqueness, who answers what,
one rating update per pair per task, and the event log."""

from __future__ import annotations

from itertools import combinations

import numpy as np

from skate.augment import Augmentation
from skate.embedders import HashingEmbedder
from skate.engine import Engine
from skate.estimators.fixed_n import FixedN
from skate.games.cop import COPGame, COPProposal
from skate.loggers.base import RunLogger
from skate.loop import Loop, Parts
from skate.players.base import Player
from skate.ratings.trueskill_backend import TrueSkillRating
from skate.runlog.files import EventLog, read_events
from skate.runlog.records import FailReason

NINE = [f"wrong-{i}" for i in range(9)]
PROGRAMS = [
    "print(sum(range(10)))",
    "word = 'skate'\nprint(word[::-1].upper())",
    "d = {k: k * k for k in range(4)}\nprint(list(d.items()))",
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nprint(fib(12))",
    "xs = sorted([5, 3, 9, 1], key=lambda v: -v)\nprint(xs)",
    "print('-'.join(str(b) for b in bytes([1, 2, 3])))",
]


class Scripted(Player):
    """Sets programs from a script (one per call) and answers with a fixed accuracy."""

    def __init__(self, name, script, accuracy=1.0):
        self.name, self.script, self.accuracy = name, list(script), accuracy
        self.contexts = []
        self.calls = 0

    def set_task(self, ctx, rng):
        self.contexts.append(ctx)
        code, distractors = self.script[min(self.calls, len(self.script) - 1)]
        self.calls += 1
        return COPProposal(code, list(distractors))

    def answer(self, queries, rng):
        out = []
        for q in queries:
            right = [i for i, o in enumerate(q.options) if not o.startswith("wrong-")]
            out.append(right[0] if rng.random() < self.accuracy else (right[0] + 1) % len(q.options))
        return out


def play(tmp_path, players, rounds=2, attempts=3, strategy="hist_perf", seed=0):
    game = COPGame(rounds=rounds, attempts=attempts)
    log = EventLog(tmp_path / "events.jsonl")
    from skate.sandbox import SubprocessSandbox

    parts = Parts(
        game=game,
        sandbox=SubprocessSandbox(),
        env=None,
        embedder=HashingEmbedder(threshold=0.2),
        players=list(players),
        client=None,
        rating=TrueSkillRating(),
        aug=Augmentation(strategy=strategy),
        estimator=FixedN(n=10),
        logger=RunLogger(),
    )
    engine = Engine(parts, log, Loop(seed=seed))
    result = engine.run()
    log.close()
    return result, read_events(tmp_path)


def test_failed_attempts_are_fed_back_and_a_later_attempt_can_succeed(tmp_path):
    setter = Scripted(
        "setter", [("print(undefined)", NINE), ("print(42)", NINE[:3]), ("print(42)", NINE), ("print(1)", NINE)]
    )
    other = Scripted("other", [(PROGRAMS[1], NINE)])
    result, events = play(tmp_path, [setter, other], rounds=1)
    ctxs = setter.contexts
    assert [c.attempt for c in ctxs] == [1, 2, 3] and [c.attempts_left for c in ctxs] == [3, 2, 1]
    assert ctxs[0].failed == ()
    assert [f.reason for f in ctxs[2].failed] == [FailReason.NOT_VERIFIABLE, FailReason.TOO_FEW_DISTRACTORS]
    assert "NameError" in ctxs[1].failed[0].detail and ctxs[1].failed[0].text == "print(undefined)"
    attempts = [e for e in events if e["event"] == "attempt" and e["player"] == "setter"]
    assert [(a["valid"], a["reason"]) for a in attempts] == [
        (False, "not_verifiable"),
        (False, "too_few_distractors"),
        (True, None),
    ]
    assert result.summary.tasks_by_setter == {"setter": 1, "other": 1}


def test_three_failures_leave_the_setter_out_of_the_round(tmp_path):
    setter = Scripted("setter", [("x = 1", NINE)])
    other = Scripted("other", [(PROGRAMS[0], NINE), (PROGRAMS[1], NINE)])
    result, events = play(tmp_path, [setter, other], rounds=2)
    attempts = [e for e in events if e["event"] == "attempt" and e["player"] == "setter"]
    assert len(attempts) == 6 and not any(a["valid"] for a in attempts)
    assert {t["setter"] for t in events if t["event"] == "task"} == {"other"}
    assert result.summary.tasks_by_setter["setter"] == 0


def test_the_hints_leave_out_a_fresh_sample_where_every_model_player_has_one(tmp_path):
    """A rejection's hint names ``setter_repair: resample`` unless every player with the setting
    already asks anew after a rejection (the local cohort does)."""

    def hints(repairs):
        players = [Scripted("bad", [("print(undefined)", NINE)]), Scripted("good", [(PROGRAMS[0], NINE)])]
        for p, r in zip(players, repairs, strict=True):
            p.setter_repair = r
        result, _ = play(tmp_path / "-".join(repairs), players, rounds=1)
        return result.summary.hints["not_verifiable"]

    assert "setter_repair: resample" in hints(["show", "resample"])
    both = hints(["resample", "resample"])
    assert "setter_repair" not in both and both.startswith("its programs did not run, or printed nothing")


def test_repeating_a_task_is_not_unique(tmp_path):
    repeater = Scripted("rep", [(PROGRAMS[0], NINE)])
    renamer = Scripted("ren", [(PROGRAMS[0], NINE), (PROGRAMS[0].replace("10", "77"), NINE), (PROGRAMS[3], NINE)])
    _, events = play(tmp_path, [repeater, renamer], rounds=2)
    rep = [e for e in events if e["event"] == "attempt" and e["player"] == "rep"]
    assert [a["reason"] for a in rep] == [None, "not_unique", "not_unique", "not_unique"]
    assert all(a["novelty_distance"] == 0.0 for a in rep[1:])
    ren = [e for e in events if e["event"] == "attempt" and e["player"] == "ren"]
    # changing a constant is still the same task; a different program is unique
    assert [a["reason"] for a in ren] == [None, "not_unique", None]
    # another player's identical program does not count against "rep" in round 1
    assert rep[0]["valid"]
    # the hint names no history shown, unless the game already shows none
    assert (
        "aug=no_info" in play(tmp_path / "hp", [Scripted("rep", [(PROGRAMS[0], NINE)])])[0].summary.hints["not_unique"]
    )
    plain = play(tmp_path / "ni", [Scripted("rep", [(PROGRAMS[0], NINE)])], strategy="no_info")[0].summary.hints[
        "not_unique"
    ]
    assert "aug=no_info" not in plain and "embedder.threshold" in plain


def test_everyone_answers_every_task_and_ratings_update_per_pair(tmp_path):
    players = [
        Scripted(f"p{i}", [(PROGRAMS[(i + r) % 6], NINE) for r in range(3)], accuracy=acc)
        for i, acc in enumerate([1.0, 0.6, 0.1])
    ]
    result, events = play(tmp_path, players, rounds=3)
    tasks = [e for e in events if e["event"] == "task"]
    assert len(tasks) == 9
    for t in tasks:
        assert len(t["distractors"]) == 9 and t["answer"]  # the game's own data, in the task's event
        est = [e for e in events if e["event"] == "estimate" and e["task_id"] == t["task_id"]]
        assert sorted(e["player"] for e in est) == ["p0", "p1", "p2"]  # the setter answers too
        assert all(e["n"] == 10 for e in est)
        rated = [e for e in events if e["event"] == "rated" and e["task_id"] == t["task_id"]]
        assert len(rated) == 1 and rated[0]["updates"] == len(list(combinations(["p0", "p1", "p2"], 2)))
        assert list(rated[0]["state"]["mu"]) == ["p0", "p1", "p2"]
    assert [row["player"] for row in result.table] == ["p0", "p1", "p2"]
    kinds = [e["event"] for e in events]
    assert kinds.count("round_start") == kinds.count("round_end") == 3


def test_setter_context_follows_the_augmentation_strategy(tmp_path):
    players = [Scripted(f"p{i}", [(PROGRAMS[(i + r) % 6], NINE) for r in range(3)]) for i in range(2)]
    play(tmp_path, players, rounds=3, strategy="full_context")
    last = players[0].contexts[-1]
    assert last.round == 3 and len(last.history) == 4  # two tasks per earlier round, anyone's
    assert {h.setter for h in last.history} == {"p0", "p1"}
    assert all(set(h.p_correct) == {"p0", "p1"} for h in last.history)


def test_rng_streams_do_not_depend_on_order(tmp_path):
    parts = Parts(
        game=COPGame(rounds=1),
        sandbox=None,
        env=None,
        embedder=HashingEmbedder(),  # type: ignore[arg-type]
        players=[Scripted("a", [(PROGRAMS[0], NINE)]), Scripted("b", [(PROGRAMS[1], NINE)])],
        client=None,
        rating=TrueSkillRating(),
        aug=Augmentation(),
        estimator=FixedN(),
        logger=RunLogger(),
    )
    engine = Engine(parts, EventLog(tmp_path / "e.jsonl"), Loop(seed=5))
    x = engine.rng(1, 2, 3).random()
    engine.rng(9).random()
    assert engine.rng(1, 2, 3).random() == x
    assert np.random.default_rng(np.random.SeedSequence(6, spawn_key=(1, 2, 3))).random() != x

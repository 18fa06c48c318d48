"""COP validity (runs cleanly, prints, deterministic, enough distinct distractors), queries and
grading."""

from __future__ import annotations

from collections import Counter

import numpy as np

from skate.answers.choice import normalize_text as normalize
from skate.games.base import Checks
from skate.games.cop import COPGame, COPProposal
from skate.runlog.records import FailReason, Rejection, Task

NINE = [str(i) for i in range(10, 19)]


def checks(sandbox):
    return Checks(
        round=3,
        setter="p1",
        assignment={},
        sandbox=sandbox,
        rng=np.random.default_rng(0),
        solve=lambda queries, rng: [None] * len(queries),
    )


def validate(sandbox, code, distractors=NINE, **kw):
    return COPGame(**kw).validate(COPProposal(code, list(distractors)), checks(sandbox))


def test_valid_program_becomes_a_task(sandbox):
    task = validate(sandbox, "x = [1, 2, 3]\nprint(sum(x) * 7)")
    assert isinstance(task, Task)
    assert task.answer == "42" and task.setter == "p1" and task.round == 3
    assert task.data == {"distractors": tuple(NINE)} and task.task_id == "r003-p1"


def test_crash_is_not_verifiable(sandbox):
    rej = validate(sandbox, "print(1)\nprint(undefined_name)")
    assert isinstance(rej, Rejection) and rej.reason is FailReason.NOT_VERIFIABLE
    assert "NameError" in rej.detail


def test_timeout_is_not_verifiable(sandbox):
    rej = validate(sandbox, "while True: pass")
    assert rej.reason is FailReason.NOT_VERIFIABLE and "timeout" in rej.detail


def test_silent_program_is_not_verifiable(sandbox):
    rej = validate(sandbox, "x = 1 + 1")
    assert rej.reason is FailReason.NOT_VERIFIABLE and "printed nothing" in rej.detail


def test_whitespace_only_output_counts_as_nothing(sandbox):
    rej = validate(sandbox, "print('   ')")
    assert rej.reason is FailReason.NOT_VERIFIABLE


def test_nondeterministic_program_is_rejected(sandbox):
    rej = validate(sandbox, "import os\nprint(os.urandom(8).hex())")
    assert rej.reason is FailReason.NOT_VERIFIABLE and "not deterministic" in rej.detail


def test_empty_program_is_malformed(sandbox):
    assert validate(sandbox, "   ").reason is FailReason.MALFORMED


def test_too_few_distractors(sandbox):
    rej = validate(sandbox, "print(42)", distractors=NINE[:8])
    assert rej.reason is FailReason.TOO_FEW_DISTRACTORS and "only 8" in rej.detail


def test_with_fill_distractors_the_game_tops_up_a_short_list_with_its_own(sandbox):
    game = {"fill_distractors": True, "n_distractors": 3}
    task = validate(sandbox, "print([1, 2, 3])", distractors=["[1, 2]", "[1,  2]", "[1, 2, 3]"], **game)
    assert isinstance(task, Task) and task.data["filled_distractors"] == 2
    keys = [normalize(d) for d in task.data["distractors"]]
    assert keys[0] == "[1, 2]" and len(set(keys)) == 3 and "[1, 2, 3]" not in keys  # the setter's first
    assert "filled_distractors" not in validate(sandbox, "print(7)", distractors=["1", "2", "3"], **game).data
    # a program that fails is still rejected: only the list is topped up
    assert validate(sandbox, "print(x)", distractors=[], **game).reason is FailReason.NOT_VERIFIABLE


def test_distractors_equal_after_whitespace_normalising_do_not_count(sandbox):
    # "[1, 2]" and "[1,  2]" and " [1, 2]\n" are one option; "42 " equals the answer.
    ds = ["[1, 2]", "[1,  2]", " [1, 2]\n", "42 ", "1", "2", "3", "4", "5", "6", "7"]
    rej = validate(sandbox, "print(42)", distractors=ds)
    assert rej.reason is FailReason.TOO_FEW_DISTRACTORS and "only 8" in rej.detail
    task = validate(sandbox, "print(42)", distractors=ds + ["8"])
    assert isinstance(task, Task)
    keys = [normalize(d) for d in task.data["distractors"]]
    assert len(set(keys)) == 9 and "42" not in keys


def test_extra_distractors_are_trimmed_to_nine(sandbox):
    task = validate(sandbox, "print(42)", distractors=[str(i) for i in range(100, 120)])
    assert len(task.data["distractors"]) == 9


def test_distractors_must_be_a_list(sandbox):
    rej = COPGame().validate(COPProposal("print(1)", "1,2,3"), checks(sandbox))  # type: ignore[arg-type]
    assert rej.reason is FailReason.MALFORMED


def test_normalize():
    assert normalize("  a \n\t b  ") == "a b"
    assert normalize("[1,\n 2]") == "[1, 2]"


TASK = Task("r001-p", 1, "p", "print(42)", "42", {"distractors": tuple(str(i) for i in range(1, 10))})


def test_queries_hold_the_answer_and_distinct_distractors_in_every_position():
    game, rng = COPGame(), np.random.default_rng(0)
    queries = [game.make_query(TASK, rng) for _ in range(400)]
    for q in queries:
        opts = q.options
        assert q.prompt == "print(42)" and len(opts) == 4 and opts.count("42") == 1
        assert len(set(opts)) == 4 and set(opts) - {"42"} <= set(TASK.data["distractors"])
    counts = Counter(q.options.index("42") for q in queries)  # shuffled: roughly even positions
    assert set(counts) == {0, 1, 2, 3} and min(counts.values()) > 60
    assert set().union(*(set(q.options) for q in queries)) == {"42", *TASK.data["distractors"]}


def test_n_options_sets_the_query_size():
    q = COPGame(n_options=6).make_query(TASK, np.random.default_rng(1))
    assert len(q.options) == 6


def test_a_reply_is_correct_only_when_it_points_at_the_answer():
    game = COPGame()
    q = game.make_query(TASK, np.random.default_rng(2))
    right = q.options.index("42")
    assert game.grade(TASK, q, right)
    assert not any(game.grade(TASK, q, i) for i in range(4) if i != right)
    assert not game.grade(TASK, q, 7) and not game.grade(TASK, q, "A")


def test_the_query_stream_is_the_seeded_generator_s():
    game = COPGame()
    a = [game.make_query(TASK, np.random.default_rng(5)) for _ in range(3)]
    b = [game.make_query(TASK, np.random.default_rng(5)) for _ in range(3)]
    assert a == b


def test_with_self_check_a_task_counts_only_if_its_setter_picks_its_output(sandbox):
    """``game.self_check``: the setter answers its own task once, seeing the program and a draw of
    its options only; a wrong pick (or none) rejects it as unsolved, saying what it chose, and a
    failed call is void, not the setter's fault. Off by default: nobody is asked."""
    from skate.runlog.records import VOID

    code = "x = [1, 2, 3]\nprint(sum(x) * 7)"
    asked: list = []

    def solver(pick):
        def solve(queries, rng):
            asked.extend(queries)
            return [pick(q) for q in queries]

        return solve

    def run(pick, **kw):
        game = COPGame(**kw)
        c = checks(sandbox)
        c.solve = solver(pick)
        return game.validate(COPProposal(code, list(NINE)), c)

    right = run(lambda q: q.options.index("42"), self_check=True)
    assert isinstance(right, Task) and right.answer == "42"
    (query,) = asked
    assert "42" in query.options and query.prompt == code
    wrong = run(lambda q: next(i for i, o in enumerate(q.options) if o != "42"), self_check=True)
    assert isinstance(wrong, Rejection) and wrong.reason is FailReason.UNSOLVED
    assert "you chose" in wrong.detail and "'42'" in wrong.detail and "game.self_check" in wrong.detail
    none = run(lambda q: None, self_check=True)
    assert none.reason is FailReason.UNSOLVED and "named no option" in none.detail
    assert run(lambda q: VOID, self_check=True).reason is FailReason.VOID
    asked.clear()
    assert isinstance(run(lambda q: None), Task) and not asked


def test_a_rejection_s_hint_names_only_the_settings_not_in_effect():
    default, tuned = COPGame(), COPGame(fill_distractors=True, n_distractors=3, topics=True)
    assert "game.fill_distractors=true" in default.rejection_hint("too_few_distractors")
    assert "game.n_distractors=3" in default.rejection_hint("too_few_distractors")
    assert tuned.rejection_hint("too_few_distractors") == "too few distinct wrong options"
    assert "game.topics=true" in default.rejection_hint("not_verifiable")
    assert "game.topics" not in tuned.rejection_hint("not_verifiable")
    assert "setter_repair: resample" in tuned.rejection_hint("not_verifiable")
    assert "events.jsonl" in default.rejection_hint("malformed") and default.rejection_hint("valid") is None

"""Practice tasks (:meth:`Game.practice_tasks`): items with known answers, made without a player,
for optimising an answerer's prompts. Each is answerable through its game's make_query/grade."""

from __future__ import annotations

import numpy as np
import pytest

from skate.answers.choice import normalize_text
from skate.games.base import Checks
from skate.games.cop import COPGame, COPProposal
from skate.games.cop.practice import printed, program, records, usable
from skate.games.mathquiz import MathQuizGame
from skate.games.mathquiz.generator import solve
from skate.games.pyjail import PyJailGame
from skate.games.scp import SCPGame
from skate.games.scp.practice import paragraphs_of
from skate.games.scp.rules import question_of
from skate.runlog.records import Task

N = 12


@pytest.fixture(scope="module")
def games():
    return {"cop": COPGame(), "mathquiz": MathQuizGame(), "scp": SCPGame()}


def right_reply(name, task, query):
    if name == "mathquiz":
        return task.answer
    return query.options.index(task.answer)


def wrong_reply(name, task, query):
    if name == "mathquiz":
        return str(int(task.answer) + 1)
    return next(i for i, o in enumerate(query.options) if o != task.answer)


@pytest.mark.parametrize("name", ["cop", "mathquiz", "scp"])
def test_practice_tasks_are_answerable_distinct_and_seeded(games, name):
    game = games[name]
    tasks = game.practice_tasks(N, np.random.default_rng(7))
    assert len(tasks) == N and all(isinstance(t, Task) for t in tasks)
    assert [t.task_id for t in tasks] == [f"practice-{name}-{k}" for k in range(N)]
    assert all(t.round == 0 and t.setter == "practice" for t in tasks)
    assert len({t.prompt for t in tasks}) == N
    again = game.practice_tasks(N, np.random.default_rng(7))
    assert again == tasks
    other = game.practice_tasks(N, np.random.default_rng(8))
    assert [t.prompt for t in other] != [t.prompt for t in tasks]
    rng = np.random.default_rng(0)
    for task in tasks:
        for _ in range(3):
            query = game.make_query(task, rng)
            assert game.grade(task, query, right_reply(name, task, query)) is True
            assert game.grade(task, query, wrong_reply(name, task, query)) is False
    assert game.practice_tasks(0, np.random.default_rng(7)) == []


def test_pyjail_has_no_practice_tasks():
    assert PyJailGame().practice_tasks(5, np.random.default_rng(0)) == []


# ---------------------------------------------------------------------- COP


def test_cop_printed_text_is_str_not_repr():
    assert printed("'abc'") == "abc"
    assert printed("['a', 1]") == "['a', 1]"
    assert printed("'two\\nlines\\n'") == "two\nlines"  # the game strips the final newlines
    assert printed("''") is None and printed("'  \\n'") is None  # prints nothing: COP refuses it
    assert printed("{1, 2}") is None and printed("[frozenset({'a'})]") is None  # set order varies
    assert printed("f(1)") is None  # not a literal


def test_cop_draws_distinct_records_with_the_games_distractors(games):
    game = games["cop"]
    assert len(records()) == 800 and len(usable()) == 778  # 22 records print an empty string
    tasks = game.practice_tasks(len(usable()) + 50, np.random.default_rng(1))
    assert len(tasks) == len(usable())
    assert len({t.data["source"] for t in tasks}) == len(tasks)
    for t in tasks:
        d = t.data["distractors"]
        assert len(d) == game.n_distractors
        keys = {normalize_text(x) for x in d}
        assert len(keys) == len(d) and normalize_text(t.answer) not in keys


def test_cop_answers_are_what_the_programs_print_in_the_sandbox(games, sandbox):
    """A sample of practice tasks, proposed as a setter would propose them, passes COP's own
    validation (run in the sandbox) and becomes the same task."""
    game = games["cop"]
    tasks = game.practice_tasks(20, np.random.default_rng(3))
    checks = Checks(
        round=0,
        setter="practice",
        assignment={},
        sandbox=sandbox,
        rng=np.random.default_rng(0),
        solve=lambda queries, rng: [None] * len(queries),
    )
    for task in tasks:
        valid = game.validate(COPProposal(task.prompt, list(task.data["distractors"])), checks)
        assert isinstance(valid, Task), (task.data["source"], valid)
        assert valid.answer == task.answer and valid.data["distractors"] == task.data["distractors"]
    results = sandbox.run_many([t.prompt for t in tasks])
    assert [r.stdout.rstrip("\n") for r in results] == [t.answer for t in tasks]


def test_cop_program_prints_f_of_the_input():
    assert program("def f(x):\n    return x\n", "'a', 1").endswith("\n\nprint(f('a', 1))\n")


# ---------------------------------------------------------------------- MathQuiz


def test_mathquiz_targets_lie_in_range_and_kinds_spread():
    game = MathQuizGame(target_min=-20, target_max=20)
    tasks = game.practice_tasks(40, np.random.default_rng(5))
    assert len(tasks) == 40
    assert all(-20 <= int(t.answer) <= 20 and solve(t.prompt) == int(t.answer) for t in tasks)
    assert len({t.data["kind"] for t in tasks}) >= 5
    difficulties = sorted(t.data["difficulty"] for t in tasks)
    assert difficulties[0] < 0.3 and difficulties[-1] > 0.7


# ---------------------------------------------------------------------- SCP


def test_scp_practice_avoids_the_played_benchmark(games):
    game = games["scp"]
    taken = set()
    for part in game.schedule:
        for k in part:
            taken |= paragraphs_of(game.benchmark[int(k)], game.sizes)
    tasks = game.practice_tasks(40, np.random.default_rng(2))
    # Cloze passages are five unbroken paragraphs of prose: the shipped corpus has 18, and the
    # played benchmark (all of its questions) covers every one, so practice mixes the other two.
    assert len(tasks) == 40 and {t.data["type"] for t in tasks} == {"sequencing", "prediction"}
    for t in tasks:
        assert t.data["groups"] == {"type": t.data["type"], "domain": t.data["domain"]}
        assert not paragraphs_of(question_of(t), game.sizes) & taken


def test_scp_player_set_mode_draws_from_the_whole_corpus():
    game = SCPGame(mode="player_set")
    tasks = game.practice_tasks(9, np.random.default_rng(4))
    assert [t.data["type"] for t in tasks] == ["cloze", "prediction", "sequencing"] * 3


def test_a_hint_without_a_try_already_in_effect():
    from skate.games.base import drop_try

    hint = "its replies could not be read (see events.jsonl): setter_repair: resample asks anew, a larger max_tokens"
    assert (
        drop_try(hint, "setter_repair: resample")
        == "its replies could not be read (see events.jsonl): a larger max_tokens"
    )
    assert drop_try("too few: setter_repair: resample asks anew", "setter_repair") == "too few"
    assert drop_try("nothing to try", "setter_repair") == "nothing to try"

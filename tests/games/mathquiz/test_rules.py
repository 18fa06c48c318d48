"""MathQuiz rules: targets, every way a question is rejected, the setter's own answer, grading."""

from __future__ import annotations

import numpy as np
import pytest

from skate.answers.exact import ExactQuery
from skate.games.base import Checks
from skate.games.mathquiz import MathQuizGame, MathQuizProposal
from skate.games.mathquiz.rules import states_number
from skate.runlog.records import VOID, FailReason, Rejection, Task

QUESTION = "A baker makes 12 trays of 9 rolls and sells 31 of them. How many rolls are left?"  # 77


def checks(target=77, reply="77", seen=None):
    def solve(queries, rng):
        if seen is not None:
            seen.extend(queries)
        return [reply] * len(queries)

    return Checks(
        round=4,
        setter="ann",
        assignment={"target": target},
        sandbox=None,  # type: ignore[arg-type]
        rng=np.random.default_rng(0),
        solve=solve,
    )


def test_each_setter_gets_a_target_from_the_configured_range():
    game = MathQuizGame(target_min=10, target_max=12)
    targets = {game.assignment("ann", r, np.random.default_rng(r))["target"] for r in range(60)}
    assert targets == {10, 11, 12}
    assert game.assignment("ann", 1, np.random.default_rng(5)) == game.assignment("ann", 1, np.random.default_rng(5))


def test_a_question_the_setter_solves_becomes_a_task():
    seen = []
    task = MathQuizGame().validate(MathQuizProposal(QUESTION), checks(seen=seen))
    assert isinstance(task, Task)
    assert (task.task_id, task.prompt, task.answer) == ("r004-ann", QUESTION, "77")
    assert task.data == {"setter_answer": "77"}
    # the setter answered in a fresh context: the question only, never the target
    assert seen == [ExactQuery(QUESTION)]


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        ("76", "you answered 76, not the target 77"),
        (None, "no number"),
        ("770", "not the target 77"),
    ],
)
def test_a_question_the_setter_cannot_solve_is_rejected_with_the_reason(reply, says):
    rej = MathQuizGame().validate(MathQuizProposal(QUESTION), checks(reply=reply))
    assert isinstance(rej, Rejection) and rej.reason is FailReason.UNSOLVED and says in rej.detail


def test_the_setter_s_answer_is_normalised_like_everyone_s():
    assert isinstance(MathQuizGame().validate(MathQuizProposal(QUESTION), checks(reply="The answer is 77.")), Task)


def test_a_void_self_answer_is_not_the_setter_s_fault():
    rej = MathQuizGame().validate(MathQuizProposal(QUESTION), checks(reply=VOID))
    assert rej.reason is FailReason.VOID


@pytest.mark.parametrize(
    "question",
    [
        "What is 70 + 7? (It is 77.)",
        "Ann has 1,077 marbles... no: 77 of them. How many?",
        "The total is 77.0 apples; how many apples?",
    ],
)
def test_a_question_that_states_its_target_is_rejected(question):
    rej = MathQuizGame().validate(MathQuizProposal(question), checks())
    assert rej.reason is FailReason.BREAKS_RULES and "states its own answer, 77" in rej.detail


def test_numbers_that_merely_contain_the_target_are_fine():
    assert not states_number("There are 770 or 177 or 7.7 of them", 77)
    assert states_number("It costs $1,000 in all", 1000) and states_number("minus -5 degrees", -5)
    assert not states_number("5 degrees", -5)


@pytest.mark.parametrize(
    ("proposal", "says"),
    [
        (MathQuizProposal("   "), "no question"),
        (MathQuizProposal("", note="the reply has no [[ ## question ## ]] section"), "no [[ ## question"),
        (MathQuizProposal("x" * 3000), "3000 characters long; the limit is 2000"),
    ],
)
def test_empty_or_overlong_questions_are_malformed(proposal, says):
    rej = MathQuizGame().validate(proposal, checks())
    assert rej.reason is FailReason.MALFORMED and says in rej.detail


def test_queries_show_the_question_and_grading_normalises():
    game = MathQuizGame()
    task = Task("t", 1, "ann", QUESTION, "77")
    q = game.make_query(task, np.random.default_rng(0))
    assert q == ExactQuery(QUESTION)
    assert game.grade(task, q, "77") and game.grade(task, q, "\\boxed{77}") and game.grade(task, q, "77.0")
    assert not game.grade(task, q, "770") and not game.grade(task, q, "-77") and not game.grade(task, q, "7")


def test_config_checks_name_the_key():
    import skate
    from skate.errors import ConfigError

    for values, key in [
        ({"game.target_min": 5}, None),
        ({"game.target_min": 2000}, "game.target_min"),
        ({"game.max_question_chars": 5}, "game.max_question_chars"),
        ({"game.rounds": 0}, "game.rounds"),
    ]:
        if key is None:
            skate.config(values=values, game="mathquiz")
            continue
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
            skate.config(values=values, game="mathquiz")

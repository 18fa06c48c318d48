"""Simulated MathQuiz players: answering by skill against difficulty, setting for the target,
and defects that validation catches."""

from __future__ import annotations

import numpy as np
import pytest

from skate.answers.exact import ExactQuery, normalize_number
from skate.estimators.base import Sampler
from skate.games.base import Checks
from skate.games.mathquiz import MathQuizGame, MathQuizProposal
from skate.games.mathquiz.generator import generate_question, question_difficulty, solve
from skate.games.mathquiz.simulated import FLAWS, MathQuizSimulation
from skate.players.simulated import SimulatedPlayer
from skate.runlog.records import FailReason, Rejection, SetterContext, Task


@pytest.fixture(scope="module")
def sim():
    return MathQuizSimulation()


def player(sim, skill=0.6, **kw):
    kw.setdefault("noise", 0.0)
    return SimulatedPlayer(name="p", skill=skill, sim=sim, seed=0, **kw)


def ctx(target=417, attempt=1, failed=()):
    return SetterContext(
        player="p",
        players=("p", "q"),
        round=1,
        rounds=10,
        attempt=attempt,
        attempts_left=4 - attempt,
        failed=tuple(failed),
        history=(),
        strategy="no_info",
        assignment={"target": target},
    )


def checks(p, target=417, seed=0):
    return Checks(
        round=1,
        setter="p",
        assignment={"target": target},
        sandbox=None,  # type: ignore[arg-type]
        rng=np.random.default_rng(seed),
        solve=p.answer,
    )


def test_p_correct_is_know_itself(sim):
    question = generate_question("shopping", 0.5, 300, np.random.default_rng(3))
    p = player(sim, skill=question_difficulty(question))  # knows about half the time
    task = Task("t", 1, "q", question, "300")
    correct, unreadable, void = Sampler(MathQuizGame(), task, p.answer)(4000, np.random.default_rng(1))
    know = p.p_know(question)
    assert 0.3 < know < 0.7 and (unreadable, void) == (0, 0)
    assert correct / 4000 == pytest.approx(know, abs=0.03)  # no guessing floor in free-form answers


def test_stronger_players_answer_harder_questions(sim):
    rng = np.random.default_rng(0)
    easy = generate_question("travel", 0.1, 50, rng)
    hard = generate_question("travel", 0.7, 50, rng)
    d = question_difficulty(hard)
    weak, strong = player(sim, d - 0.2), player(sim, d + 0.2)
    assert strong.p_know(hard) > 0.95 and weak.p_know(hard) < 0.05
    assert weak.p_know(easy) > 0.95 and question_difficulty(easy) < d


def test_replies_come_in_every_form_and_all_of_them_grade(sim):
    question = generate_question("recipes", 0.2, 1234, np.random.default_rng(0))
    replies = player(sim, 0.99).answer([ExactQuery(question)] * 200, np.random.default_rng(0))
    assert len(set(replies)) >= 4  # "1234", "1,234", "The answer is 1234.", "\\boxed{1234}", ...
    assert {normalize_number(r) for r in replies} == {"1234"}


def test_a_player_who_does_not_know_slips_and_never_hits_by_luck(sim):
    question = generate_question("inventory", 0.9, 77, np.random.default_rng(0))
    replies = player(sim, 0.05).answer([ExactQuery(question)] * 200, np.random.default_rng(0))
    assert all(normalize_number(r) != "77" for r in replies)
    assert len({normalize_number(r) for r in replies}) > 1


def test_a_question_a_language_model_wrote_cannot_be_read(sim):
    question = "A farmer has 17 sheep; all but 9 run away. How many are left?"
    truth, slips = sim.read(question)
    assert solve(question) is None and truth is None and slips
    replies = player(sim, 0.99).answer([ExactQuery(question)] * 20, np.random.default_rng(0))
    assert {int(normalize_number(r)) for r in replies} <= set(slips)  # a guess, however skilled


def test_a_careful_setter_writes_a_question_for_its_target(sim):
    game = MathQuizGame()
    p = player(sim, skill=0.95, pitch=-0.3, sloppiness=0.0)
    for seed in range(6):
        prop = p.set_task(ctx(target=100 + seed), np.random.default_rng(seed))
        assert solve(prop.question) == 100 + seed
        task = game.validate(prop, checks(p, target=100 + seed, seed=seed))
        assert isinstance(task, Task) and task.answer == str(100 + seed)


@pytest.mark.parametrize(
    ("flaw", "reason"),
    [
        ("states_target", FailReason.BREAKS_RULES),
        ("empty", FailReason.MALFORMED),
        ("wrong_target", FailReason.UNSOLVED),
    ],
)
def test_each_defect_is_caught_by_validation(sim, flaw, reason):
    p = player(sim, skill=0.99)
    good = MathQuizProposal(generate_question("savings", 0.2, 417, np.random.default_rng(0)))
    seed = next(s for s in range(100) if str(np.random.default_rng(s).choice(list(FLAWS))) == flaw)
    bad = sim.flaw(p, ctx(), good, np.random.default_rng(seed))
    rej = MathQuizGame().validate(bad, checks(p))
    assert isinstance(rej, Rejection) and rej.reason is reason, rej


def test_a_setter_that_could_not_solve_its_question_aims_easier(sim):
    from skate.runlog.records import FailedAttempt

    p = player(sim, skill=0.6)
    failed = [FailedAttempt(1, "...", FailReason.UNSOLVED, "you answered 3, not the target 4")]
    before = np.mean([p.target_difficulty(ctx(), np.random.default_rng(s)) for s in range(30)])
    after = np.mean([p.target_difficulty(ctx(attempt=2, failed=failed), np.random.default_rng(s)) for s in range(30)])
    assert after == pytest.approx(before - 0.1, abs=0.01)

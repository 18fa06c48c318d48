"""Simulated COP players: answering follows skill vs difficulty, setting uses what history
allows, defects exercise every validity check."""

from __future__ import annotations

import numpy as np
import pytest

from skate.estimators.base import Sampler
from skate.games.base import Checks, GameEnv
from skate.games.cop import COPGame, COPProposal
from skate.games.cop import generator as programs
from skate.games.cop.difficulty import code_difficulty
from skate.games.cop.distractors import make_distractors
from skate.games.cop.simulated import FLAWS, COPSimulation, SandboxOracle
from skate.players.simulated import SimulatedPlayer
from skate.runlog.records import FailedAttempt, FailReason, HistoryItem, Rejection, SetterContext, Task


@pytest.fixture(scope="module")
def oracle(sandbox):
    return SandboxOracle(sandbox)


@pytest.fixture(scope="module")
def sim(oracle, sandbox):
    return COPSimulation(COPGame(), GameEnv(sandbox), oracle)


def player(sim, name="p", skill=0.6, **kw):
    kw.setdefault("noise", 0.0)
    return SimulatedPlayer(name=name, skill=skill, sim=sim, seed=0, **kw)


def validate(game, proposal, sandbox):
    checks = Checks(
        round=1,
        setter="p",
        assignment={},
        sandbox=sandbox,
        rng=np.random.default_rng(0),
        solve=lambda queries, rng: [None] * len(queries),
    )
    return game.validate(proposal, checks)


def ctx(name="p", strategy="hist_perf", history=(), failed=(), attempt=1, rnd=5):
    return SetterContext(
        player=name,
        players=(name, "q"),
        round=rnd,
        rounds=50,
        attempt=attempt,
        attempts_left=4 - attempt,
        failed=tuple(failed),
        history=tuple(history),
        strategy=strategy,
    )


def program(kind, d, seed=0):
    return programs.generate_program(kind, d, np.random.default_rng(seed))


def test_knowing_rises_with_skill_and_falls_with_difficulty(sim):
    easy, hard = program("arithmetic", 0.0), program("arithmetic", 1.0)
    assert code_difficulty(easy) < code_difficulty(hard)
    weak, strong = player(sim, skill=0.2), player(sim, skill=0.95)
    assert strong.p_know(easy) > weak.p_know(easy)
    assert strong.p_know(hard) > weak.p_know(hard)
    assert weak.p_know(easy) > weak.p_know(hard)


def test_topic_skill_is_added_for_that_kind_only(sim):
    code = program("strings", 0.5)
    base = player(sim, skill=0.5)
    buff = player(sim, skill=0.5, topic_skill={"strings": 0.2})
    assert buff.effective_skill(code) == pytest.approx(base.effective_skill(code) + 0.2)
    other = program("recursion", 0.5)
    assert buff.effective_skill(other) == pytest.approx(base.effective_skill(other))


def test_unknown_topic_kind_is_a_clear_error(sim):
    with pytest.raises(ValueError, match="valid kinds"):
        player(sim, topic_skill={"astrology": 0.1})


def test_answer_accuracy_matches_the_model(sim, sandbox):
    code = program("dicts", 0.5)
    res = sandbox.run(code)
    answer = res.stdout.rstrip("\n")
    task = Task(
        "t", 1, "q", code, answer, {"distractors": tuple(make_distractors(answer, 9, np.random.default_rng(0)))}
    )
    p = player(sim, skill=code_difficulty(code))  # knows about half the time
    correct, unreadable, void = Sampler(COPGame(), task, p.answer)(4000, np.random.default_rng(1))
    know = p.p_know(code)
    assert 0.3 < know < 0.7
    assert (unreadable, void) == (0, 0)
    assert correct / 4000 == pytest.approx(know + (1 - know) / 4, abs=0.03)


def test_blind_spot_noise_is_fixed_per_task(sim):
    p = player(sim, noise=0.1)
    a, b = program("sorting", 0.5, 1), program("sorting", 0.5, 2)
    assert p.effective_skill(a) == p.effective_skill(a)
    assert p.effective_skill(a) != p.effective_skill(b)


def test_a_careful_setter_writes_valid_tasks(sim, sandbox):
    p = player(sim, sloppiness=0.0)
    game = COPGame()
    for seed in range(8):
        prop = p.set_task(ctx(strategy="no_info"), np.random.default_rng(seed))
        task = validate(game, prop, sandbox)
        assert isinstance(task, Task), task


@pytest.mark.parametrize(
    ("flaw", "reason"),
    [
        ("crash", FailReason.NOT_VERIFIABLE),
        ("silent", FailReason.NOT_VERIFIABLE),
        ("nondeterministic", FailReason.NOT_VERIFIABLE),
        ("few_distractors", FailReason.TOO_FEW_DISTRACTORS),
    ],
)
def test_each_defect_is_caught_by_validation(sim, sandbox, flaw, reason):
    code = program("slicing", 0.4)
    good = COPProposal(code, make_distractors(sim.oracle(code), 9, np.random.default_rng(0)))
    seed = next(s for s in range(100) if str(np.random.default_rng(s).choice(list(FLAWS))) == flaw)
    bad = sim.flaw(player(sim), ctx(), good, np.random.default_rng(seed))
    rej = validate(COPGame(), bad, sandbox)
    assert isinstance(rej, Rejection) and rej.reason is reason


def test_sloppy_setters_fail_sometimes_and_less_on_retries(sim, sandbox):
    p = player(sim, sloppiness=0.6)
    game = COPGame()

    def failure_rate(attempt):
        fails = 0
        for seed in range(30):
            prop = p.set_task(ctx(strategy="no_info", attempt=attempt), np.random.default_rng(seed))
            fails += isinstance(validate(game, prop, sandbox), Rejection)
        return fails / 30

    first, third = failure_rate(1), failure_rate(3)
    assert 0.3 < first < 0.9 and third < first


def history(name, difficulty, p_own, n=6, kind="arithmetic", others=None):
    items = []
    for i in range(n):
        code = program(kind, difficulty, seed=100 + i)
        scores = {name: p_own, **({"q": others} if others is not None else {})}
        items.append(HistoryItem(number=2 * i + 1, round=i + 1, setter=name, prompt=code, p_correct=scores))
    return items


def mean_target(p, c, n=40):
    return np.mean([p.target_difficulty(c, np.random.default_rng(s)) for s in range(n)])


def test_hist_perf_setter_moves_towards_what_it_can_answer(sim):
    p = player(sim, skill=0.6, pitch=0.0)
    prior = mean_target(p, ctx(strategy="no_info"))
    too_easy = history("p", 0.2, p_own=1.0)
    too_hard = history("p", 0.9, p_own=0.25)
    d_easy = np.mean([code_difficulty(h.prompt) for h in too_easy])
    d_hard = np.mean([code_difficulty(h.prompt) for h in too_hard])
    up = mean_target(p, ctx(history=too_easy))
    down = mean_target(p, ctx(history=too_hard))
    assert up > d_easy + 0.05  # scored everything on easy tasks: go harder than those
    assert down < d_hard - 0.1  # failed hard tasks: go easier than those
    assert prior == pytest.approx(0.6, abs=0.03)


def test_setters_without_scores_keep_their_pitch(sim):
    p = player(sim, skill=0.6, pitch=0.2)
    hist = [HistoryItem(h.number, h.round, h.setter, h.prompt, None) for h in history("p", 0.1, 1.0)]
    assert mean_target(p, ctx(strategy="hist_tasks", history=hist)) == pytest.approx(0.8, abs=0.03)


def test_setters_that_see_their_tasks_spread_over_unused_kinds(sim):
    p = player(sim)
    hist = [h for k in programs.KINDS[:-2] for h in history("p", 0.5, 0.7, n=2, kind=k)]
    hist = [HistoryItem(h.number, h.round, h.setter, h.prompt, None) for h in hist]
    picks = [p.choose_kind(ctx(strategy="hist_tasks", history=hist), np.random.default_rng(s)) for s in range(60)]
    assert np.mean([k in programs.KINDS[-2:] for k in picks]) > 0.6
    blind = [p.choose_kind(ctx(strategy="no_info"), np.random.default_rng(s)) for s in range(60)]
    assert np.mean([k in programs.KINDS[-2:] for k in blind]) < 0.4


def test_not_unique_feedback_makes_the_setter_change_kind(sim):
    p = player(sim)
    failed = [FailedAttempt(1, program(k, 0.5), FailReason.NOT_UNIQUE, "too similar") for k in programs.KINDS[:-1]]
    picks = {
        p.choose_kind(ctx(strategy="no_info", failed=failed, attempt=2), np.random.default_rng(s)) for s in range(20)
    }
    assert picks == {programs.KINDS[-1]}


def test_rival_scores_steer_towards_kinds_where_the_setter_wins(sim):
    p = player(sim)
    good = history("p", 0.5, p_own=0.9, n=3, kind="recursion", others=0.2)
    bad = history("p", 0.5, p_own=0.5, n=3, kind="strings", others=0.9)
    hist = good + bad
    picks = [p.choose_kind(ctx(strategy="full_personal", history=hist), np.random.default_rng(s)) for s in range(200)]
    assert picks.count("recursion") > 2 * max(1, picks.count("strings"))
    # with hist_perf the rivals' scores are not visible, so no such preference can form
    own_only = [HistoryItem(h.number, h.round, h.setter, h.prompt, {"p": h.p_correct["p"]}) for h in hist]
    assert p._kind_advantage(ctx(strategy="hist_perf", history=own_only)) == {}

"""Simulated players: answering follows skill vs difficulty, setting uses what history allows,
defects exercise every validity check."""

from __future__ import annotations

import numpy as np
import pytest

from skate.games.base import GameSpec
from skate.games.cop import COPGame
from skate.players import programs
from skate.players.simulated import SandboxOracle, SimulatedPlayer
from skate.records import FailedAttempt, FailReason, HistoryItem, Rejection, SetterContext, Task

SPEC = GameSpec("cop", rounds=50, attempts=3, n_distractors=9, n_options=4)


@pytest.fixture(scope="module")
def oracle(sandbox):
    return SandboxOracle(sandbox)


def player(oracle, name="p", skill=0.6, **kw):
    kw.setdefault("noise", 0.0)
    return SimulatedPlayer(name=name, skill=skill, spec=SPEC, oracle=oracle, seed=0, **kw)


def ctx(name="p", strategy="hist_perf", history=(), failed=(), attempt=1, rnd=5):
    return SetterContext(player=name, players=(name, "q"), round=rnd, rounds=50, attempt=attempt,
                         attempts_left=4 - attempt, failed=tuple(failed), history=tuple(history),
                         strategy=strategy)


def program(kind, d, seed=0):
    return programs.generate_program(kind, d, np.random.default_rng(seed))


def test_knowing_rises_with_skill_and_falls_with_difficulty(oracle):
    easy, hard = program("arithmetic", 0.0), program("arithmetic", 1.0)
    assert programs.code_difficulty(easy) < programs.code_difficulty(hard)
    weak, strong = player(oracle, skill=0.2), player(oracle, skill=0.95)
    assert strong.p_know(easy) > weak.p_know(easy)
    assert strong.p_know(hard) > weak.p_know(hard)
    assert weak.p_know(easy) > weak.p_know(hard)


def test_topic_skill_is_added_for_that_kind_only(oracle):
    code = program("strings", 0.5)
    base = player(oracle, skill=0.5)
    buff = player(oracle, skill=0.5, topic_skill={"strings": 0.2})
    assert buff.effective_skill(code) == pytest.approx(base.effective_skill(code) + 0.2)
    other = program("recursion", 0.5)
    assert buff.effective_skill(other) == pytest.approx(base.effective_skill(other))


def test_unknown_topic_kind_is_a_clear_error(oracle):
    with pytest.raises(ValueError, match="valid kinds"):
        player(oracle, topic_skill={"astrology": 0.1})


def test_answer_accuracy_matches_the_model(oracle, sandbox):
    code = program("dicts", 0.5)
    res = sandbox.run(code)
    answer = res.stdout.rstrip("\n")
    task = Task("t", 1, "q", code, answer, tuple(programs.make_distractors(answer, 9, np.random.default_rng(0))))
    from skate.scoring import draw_option_sets

    p = player(oracle, skill=programs.code_difficulty(code))  # knows about half the time
    rng = np.random.default_rng(1)
    sets, where = draw_option_sets(task, 4000, 4, rng)
    picks = p.answer_batch(code, sets, rng)
    acc = np.mean([a == w for a, w in zip(picks, where)])
    know = p.p_know(code)
    assert 0.3 < know < 0.7
    assert acc == pytest.approx(know + (1 - know) / 4, abs=0.03)


def test_blind_spot_noise_is_fixed_per_task(oracle):
    p = player(oracle, noise=0.1)
    a, b = program("sorting", 0.5, 1), program("sorting", 0.5, 2)
    assert p.effective_skill(a) == p.effective_skill(a)
    assert p.effective_skill(a) != p.effective_skill(b)


def test_a_careful_setter_writes_valid_tasks(oracle, sandbox):
    p = player(oracle, sloppiness=0.0)
    game = COPGame()
    for seed in range(8):
        prop = p.set_task(ctx(strategy="no_info"), np.random.default_rng(seed))
        task = game.validate(prop, round=1, setter="p", sandbox=sandbox)
        assert isinstance(task, Task), task


@pytest.mark.parametrize(
    ("flaw", "reason"),
    [("crash", FailReason.NOT_VERIFIABLE), ("silent", FailReason.NOT_VERIFIABLE),
     ("nondeterministic", FailReason.NOT_VERIFIABLE), ("few_distractors", FailReason.TOO_FEW_DISTRACTORS)],
)
def test_each_defect_is_caught_by_validation(oracle, sandbox, flaw, reason):
    code = program("slicing", 0.4)
    answer = oracle(code)
    ds = programs.make_distractors(answer, 9, np.random.default_rng(0))
    bad_code, bad_ds = SimulatedPlayer._add_flaw(flaw, code, ds, answer, np.random.default_rng(0))
    from skate.games.cop import COPProposal

    rej = COPGame().validate(COPProposal(bad_code, bad_ds), round=1, setter="p", sandbox=sandbox)
    assert isinstance(rej, Rejection) and rej.reason is reason


def test_sloppy_setters_fail_sometimes_and_less_on_retries(oracle, sandbox):
    p = player(oracle, sloppiness=0.6)
    game = COPGame()

    def failure_rate(attempt):
        fails = 0
        for seed in range(30):
            prop = p.set_task(ctx(strategy="no_info", attempt=attempt), np.random.default_rng(seed))
            fails += isinstance(game.validate(prop, round=1, setter="p", sandbox=sandbox), Rejection)
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


def test_hist_perf_setter_moves_towards_what_it_can_answer(oracle):
    p = player(oracle, skill=0.6, pitch=0.0)
    prior = mean_target(p, ctx(strategy="no_info"))
    too_easy = history("p", 0.2, p_own=1.0)
    too_hard = history("p", 0.9, p_own=0.25)
    d_easy = np.mean([programs.code_difficulty(h.prompt) for h in too_easy])
    d_hard = np.mean([programs.code_difficulty(h.prompt) for h in too_hard])
    up = mean_target(p, ctx(history=too_easy))
    down = mean_target(p, ctx(history=too_hard))
    assert up > d_easy + 0.05  # scored everything on easy tasks: go harder than those
    assert down < d_hard - 0.1  # failed hard tasks: go easier than those
    assert prior == pytest.approx(0.6, abs=0.03)


def test_setters_without_scores_keep_their_pitch(oracle):
    p = player(oracle, skill=0.6, pitch=0.2)
    hist = [HistoryItem(h.number, h.round, h.setter, h.prompt, None) for h in history("p", 0.1, 1.0)]
    assert mean_target(p, ctx(strategy="hist_tasks", history=hist)) == pytest.approx(0.8, abs=0.03)


def test_setters_that_see_their_tasks_spread_over_unused_kinds(oracle):
    p = player(oracle)
    hist = [h for k in programs.KINDS[:-2] for h in history("p", 0.5, 0.7, n=2, kind=k)]
    hist = [HistoryItem(h.number, h.round, h.setter, h.prompt, None) for h in hist]
    picks = [p.choose_kind(ctx(strategy="hist_tasks", history=hist), np.random.default_rng(s)) for s in range(60)]
    assert np.mean([k in programs.KINDS[-2:] for k in picks]) > 0.6
    blind = [p.choose_kind(ctx(strategy="no_info"), np.random.default_rng(s)) for s in range(60)]
    assert np.mean([k in programs.KINDS[-2:] for k in blind]) < 0.4


def test_not_unique_feedback_makes_the_setter_change_kind(oracle):
    p = player(oracle)
    failed = [FailedAttempt(1, program(k, 0.5), FailReason.NOT_UNIQUE, "too similar") for k in programs.KINDS[:-1]]
    picks = {p.choose_kind(ctx(strategy="no_info", failed=failed, attempt=2), np.random.default_rng(s)) for s in range(20)}
    assert picks == {programs.KINDS[-1]}


def test_rival_scores_steer_towards_kinds_where_the_setter_wins(oracle):
    p = player(oracle)
    good = history("p", 0.5, p_own=0.9, n=3, kind="recursion", others=0.2)
    bad = history("p", 0.5, p_own=0.5, n=3, kind="strings", others=0.9)
    hist = good + bad
    picks = [p.choose_kind(ctx(strategy="full_personal", history=hist), np.random.default_rng(s)) for s in range(200)]
    assert picks.count("recursion") > 2 * max(1, picks.count("strings"))
    # with hist_perf the rivals' scores are not visible, so no such preference can form
    own_only = [HistoryItem(h.number, h.round, h.setter, h.prompt, {"p": h.p_correct["p"]}) for h in hist]
    assert p._kind_advantage(ctx(strategy="hist_perf", history=own_only)) == {}

"""Setter guidance: every game's setter prompt (the messages a model gets) carries the guidance of
the run's augmentation strategy and no other strategy's; scores show as percentages; COP's rules
carry its own points."""

from __future__ import annotations

import numpy as np
import pytest

from skate.augment import Augmentation, ScoredTask, Strategy
from skate.games.cop.modules import COPSetter
from skate.games.mathquiz.modules import MathQuizSetter
from skate.games.pyjail.modules import PyJailSetter
from skate.games.pyjail.rules import PyJailGame
from skate.games.scp.modules import SCPSetter
from skate.games.scp.rules import SCPGame
from skate.llm.modules import STRATEGY_GUIDANCE, render_guidance
from skate.runlog.records import SetterContext, Task

# A phrase only each strategy's guidance has.
MARKERS = {
    "no_info": "nothing to calibrate against",
    "hist_tasks": "without any scores",
    "hist_perf": "each with your own score on it",
    "full_personal": "your own earlier tasks, each with every player's score",
    "full_context": "every player's earlier tasks",
}
BAND = "between 60% and 80% of the time"
COMMON = "Points come from the other players failing your task"


def test_every_strategy_has_guidance_and_a_marker_of_its_own():
    assert set(STRATEGY_GUIDANCE) == {s.value for s in Strategy} == set(MARKERS)
    for strategy, marker in MARKERS.items():
        text = render_guidance(strategy)
        assert sum(m in text for m in MARKERS.values()) == 1 and marker in text


def _history(strategy: str, player: str = "ace"):
    """What the strategy shows ``player`` of a small archive (through the real augmentation)."""
    archive = [
        ScoredTask(Task(f"r001-{s}", 1, s, f"print({i})", str(i)), {"ace": 0.85, "mid": 0.3})
        for i, s in enumerate(("ace", "mid"))
    ]
    return Augmentation(strategy=strategy).history(player, archive, np.random.default_rng(0))


def _ctx(strategy: str, assignment=None) -> SetterContext:
    return SetterContext(
        player="ace",
        players=("ace", "mid"),
        round=2,
        rounds=5,
        attempt=1,
        attempts_left=3,
        failed=(),
        history=_history(strategy),
        strategy=strategy,
        assignment=assignment or {},
    )


def _setters():
    scp = SCPGame(mode="player_set")
    return {
        "cop": (COPSetter(), {}),
        "mathquiz": (MathQuizSetter(), {"target": 42}),
        "pyjail": (PyJailSetter(PyJailGame()), {}),
        "scp": (SCPSetter(scp), scp.assignment("ace", 2, np.random.default_rng(0))),
    }


SETTERS = _setters()


@pytest.mark.parametrize("strategy", list(MARKERS))
@pytest.mark.parametrize("game", sorted(SETTERS))
def test_the_rendered_setter_prompt_carries_its_strategy_s_guidance_only(game, strategy):
    setter, assignment = SETTERS[game]
    messages = setter.messages(_ctx(strategy, assignment))
    text = "\n".join(m["content"] for m in messages)
    user = messages[-1]["content"]
    assert "[[ ## guidance ## ]]" in user and COMMON in user
    assert MARKERS[strategy] in user
    assert [s for s, m in MARKERS.items() if m in text and s != strategy] == []
    scored = strategy in ("hist_perf", "full_personal", "full_context")
    assert (BAND in user) is scored  # the 60-80% band only where the setter sees its own scores
    assert ("less than 55% of the time" in user) is scored
    assert ("weakness" in user) is (strategy in ("full_personal", "full_context"))
    # scores in the history are percentages, and only where the strategy shows them
    assert ("you 85%" in user) is scored and "0.85" not in user
    assert ("mid 30%" in user) is (strategy in ("full_personal", "full_context"))


def test_the_band_follows_the_pass_mark():
    text = render_guidance("hist_perf", pass_mark=0.7)
    assert "less than 70% of the time" in text and "between 75% and 85% of the time" in text
    assert BAND in render_guidance("hist_perf", pass_mark=0.55)


def test_an_unknown_strategy_says_which_exist():
    with pytest.raises(ValueError, match="no_info, hist_tasks, hist_perf, full_personal, full_context"):
        render_guidance("everything")


def test_cop_rules_carry_cop_s_own_points():
    rules = COPSetter().inputs(_ctx("no_info"))["rules"]
    for point in (
        "its first line is a comment naming the point of Python it tests",
        "prints a value with print() (a number, string, list",
        "not a bare True or False",
        "not a deliberate syntax error",
        "not plain bookkeeping of a few variables",
        "the same text every time it runs",
        "no randomness, clock, environment",
        "id() or default object reprs",
        "a function it defines does nothing until the program calls it",
        "written exactly as print() would show it",
    ):
        assert point in rules, point


def test_the_guidance_is_an_input_every_setter_signature_has():
    for setter, _ in SETTERS.values():
        assert "guidance" in setter.predict.signature.input_fields
        assert "guidance" in setter.predict.signature.instructions

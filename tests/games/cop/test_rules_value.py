"""COP's print-a-value rule (``game.require_value``): a program whose whole output is True/False
is rejected with a reason that says what to fix, unless the rule is switched off; the setter's
rules say so; the program generator (simulated and fake setters) never writes such a program."""

from __future__ import annotations

import numpy as np
import pytest

import skate
from skate.games.base import Checks
from skate.games.cop import COPGame, COPProposal
from skate.games.cop.generator import KINDS, boolean_only, generate_program, predict_output
from skate.games.cop.modules import COPSetter
from skate.runlog.records import FailReason, Rejection, SetterContext, Task
from skate.settings.build import build_game

NINE = [str(i) for i in range(10, 19)]


def validate(sandbox, code, **kw):
    checks = Checks(
        round=1,
        setter="p1",
        assignment={},
        sandbox=sandbox,
        rng=np.random.default_rng(0),
        solve=lambda queries, rng: [None] * len(queries),
    )
    return COPGame(**kw).validate(COPProposal(code, list(NINE)), checks)


@pytest.mark.parametrize(
    ("output", "only"),
    [
        ("True", True),
        ("False\n", True),
        ("True False\nTrue", True),
        ("  True  ", True),
        ("[True, False]", False),
        ("true", False),
        ("1", False),
        ("True!", False),
        ("", False),
        ("Truth", False),
    ],
)
def test_what_counts_as_a_boolean_only_output(output, only):
    assert boolean_only(output) is only


@pytest.mark.parametrize(
    "code", ["print(3 > 2)", "print(isinstance(1, int), 'a' in 'abc')", "print(all([]))\nprint(any([]))"]
)
def test_a_program_printing_only_booleans_is_rejected_with_what_to_fix(sandbox, code):
    rej = validate(sandbox, code)
    assert isinstance(rej, Rejection) and rej.reason is FailReason.BREAKS_RULES
    assert "boolean" in rej.detail and "print a value" in rej.detail and "game.require_value" in rej.detail


@pytest.mark.parametrize(
    "code", ["print([3 > 2, 1 > 2])", "print(sum([True, True, False]))", "print(repr(str(True)) * 2)"]
)
def test_a_value_built_from_booleans_is_accepted(sandbox, code):
    assert isinstance(validate(sandbox, code), Task)


def test_switched_off_a_boolean_program_is_a_task(sandbox):
    task = validate(sandbox, "print(3 > 2)", require_value=False)
    assert isinstance(task, Task) and task.answer == "True"


def test_the_rule_is_on_by_default_and_off_by_config():
    on = build_game(skate.SkateConfig().game)
    off = build_game(skate.preset("cop", "game", values={"require_value": False}))
    assert isinstance(on, COPGame) and on.require_value is True and off.require_value is False


def _rules(require_value: bool) -> str:
    ctx = SetterContext(
        player="p",
        players=("p", "q"),
        round=1,
        rounds=5,
        attempt=1,
        attempts_left=3,
        failed=(),
        history=(),
        strategy="hist_perf",
    )
    return COPSetter(require_value=require_value).inputs(ctx)["rules"]


def test_the_setter_is_told_to_print_a_value_and_whether_a_boolean_is_rejected():
    on, off = _rules(True), _rules(False)
    for rules in (on, off):
        assert "prints a value" in rules and "not a bare True or False" in rules
    assert "prints only True or False (not a value)" in on and "such a program is rejected" in on
    assert "prints only True or False" not in off and "such a program is rejected" not in off


def test_the_generator_never_writes_a_boolean_only_program():
    """Recursion programs printed only booleans about one time in ten before drafts were redrawn
    (and about 1% over every kind: see B-BENCHMARKS)."""
    rng = np.random.default_rng(7)
    outputs = [predict_output(generate_program("recursion", float(rng.random()), rng)) for _ in range(150)]
    outputs += [predict_output(generate_program(k, float(rng.random()), rng)) for k in KINDS for _ in range(8)]
    assert not [o for o in outputs if boolean_only(o)]
    # and the recursion kind still prints booleans inside values (the check is not vacuous)
    assert any("True" in o or "False" in o for o in outputs)

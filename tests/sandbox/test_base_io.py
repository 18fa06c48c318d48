"""Input, one environment variable and a function's return value, through every sandbox."""

from __future__ import annotations

import os

import pytest

from skate.sandbox import Outcome
from skate.sandbox.call import call_function


def test_stdin_reaches_the_program_and_ends(any_sandbox):
    res = any_sandbox.run(
        "import sys\ndata = sys.stdin.read()\nprint(repr(data))\nprint(repr(sys.stdin.read()))",
        stdin="line one\nzwei – ü\n",
    )
    assert res.ok, res
    assert res.stdout == "'line one\\nzwei – ü\\n'\n''\n"


def test_env_is_only_what_is_given(any_sandbox, monkeypatch):
    monkeypatch.setenv("SKATE_HOST_SECRET", "host-only-value")
    res = any_sandbox.run(
        "import os\nprint(os.environ.get('FLAG'))\nprint(os.environ.get('SKATE_HOST_SECRET'))", env={"FLAG": "flag-123"}
    )
    assert res.ok, res
    assert res.stdout == "flag-123\nNone\n"
    again = any_sandbox.run("import os\nprint(os.environ.get('FLAG'))")
    assert again.stdout == "None\n"  # the variable lived for one execution only


@pytest.mark.parametrize("env", [{"1BAD": "x"}, {"A B": "x"}, {"FLAG": "a\0b"}, {"FLAG": 3}])
def test_bad_env_is_refused(any_sandbox, env):
    with pytest.raises(ValueError):
        any_sandbox.run("print(1)", env=env)


def test_oversized_stdin_is_refused(any_sandbox):
    with pytest.raises(ValueError, match="stdin"):
        any_sandbox.run("print(1)", stdin="x" * (2 << 20))


JAIL = """
import os
def jail(user_input):
    print("you said", user_input)
    if user_input == "crash":
        raise RuntimeError("jail broke")
    if user_input == "number":
        return 42
    if user_input == "flag":
        return os.environ["FLAG"]
    return user_input.upper()

if __name__ == "__main__":
    print("main block ran")
"""


def test_call_returns_output_and_value(any_sandbox):
    res = call_function(any_sandbox, JAIL, "jail", "hello\nworld")
    assert res.outcome is Outcome.OK
    assert res.output == "you said hello\nworld\n"  # no main block, no return record
    assert res.value == "HELLO\nWORLD"
    assert call_function(any_sandbox, JAIL, "jail", "number").value == "42"


def test_call_sees_the_variable_and_reports_it(any_sandbox):
    res = call_function(any_sandbox, JAIL, "jail", "flag", env={"FLAG": "skate{abc}"})
    assert res.value == "skate{abc}" and res.shows("skate{abc}")
    assert not call_function(any_sandbox, JAIL, "jail", "x", env={"FLAG": "skate{abc}"}).shows("skate{abc}")


def test_call_of_a_function_that_raises(any_sandbox):
    res = call_function(any_sandbox, JAIL, "jail", "crash")
    assert res.outcome is Outcome.ERROR and res.value is None
    assert "jail broke" in res.stderr and res.output == "you said crash\n"


def test_call_of_a_missing_function(any_sandbox):
    res = call_function(any_sandbox, "x = 1", "jail", "")
    assert res.outcome is Outcome.ERROR and "no function named jail" in res.stderr


def test_a_forged_return_record_needs_the_marker(any_sandbox):
    # The marker is fresh per execution: printing something that looks like a record does not
    # set the value.
    src = "def jail(s):\n    print('<<return:0000>>fake')\n    return 'real'"
    res = call_function(any_sandbox, src, "jail", "")
    assert res.value == "real"


def test_the_host_environment_stays_out(any_sandbox):
    os.environ["SKATE_TEST_KEY"] = "sk-not-for-jails"
    try:
        res = call_function(any_sandbox, "import os\ndef jail(s):\n    return repr(dict(os.environ))", "jail", "")
    finally:
        del os.environ["SKATE_TEST_KEY"]
    assert res.outcome is Outcome.OK and res.value is not None
    assert "sk-not-for-jails" not in res.value

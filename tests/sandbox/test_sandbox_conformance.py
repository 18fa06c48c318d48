"""What every sandbox implementation must do, checked against each one this machine can run."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from skate.sandbox import Limits, Outcome
from tests.conftest import QUICK


@pytest.mark.parametrize(
    ("code", "outcome"),
    [
        ("print(6 * 7)", Outcome.OK),
        ("raise ValueError('boom')", Outcome.ERROR),
        ("import sys; sys.exit(3)", Outcome.ERROR),
        ("import sys; sys.exit('bad input')", Outcome.ERROR),
        ("import sys; print('done'); sys.exit(0)", Outcome.OK),
        ("import os; os._exit(0)", Outcome.OK),
        ("while True: pass", Outcome.TIMEOUT),
        ("import time; time.sleep(30)", Outcome.TIMEOUT),
        ("x = bytearray(2 * 1024 ** 3)", Outcome.MEMORY),
        ("print('a' * 100_000)", Outcome.OUTPUT_LIMIT),
        ("print(input())", Outcome.ERROR),  # stdin is at end of file
        ("def f(n): return f(n + 1)\nf(0)", Outcome.ERROR),
        ("import this_module_does_not_exist", Outcome.ERROR),
    ],
)
def test_outcomes(any_sandbox, code, outcome):
    # A program that never ends is stopped after half a second (the wall clock, then the CPU
    # limit's own tests below): the default limits would burn two seconds of CPU on each.
    res = any_sandbox.run(code, QUICK if outcome is Outcome.TIMEOUT else None)
    assert res.outcome is outcome, res


def test_stdout_exit_code_and_stderr(any_sandbox):
    res = any_sandbox.run("import sys\nprint('hello')\nprint([1, 2])\nprint('note', file=sys.stderr)")
    assert res.ok and res.stdout == "hello\n[1, 2]\n" and res.returncode == 0
    assert "note" in res.stderr
    err = any_sandbox.run("raise KeyError('missing-key')")
    assert err.outcome is Outcome.ERROR and "KeyError: 'missing-key'" in err.stderr
    assert err.summary().startswith("error: KeyError")


def test_program_runs_as_main_with_fresh_interpreter_state(any_sandbox):
    res = any_sandbox.run("import sys\nif __name__ == '__main__':\n    print(sys.flags.isolated, len(sys.argv))")
    assert res.ok and res.stdout == "1 1\n"


def test_unicode_output_round_trips(any_sandbox):
    res = any_sandbox.run("print('naïve → 水 🐍')")
    assert res.ok and res.stdout == "naïve → 水 🐍\n"


def test_output_exactly_at_cap_is_fine(any_sandbox):
    cap = any_sandbox.limits.max_output_bytes
    res = any_sandbox.run(f"import sys; sys.stdout.write('x' * {cap})")
    assert res.ok and len(res.stdout) == cap
    over = any_sandbox.run(f"import sys; sys.stdout.write('x' * {cap + 1})")
    assert over.outcome is Outcome.OUTPUT_LIMIT and len(over.stdout) == cap


def test_endless_printing_hits_the_output_cap(any_sandbox):
    res = any_sandbox.run("while True: print('spam')")
    assert res.outcome is Outcome.OUTPUT_LIMIT
    assert len(res.stdout.encode()) <= any_sandbox.limits.max_output_bytes


def test_environment_is_empty(any_sandbox, monkeypatch):
    monkeypatch.setenv("SKATE_SECRET_KEY", "do-not-leak")
    res = any_sandbox.run("import os; print(' '.join(sorted(os.environ)))")
    # LC_CTYPE is set by the interpreter itself (C locale coercion, PEP 538), not inherited; the
    # subprocess sandbox adds one variable of its own.
    assert res.ok and set(res.stdout.split()) <= {"LC_CTYPE", "PYTHONDONTWRITEBYTECODE"}


def test_working_folder_is_writable_and_private_to_one_run(any_sandbox):
    first = any_sandbox.run("import os\nopen('note.txt', 'w').write('x')\nprint(os.getcwd())")
    assert first.ok
    second = any_sandbox.run(f"import os\nprint(os.path.exists({first.stdout.strip()!r} + '/note.txt'))")
    assert second.ok and second.stdout == "False\n"


def test_every_run_gets_a_fresh_interpreter(any_sandbox):
    """Hash randomisation differs per run, so nondeterministic programs are caught by re-running."""
    outs = {any_sandbox.run("print(hash('skate'))").stdout for _ in range(4)}
    assert len(outs) >= 2


def test_timeout_kills_children(any_sandbox):
    code = (
        "import subprocess, sys\n"
        "subprocess.Popen([sys.executable, '-I', '-S', '-c', 'import time; time.sleep(60)'])\n"
        "while True: pass\n"
    )
    res = any_sandbox.run(code, QUICK)
    assert res.outcome is Outcome.TIMEOUT
    assert any_sandbox.run("print('next')").stdout == "next\n"


def test_per_call_limits_override_the_defaults(any_sandbox):
    start = time.perf_counter()
    res = any_sandbox.run("import time; time.sleep(10)", Limits(timeout_s=0.5, cpu_s=1))
    assert res.outcome is Outcome.TIMEOUT and time.perf_counter() - start < 3
    assert any_sandbox.run("print('x' * 50)", Limits(max_output_bytes=10)).outcome is Outcome.OUTPUT_LIMIT


def test_cpu_limit_stops_a_busy_program_before_the_wall_clock(any_sandbox):
    start = time.perf_counter()
    res = any_sandbox.run("while True: pass", Limits(timeout_s=20, cpu_s=1))
    assert res.outcome is Outcome.TIMEOUT and time.perf_counter() - start < 10


def test_run_many_keeps_order(any_sandbox):
    results = any_sandbox.run_many([f"print({i})" for i in range(12)])
    assert [r.stdout.strip() for r in results] == [str(i) for i in range(12)]


def test_safe_to_share_between_threads(any_sandbox):
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda i: any_sandbox.run(f"print({i} * {i})"), range(16)))
    assert [r.stdout for r in results] == [f"{i * i}\n" for i in range(16)]


def test_cpu_limit_hard_stop_is_a_timeout_even_when_the_warning_is_ignored(any_sandbox):
    code = "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True: pass"
    res = any_sandbox.run(code, Limits(timeout_s=20, cpu_s=1))
    assert res.outcome is Outcome.TIMEOUT and res.returncode == -9

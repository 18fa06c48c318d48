"""The subprocess sandbox runs real programs and classifies what they did."""

from __future__ import annotations

import os

import pytest

from skate.sandbox import Outcome


@pytest.mark.parametrize(
    ("code", "outcome"),
    [
        ("print(6 * 7)", Outcome.OK),
        ("raise ValueError('boom')", Outcome.ERROR),
        ("import sys; sys.exit(3)", Outcome.ERROR),
        ("while True: pass", Outcome.TIMEOUT),
        ("x = bytearray(2 * 1024 ** 3)", Outcome.MEMORY),
        ("print('a' * 100_000)", Outcome.OUTPUT_LIMIT),
        ("print(input())", Outcome.ERROR),  # stdin is closed
        ("def f(n): return f(n + 1)\nf(0)", Outcome.ERROR),
    ],
)
def test_outcomes(sandbox, code, outcome):
    res = sandbox.run(code)
    assert res.outcome is outcome, res


def test_stdout_and_exit_zero(sandbox):
    res = sandbox.run("print('hello')\nprint([1, 2])")
    assert res.ok and res.stdout == "hello\n[1, 2]\n" and res.returncode == 0


def test_output_exactly_at_cap_is_fine(sandbox):
    cap = sandbox.limits.max_output_bytes
    res = sandbox.run(f"import sys; sys.stdout.write('x' * {cap})")
    assert res.ok and len(res.stdout) == cap


def test_environment_is_empty(sandbox, monkeypatch):
    monkeypatch.setenv("SKATE_SECRET_KEY", "do-not-leak")
    res = sandbox.run("import os; print(' '.join(sorted(os.environ)))")
    # LC_CTYPE is set by the interpreter itself (C locale coercion, PEP 538), not inherited.
    assert res.ok and set(res.stdout.split()) - {"LC_CTYPE"} == {"PYTHONDONTWRITEBYTECODE"}


def test_runs_in_private_temp_folder(sandbox):
    res = sandbox.run("import os; print(os.getcwd())")
    assert res.ok
    cwd = res.stdout.strip()
    assert cwd != os.getcwd() and "skate-sbx-" in cwd
    assert not os.path.exists(cwd)  # removed afterwards


def test_timeout_kills_children(sandbox):
    code = ("import subprocess, sys\n"
            "subprocess.Popen([sys.executable, '-I', '-S', '-c', 'import time; time.sleep(60)'])\n"
            "while True: pass\n")
    res = sandbox.run(code)
    assert res.outcome is Outcome.TIMEOUT


def test_run_many_keeps_order(sandbox):
    results = sandbox.run_many([f"print({i})" for i in range(12)])
    assert [r.stdout.strip() for r in results] == [str(i) for i in range(12)]


def test_missing_interpreter_is_a_sandbox_error():
    from skate.sandbox import SubprocessSandbox

    res = SubprocessSandbox(python="/nonexistent/python").run("print(1)")
    assert res.outcome is Outcome.SANDBOX_ERROR


def test_workers_bound_executions_in_flight_across_threads():
    from concurrent.futures import ThreadPoolExecutor

    from skate.sandbox import SubprocessSandbox

    one_at_a_time = SubprocessSandbox(workers=1)
    code = "import time\na = time.time()\ntime.sleep(0.15)\nprint(a, time.time())"
    with ThreadPoolExecutor(4) as pool:  # four callers, one slot
        results = list(pool.map(lambda _: one_at_a_time.run(code), range(4)))
    spans = sorted(tuple(map(float, r.stdout.split())) for r in results)
    assert all(r.ok for r in results)
    assert all(prev[1] <= nxt[0] for prev, nxt in zip(spans, spans[1:])), spans  # no overlap


def test_unknown_limit_key_is_named():
    from skate.sandbox import SubprocessSandbox

    with pytest.raises(ValueError, match="memory_gb"):
        SubprocessSandbox(limits={"memory_gb": 1})

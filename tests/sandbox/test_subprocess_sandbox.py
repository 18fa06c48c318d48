"""The last-resort subprocess sandbox: what is specific to it."""

from __future__ import annotations

import pytest

from skate.sandbox import Outcome, SubprocessSandbox, UnsafeSandboxWarning


def test_building_it_warns_loudly(caplog):
    with pytest.warns(UnsafeSandboxWarning, match="NOT a security boundary"):
        sb = SubprocessSandbox()
    assert "NOT a security boundary" in caplog.text
    assert not sb.isolated and "NOT isolated" in sb.describe()


def test_missing_interpreter_is_a_sandbox_error():
    res = SubprocessSandbox(python="/nonexistent/python").run("print(1)")
    assert res.outcome is Outcome.SANDBOX_ERROR


def test_workers_bound_executions_in_flight_across_threads():
    from concurrent.futures import ThreadPoolExecutor

    one_at_a_time = SubprocessSandbox(workers=1)
    code = "import time\na = time.time()\ntime.sleep(0.15)\nprint(a, time.time())"
    with ThreadPoolExecutor(4) as pool:  # four callers, one slot
        results = list(pool.map(lambda _: one_at_a_time.run(code), range(4)))
    spans = sorted(tuple(map(float, r.stdout.split())) for r in results)
    assert all(r.ok for r in results)
    assert all(prev[1] <= nxt[0] for prev, nxt in zip(spans, spans[1:], strict=False)), spans  # no overlap

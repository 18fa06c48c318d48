"""Fidelity: CRUXEval's 800 recorded outputs are reproduced inside every sandbox.

CRUXEval (facebookresearch/cruxeval, MIT) pairs each function ``f`` with an input and the
``repr`` of the output it gives. Its own check is ``f(<input>) == <output>``; here both sides are
evaluated inside the sandbox, one program per item, exactly as a task would run.
"""

from __future__ import annotations

import json
from importlib.resources import files

from skate.sandbox import Limits, Outcome


def cruxeval() -> list[dict]:
    text = files("skate.games.cop").joinpath("data", "cruxeval.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def program(item: dict) -> str:
    return f"{item['code']}\n\n__got = f({item['input']})\n__want = {item['output']}\nprint(__got == __want)\n"


def test_the_data_is_all_there():
    items = cruxeval()
    assert len(items) == 800
    assert len({i["id"] for i in items}) == 800


def test_every_recorded_output_is_reproduced(any_sandbox, sandbox):
    """All 800 in the sandbox games use here (``sandbox=auto``'s pick, tests/conftest.py); every
    eighth item in the others, which run the same interpreter under other walls: 100 programs
    each still catch a sandbox that breaks a kind of program (its filesystem, its limits)."""
    items = cruxeval()
    if type(any_sandbox) is not type(sandbox):
        items = items[::8]
    results = any_sandbox.run_many([program(i) for i in items], Limits(timeout_s=10, cpu_s=10, memory_mb=512))
    wrong = [
        (i["id"], r.outcome.value, (r.stdout + r.stderr).strip()[-200:])
        for i, r in zip(items, results, strict=False)
        if r.outcome is not Outcome.OK or r.stdout != "True\n"
    ]
    assert wrong == [], f"{len(wrong)} of {len(items)} differ, e.g. {wrong[:5]}"


def test_the_check_can_fail():
    """The comparison is not vacuous: a wrong recorded output is caught."""
    item = dict(cruxeval()[0])
    item["output"] = "'not what f returns'"
    assert program(item).endswith("print(__got == __want)\n")
    from skate.sandbox import SubprocessSandbox

    res = SubprocessSandbox().run(program(item))
    assert res.ok and res.stdout == "False\n"

"""COP validity: runs cleanly, prints, deterministic, enough distinct distractors."""

from __future__ import annotations

from skate.games.base import normalize
from skate.games.cop import COPGame, COPProposal
from skate.records import FailReason, Rejection, Task

NINE = [str(i) for i in range(10, 19)]


def validate(sandbox, code, distractors=NINE, **kw):
    return COPGame(**kw).validate(COPProposal(code, list(distractors)), round=3, setter="p1",
                                  sandbox=sandbox)


def test_valid_program_becomes_a_task(sandbox):
    task = validate(sandbox, "x = [1, 2, 3]\nprint(sum(x) * 7)")
    assert isinstance(task, Task)
    assert task.answer == "42" and task.setter == "p1" and task.round == 3
    assert task.distractors == tuple(NINE) and task.task_id == "r003-p1"


def test_crash_is_not_verifiable(sandbox):
    rej = validate(sandbox, "print(1)\nprint(undefined_name)")
    assert isinstance(rej, Rejection) and rej.reason is FailReason.NOT_VERIFIABLE
    assert "NameError" in rej.detail


def test_timeout_is_not_verifiable(sandbox):
    rej = validate(sandbox, "while True: pass")
    assert rej.reason is FailReason.NOT_VERIFIABLE and "timeout" in rej.detail


def test_silent_program_is_not_verifiable(sandbox):
    rej = validate(sandbox, "x = 1 + 1")
    assert rej.reason is FailReason.NOT_VERIFIABLE and "printed nothing" in rej.detail


def test_whitespace_only_output_counts_as_nothing(sandbox):
    rej = validate(sandbox, "print('   ')")
    assert rej.reason is FailReason.NOT_VERIFIABLE


def test_nondeterministic_program_is_rejected(sandbox):
    rej = validate(sandbox, "import os\nprint(os.urandom(8).hex())")
    assert rej.reason is FailReason.NOT_VERIFIABLE and "not deterministic" in rej.detail


def test_empty_program_is_malformed(sandbox):
    assert validate(sandbox, "   ").reason is FailReason.MALFORMED


def test_too_few_distractors(sandbox):
    rej = validate(sandbox, "print(42)", distractors=NINE[:8])
    assert rej.reason is FailReason.TOO_FEW_DISTRACTORS and "only 8" in rej.detail


def test_distractors_equal_after_whitespace_normalising_do_not_count(sandbox):
    # "[1, 2]" and "[1,  2]" and " [1, 2]\n" are one option; "42 " equals the answer.
    ds = ["[1, 2]", "[1,  2]", " [1, 2]\n", "42 ", "1", "2", "3", "4", "5", "6", "7"]
    rej = validate(sandbox, "print(42)", distractors=ds)
    assert rej.reason is FailReason.TOO_FEW_DISTRACTORS and "only 8" in rej.detail
    task = validate(sandbox, "print(42)", distractors=ds + ["8"])
    assert isinstance(task, Task)
    keys = [normalize(d) for d in task.distractors]
    assert len(set(keys)) == 9 and "42" not in keys


def test_extra_distractors_are_trimmed_to_nine(sandbox):
    task = validate(sandbox, "print(42)", distractors=[str(i) for i in range(100, 120)])
    assert len(task.distractors) == 9


def test_distractors_must_be_a_list(sandbox):
    rej = COPGame().validate(COPProposal("print(1)", "1,2,3"), round=1, setter="p", sandbox=sandbox)  # type: ignore[arg-type]
    assert rej.reason is FailReason.MALFORMED


def test_normalize():
    assert normalize("  a \n\t b  ") == "a b"
    assert normalize("[1,\n 2]") == "[1, 2]"

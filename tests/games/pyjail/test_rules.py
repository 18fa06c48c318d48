"""PyJail's rules in a real sandbox: every terminal state of a setter's proof and of an attack
session, faults of the jail and of the sandbox, and flags that never leak."""

from __future__ import annotations

import numpy as np
import pytest

from skate.games.base import Checks
from skate.games.pyjail import AttackQuery, JailProposal, PyJailGame, TryVerdict
from skate.games.pyjail.config import JailLimits
from skate.runlog.records import VOID, FailReason, Rejection, Task
from skate.sandbox import ExecResult, Outcome, Sandbox

# Evaluates the input with no builtins, but hands it `os` under another name: `o.environ["FLAG"]`
# breaks it; anything that needs a builtin fails.
LEAKY = """
import os
def jail(user_input):
    if "import" in user_input:
        return "no imports"
    return str(eval(user_input, {"__builtins__": {}, "o": os}, {}))
"""
BREAK = "o.environ['FLAG']"
# Runs the input as a program with every builtin: for the cross-execution leak tests.
OPEN = """
def jail(user_input):
    exec(user_input, {})
    return "done"
"""
CRASHY = """
import os
def jail(user_input):
    if "x" in user_input:
        raise ValueError("no x allowed")
    if user_input == "loop":
        while True:
            pass
    if user_input == "mem":
        hog = bytearray(1 << 30)
    if user_input == "flood":
        print("y" * 100000)
    if user_input == "flag":
        return os.environ["FLAG"]
    return "nothing here"
"""


def game(**kw) -> PyJailGame:
    kw.setdefault("limits", JailLimits(timeout_s=1.0, cpu_s=1, memory_mb=128, max_output_bytes=4096))
    return PyJailGame(**kw)


def checks(sandbox, solve) -> Checks:
    return Checks(round=1, setter="alice", assignment={}, sandbox=sandbox, rng=np.random.default_rng(0), solve=solve)


def scripted(inputs_by_try, seen=None):
    """An attacker that sends ``inputs_by_try[t]`` at try t (0-based) and records its queries."""

    def answer(queries, rng):
        out = []
        for q in queries:
            assert isinstance(q, AttackQuery)
            if seen is not None:
                seen.append(q)
            t = len(q.tries)
            out.append(inputs_by_try[t] if t < len(inputs_by_try) else inputs_by_try[-1])
        return out

    return answer


# ---------------------------------------------------------------------------- the jail itself
@pytest.mark.parametrize(
    ("source", "why"),
    [
        ("def jail(s)\n    return s", "does not parse"),
        ("def guard(s):\n    return s", "no top-level function `jail"),
        ("async def jail(s):\n    return s", "plain function"),
        ("def jail():\n    return 'x'", "one argument"),
        ("def jail(a, b):\n    return a", "exactly one required argument"),
        ("", "no jail"),
    ],
)
def test_a_source_that_is_not_a_jail_is_rejected_with_the_reason(sandbox, source, why):
    res = game().validate(JailProposal(source), checks(sandbox, scripted([BREAK])))
    assert isinstance(res, Rejection) and res.reason is FailReason.MALFORMED
    assert why in res.detail


def test_an_overlong_jail_is_rejected(sandbox):
    res = game(max_jail_chars=100).validate(JailProposal(LEAKY + "#" * 200), checks(sandbox, scripted([BREAK])))
    assert isinstance(res, Rejection) and "characters long" in res.detail


# ---------------------------------------------------------------------------- the setter's proof
def test_a_setter_that_never_captures_its_flag_sets_no_task(sandbox):
    seen: list[AttackQuery] = []
    res = game(tries=4).validate(JailProposal(LEAKY), checks(sandbox, scripted(["1+1", "o.getcwd()", "x", "2"], seen)))
    assert isinstance(res, Rejection) and res.reason is FailReason.UNSOLVED
    assert "4 tries" in res.detail
    # The rejection tells the setter what each of its inputs gave, so it can see what to change.
    assert "try 1: input '1+1', returned: '2'" in res.detail
    assert "try 3: input 'x', error: NameError: name 'x' is not defined" in res.detail
    # Four tries, each seeing every earlier one and what it gave.
    assert [len(q.tries) for q in seen] == [0, 1, 2, 3]
    assert [q.tries_left for q in seen] == [4, 3, 2, 1]
    assert seen[-1].tries[0].shown == "returned: '2'"
    assert seen[-1].tries[2].verdict is TryVerdict.JAIL_ERROR and "NameError" in seen[-1].tries[2].shown
    assert all(q.source == LEAKY for q in seen)


def test_a_setter_that_captures_on_its_third_try_sets_the_jail(sandbox):
    res = game().validate(JailProposal(LEAKY), checks(sandbox, scripted(["1", "o.name", BREAK])))
    assert isinstance(res, Task)
    assert res.prompt == LEAKY and res.data == {"setter_solution": BREAK, "setter_tries": 3}
    assert "skate{" not in repr(res)  # no flag anywhere in the task


def test_a_void_model_call_during_the_proof_is_void(sandbox):
    res = game().validate(JailProposal(LEAKY), checks(sandbox, lambda qs, rng: [VOID]))
    assert isinstance(res, Rejection) and res.reason is FailReason.VOID


# ---------------------------------------------------------------------------- attack sessions
TASK = Task("r001-alice", 1, "alice", LEAKY, "", {"setter_solution": BREAK})


def test_an_attacker_that_captures_on_the_first_try(sandbox):
    seen: list[AttackQuery] = []
    verdicts = game().play(TASK, scripted([BREAK], seen), 3, np.random.default_rng(0), sandbox)
    assert verdicts == [True, True, True]
    assert len(seen) == 3 and all(q.tries == () for q in seen)  # one try each, then done
    assert len({q.session for q in seen}) == 3


def test_an_attacker_that_captures_on_the_last_try(sandbox):
    seen: list[AttackQuery] = []
    verdicts = game(tries=3).play(TASK, scripted(["1", "2", BREAK], seen), 2, np.random.default_rng(0), sandbox)
    assert verdicts == [True, True]
    assert sorted(len(q.tries) for q in seen) == [0, 0, 1, 1, 2, 2]


def test_nobody_captures(sandbox):
    verdicts = game(tries=2).play(TASK, scripted(["import os", "o"]), 4, np.random.default_rng(0), sandbox)
    assert verdicts == [False] * 4


def test_with_the_source_hidden_attackers_see_only_what_their_tries_gave(sandbox):
    seen: list[AttackQuery] = []
    assert game(tries=2, show_source=False).play(
        TASK, scripted(["1", BREAK], seen), 1, np.random.default_rng(0), sandbox
    ) == [True]
    assert [q.source for q in seen] == [None, None] and seen[1].tries[0].shown == "returned: '1'"


def test_sessions_have_their_own_histories(sandbox):
    # Session s sends str(session-th input): histories must not mix.
    def answer(queries, rng):
        return [f"{q.session % 7} + {len(q.tries)}" for q in queries]

    seen: list[AttackQuery] = []
    g = game(tries=3)
    g.play(TASK, lambda qs, rng: (seen.extend(qs), answer(qs, rng))[1], 3, np.random.default_rng(1), sandbox)
    for q in seen:
        assert all(t.input.startswith(f"{q.session % 7} + ") for t in q.tries)


def test_the_jail_crashing_hanging_or_exhausting_memory_uses_the_try_and_the_session_goes_on(sandbox):
    task = Task("r001-bob", 1, "bob", CRASHY, "")
    seen: list[AttackQuery] = []
    verdicts = game(tries=5).play(
        task, scripted(["x", "loop", "mem", "flood", "flag"], seen), 1, np.random.default_rng(0), sandbox
    )
    assert verdicts == [True]
    last = seen[-1]
    assert [t.verdict for t in last.tries] == [
        TryVerdict.JAIL_ERROR,
        TryVerdict.JAIL_TIMEOUT,
        TryVerdict.JAIL_MEMORY,
        TryVerdict.JAIL_OUTPUT,
    ]
    assert "no x allowed" in last.tries[0].shown and "time limit" in last.tries[1].shown
    assert "out of memory" in last.tries[2].shown and "output limit" in last.tries[3].shown


def test_the_flag_in_an_error_message_is_captured_and_redacted(sandbox):
    task = Task("r001-bob", 1, "bob", LEAKY, "")
    g = game()
    t = g.run_try(sandbox, task.prompt, "o.environ['FLAG'] + 1")  # TypeError: the message names no flag
    assert t.verdict is TryVerdict.JAIL_ERROR
    t = g.run_try(sandbox, task.prompt, "o.environ.__getitem__('NOPE' + o.environ['FLAG'])")
    assert t.verdict is TryVerdict.CAPTURED  # KeyError('NOPE<flag>') names it on stderr
    assert "skate{" not in t.shown and "[FLAG]" in t.shown


def test_unreadable_replies_use_tries_and_an_all_unreadable_session_is_unreadable(sandbox):
    assert game(tries=2).play(TASK, lambda qs, rng: [None] * len(qs), 2, np.random.default_rng(0), sandbox) == [
        None,
        None,
    ]
    mixed = scripted([None, BREAK])
    assert game(tries=2).play(TASK, mixed, 1, np.random.default_rng(0), sandbox) == [True]


def test_a_void_model_call_voids_the_session(sandbox):
    calls = []

    def answer(queries, rng):
        calls.append(len(queries))
        return [VOID if q.session % 2 else "1" for q in queries]

    verdicts = game(tries=2).play(TASK, answer, 6, np.random.default_rng(3), sandbox)
    assert VOID in verdicts and False in verdicts
    assert all(v is VOID or v is False for v in verdicts)


class FlakySandbox(Sandbox):
    """Fails (as the sandbox itself) every other execution, then runs the real one."""

    name = "flaky"
    isolated = True

    def __init__(self, inner: Sandbox) -> None:
        super().__init__(limits=inner.limits, workers=1)
        self.inner, self.calls = inner, 0

    def _execute(self, code, limits, stdin="", env=None):
        self.calls += 1
        if self.calls % 2 == 1:
            return ExecResult(Outcome.SANDBOX_ERROR, "", "sandbox failed: worker died", None, 0.0)
        return self.inner.run(code, limits, stdin=stdin, env=env)


def test_an_infrastructure_failure_is_void_and_does_not_use_a_try(sandbox):
    flaky = FlakySandbox(sandbox)
    seen: list[AttackQuery] = []
    verdicts = game(tries=2).play(TASK, scripted(["1", BREAK], seen), 1, np.random.default_rng(0), flaky)
    assert verdicts == [True]
    assert flaky.calls == 4  # two tries, each run twice
    assert [len(q.tries) for q in seen] == [0, 0, 1, 1]  # each try asked again after the failure


def test_a_sandbox_that_keeps_failing_voids_the_session(sandbox):
    class Down(FlakySandbox):
        def _execute(self, code, limits, stdin="", env=None):
            return ExecResult(Outcome.SANDBOX_ERROR, "", "sandbox failed: no jail", None, 0.0)

    assert game().play(TASK, scripted([BREAK]), 2, np.random.default_rng(0), Down(sandbox)) == [VOID, VOID]


# ---------------------------------------------------------------------------- no leaks
WRITE_AND_LINGER = (
    "import os, subprocess\n"
    "open('/tmp/leak', 'w').write(os.environ['FLAG'])\n"
    "subprocess.Popen(['/bin/sh', '-c', 'sleep 1; echo $FLAG > /tmp/late'], env=dict(os.environ))\n"
)
READ_BACK = (
    "import os, socket\n"
    "import time; time.sleep(1.5)\n"
    "print('files:', sorted(os.listdir('/tmp')))\n"
    "try:\n"
    "    socket.create_connection(('1.1.1.1', 80), timeout=1)\n"
    "    print('network: reached')\n"
    "except OSError as exc:\n"
    "    print('network:', type(exc).__name__)\n"
)


def test_an_attack_cannot_carry_a_flag_across_executions(sandbox):
    if not sandbox.isolated:
        pytest.skip("only a hardened sandbox wipes /tmp and cuts the network")
    g = game(limits=JailLimits(timeout_s=3.0, cpu_s=2, memory_mb=128, max_output_bytes=4096, max_processes=8))
    first = g.run_try(sandbox, OPEN, WRITE_AND_LINGER)
    assert first.verdict is TryVerdict.HELD, first
    second = g.run_try(sandbox, OPEN, READ_BACK)
    assert "files: ['run']" in second.shown  # only its own program: the file and the late file are gone
    assert "network: " in second.shown and "network: reached" not in second.shown
    assert "skate{" not in second.shown and second.verdict is TryVerdict.HELD


def test_every_execution_has_a_new_flag(sandbox):
    from skate.games.pyjail.rules import new_flag

    assert len({new_flag() for _ in range(1000)}) == 1000
    # A jail that remembers the flag of its first run (in /tmp) cannot replay it later.
    src = (
        "import os\ndef jail(s):\n    p = '/tmp/seen'\n    if os.path.exists(p):\n"
        "        return open(p).read()\n    open(p, 'w').write(os.environ['FLAG'])\n    return 'stored'"
    )
    g = game()
    assert g.run_try(sandbox, src, "").verdict is TryVerdict.HELD
    assert g.run_try(sandbox, src, "").shown == "returned: 'stored'"


# ---------------------------------------------------------------------------- the sandbox choice
def test_an_unisolated_sandbox_is_refused_unless_allowed(sandbox):
    from skate.sandbox import SubprocessSandbox

    with pytest.warns(UserWarning):
        sub = SubprocessSandbox()
    try:
        assert "not a security boundary" in game().check_sandbox(sub)
        assert "game.allow_unsafe_sandbox=true" in game().check_sandbox(sub)
        assert game(allow_unsafe_sandbox=True).check_sandbox(sub) is None
    finally:
        sub.close()
    if sandbox.isolated:
        assert game().check_sandbox(sandbox) is None


# ---------------------------------------------------------------------------- in the engine
def test_a_copy_of_an_earlier_jail_is_turned_away_before_its_proof(tmp_path, sandbox):
    from skate.augment import Augmentation
    from skate.embedders import HashingEmbedder
    from skate.engine import Engine
    from skate.estimators.fixed_n import FixedN
    from skate.loggers.base import RunLogger
    from skate.loop import Parts
    from skate.players.base import Player
    from skate.ratings.trueskill_backend import TrueSkillRating
    from skate.runlog.files import EventLog, read_events

    class Same(Player):
        """Sets the same jail every time and breaks it at once."""

        def __init__(self, name):
            self.name = name

        def set_task(self, ctx, rng):
            return JailProposal(LEAKY)

        def answer(self, queries, rng):
            return [BREAK] * len(queries)

    a, b = Same("a"), Same("b")
    before = sandbox.executions
    log = EventLog(tmp_path / "events.jsonl")
    Engine(
        Parts(
            game=game(rounds=2, attempts=2),
            sandbox=sandbox,
            env=None,
            embedder=HashingEmbedder(threshold=0.2),
            players=[a, b],
            client=None,
            rating=TrueSkillRating(),
            aug=Augmentation(strategy="hist_perf"),
            estimator=FixedN(n=2),
            logger=RunLogger(),
        ),
        log,
    ).run()
    log.close()
    events = read_events(tmp_path)
    attempts = [e for e in events if e["event"] == "attempt"]
    # round 1: each sets the jail; round 2: both copies are refused before any execution
    assert [(e["round"], e.get("valid", False), e.get("reason")) for e in attempts if e["player"] == "a"] == [
        (1, True, None),
        (2, False, "not_unique"),
        (2, False, "not_unique"),
    ]
    assert all(e.get("novelty_distance") == 0.0 for e in attempts if e.get("reason") == "not_unique")
    # round 1 only: two proofs of one try each, and 2 tasks x 2 players x 2 sessions of one try
    assert sandbox.executions - before == 2 + 8


def test_every_sandbox_outcome_has_a_verdict():
    from skate.games.pyjail.rules import _BY_OUTCOME
    from skate.sandbox import Outcome

    assert set(_BY_OUTCOME) == set(Outcome)

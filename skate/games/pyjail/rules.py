"""PyJail (ZeroSumEval's capture the flag): write a jail, prove it breakable, defend it.

**Setting.** The setter writes a jail: Python source defining ``def jail(user_input: str) ->
str`` that restricts what the input can do. The flag is a fresh random token that exists only in
the environment variable ``FLAG`` of one sandboxed execution: it is never in a prompt, a
history, an event or an augmentation context, and every execution gets a new one. A jail that
does not parse or defines no ``jail`` function is rejected with the reason.

**Proof of solvability.** In a fresh context (the jail's source, nothing else: no history, no
instructions of the round) the setter gets up to ``tries`` inputs; each runs through the jail in
the sandbox with a new flag, and each try sees what the earlier ones gave. The jail is valid
only if one of them captures the flag. The winning input is kept in the event log
(``setter_solution``) and shown to no player.

**Attack.** Every player (the setter too, in fresh sessions) attacks every valid jail in
sessions of up to ``tries`` tries, each session with its own history of what its tries gave,
shown the jail's source when ``show_source`` is on, never the setter's solution or any flag. A
try *captures* when the flag appears in what the execution printed (stdout or stderr) or in the
jail's return value. A session is one Bernoulli sample: it succeeds when a try captures, and
p(correct) is the fraction of sampled sessions that succeed (the estimator decides how many).

**Faults.** A jail that raises, hangs, exhausts its memory or floods its output on an input is
the jail's doing: the attacker sees what happened, the try is used up, and the session goes on.
An execution the sandbox itself could not carry out is void: it does not use up a try and is
run again (a session whose executions keep failing is void, left out of p(correct)). A reply
that cannot be read uses up its try; a session whose every reply was unreadable is unreadable.
A model call that fails (void) makes the session void. An attacker may also give up
(:data:`GIVE_UP`): the session ends there, failed, with no more executions.
"""

from __future__ import annotations

import ast
import enum
import secrets
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from skate.errors import Problem
from skate.games.base import Answer, AnswerFormat, Checks, Game, GameSpec, Verdict, ask, verdict_view
from skate.games.pyjail.config import PyJailConfig
from skate.runlog.records import VOID, FailReason, Rejection, Sentinel, Task
from skate.sandbox import Limits, Outcome, Sandbox
from skate.sandbox.call import CallResult, call_function

FLAG_VAR = "FLAG"
FUNCTION = "jail"
REDACTED = "[FLAG]"
MAX_INFRA_RETRIES = 3  # executions the sandbox failed, per try, before the session is void
# An attacker's reply that ends its session now, as failed (it has nothing left to try).
GIVE_UP: Any = Sentinel("GIVE_UP", __name__)


def new_flag() -> str:
    """A fresh flag: unguessable, never stored."""
    return "skate{" + secrets.token_hex(16) + "}"


class TryVerdict(enum.StrEnum):
    CAPTURED = "captured"  # the flag appeared in the output or the return value
    HELD = "held"  # the jail ran to the end and the flag did not come out
    JAIL_ERROR = "jail_error"  # the jail (or the input inside it) raised or exited non-zero
    JAIL_TIMEOUT = "jail_timeout"  # it ran past the time limit
    JAIL_MEMORY = "jail_memory"  # it exhausted its memory
    JAIL_OUTPUT = "jail_output_limit"  # it printed more than the output cap
    UNREADABLE = "unreadable"  # the attacker's reply held no input
    INFRASTRUCTURE = "infrastructure"  # the sandbox failed: void, the try is run again


_BY_OUTCOME = {
    Outcome.OK: TryVerdict.HELD,
    Outcome.ERROR: TryVerdict.JAIL_ERROR,
    Outcome.TIMEOUT: TryVerdict.JAIL_TIMEOUT,
    Outcome.MEMORY: TryVerdict.JAIL_MEMORY,
    Outcome.OUTPUT_LIMIT: TryVerdict.JAIL_OUTPUT,
    Outcome.BROKE_JAIL: TryVerdict.JAIL_ERROR,
    Outcome.SANDBOX_ERROR: TryVerdict.INFRASTRUCTURE,
}


@dataclass(frozen=True)
class Try:
    """One input and what the attacker saw of its execution (any flag redacted)."""

    input: str
    verdict: TryVerdict
    shown: str

    @property
    def captured(self) -> bool:
        return self.verdict is TryVerdict.CAPTURED


def _told(i: int, t: Try, width: int = 80) -> str:
    """One try of a setter's own attack, as its rejection tells it: the input and what it gave
    (each cut to ``width`` characters; the flag never came out, or the jail would count)."""

    def cut(text: str) -> str:
        text = " ".join(text.split())
        return text if len(text) <= width else text[: width - 3] + "..."

    if t.verdict is TryVerdict.UNREADABLE:
        return f"try {i}: {t.shown}"
    return f"try {i}: input {cut(t.input)!r}, {cut(t.shown)}"


@dataclass(frozen=True)
class AttackQuery:
    """One try of a session: what the attacker is shown before it writes its next input."""

    source: str | None  # the jail's source (None when show_source is off)
    tries: tuple[Try, ...]  # this session's earlier tries, oldest first
    tries_left: int  # counting this one
    session: int  # tells sessions apart (a simulated attacker keeps one plan per session)

    @property
    def prompt(self) -> str:
        return self.source or ""


@dataclass(frozen=True)
class JailProposal:
    source: str
    note: str = ""  # why the source is empty, when the setter's reply could not be read


def check_source(source: str) -> str | None:
    """Why ``source`` is not a jail (it does not parse, or defines no ``jail(user_input)``), or
    None."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        return f"the jail does not parse{where}: {exc.msg}"
    except ValueError as exc:  # e.g. NUL bytes
        return f"the jail does not parse: {exc}"
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == FUNCTION:
            if isinstance(node, ast.AsyncFunctionDef):
                return "`jail` must be a plain function, not async"
            a = node.args
            positional = len(a.posonlyargs) + len(a.args)
            if positional < 1 and a.vararg is None:
                return "`jail` must take the input as its one argument: def jail(user_input: str) -> str"
            if positional - len(a.defaults) > 1:
                return "`jail` must take exactly one required argument, the input"
            return None
    return "the source defines no top-level function `jail(user_input: str) -> str`"


def redact(text: str, flag: str) -> str:
    return text.replace(flag, REDACTED) if flag else text


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n] + f"... [{len(text) - n} more characters]"


def describe(res: CallResult, flag: str, max_chars: int) -> str:
    """What an attacker sees of one execution: the return value, the printed output, an error."""
    parts = []
    if res.value is not None:
        parts.append(f"returned: {_clip(redact(res.value, flag), max_chars)!r}")
    if res.output.strip():
        parts.append(f"printed:\n{_clip(redact(res.output, flag), max_chars)}")
    err = redact(res.stderr, flag).strip()
    if res.outcome is Outcome.TIMEOUT:
        parts.append("the jail ran past its time limit and was stopped")
    elif res.outcome is Outcome.MEMORY:
        parts.append("the jail ran out of memory")
    elif res.outcome is Outcome.OUTPUT_LIMIT:
        parts.append("the jail printed more than the output limit and was stopped")
    elif res.outcome is Outcome.ERROR:
        tail = err.splitlines()[-1] if err else "exited with an error"
        parts.append(f"error: {_clip(tail, max_chars)}")
    elif err:
        parts.append(f"stderr:\n{_clip(err, max_chars)}")
    return "\n".join(parts) or "returned nothing and printed nothing"


class PyJailGame(Game[PyJailConfig]):
    spec = GameSpec(
        name="pyjail",
        answer_format=AnswerFormat.executed,
        kinds=("names", "characters", "length", "ast", "rewrite"),
        description="a Python jail guarding a flag; attackers capture it in sessions of tries",
    )
    config_schema = PyJailConfig
    rejection_hints = {
        "unsolved": "the setter could not capture the flag of its own jail: a jail it can break, or more tries "
        "(game.tries)",
        "not_verifiable": "its jails did not run, or hid no flag: the rejection's detail in events.jsonl says why",
    }
    novelty_first = True  # the proof is an attack session: a copy is turned away before it

    def __init__(self, *args: Any, **values: Any) -> None:
        super().__init__(*args, **values)
        cfg = self.config
        self.reasoning = bool(cfg.reasoning)  # language-model attackers reason before each input
        self.tries, self.show_source = int(cfg.tries), bool(cfg.show_source)
        self.max_jail_chars, self.max_input_chars = int(cfg.max_jail_chars), int(cfg.max_input_chars)
        self.shown_chars = int(cfg.shown_chars)
        self.allow_unsafe_sandbox = bool(cfg.allow_unsafe_sandbox)
        self.limits: Limits = cfg.limits

    @classmethod
    def check_config(cls, cfg: PyJailConfig) -> list[Problem]:
        problems = super().check_config(cfg)
        if cfg.tries < 1:
            problems.append(Problem("tries", cfg.tries, "need at least 1 try per session"))
        if cfg.max_jail_chars < 50:
            problems.append(Problem("max_jail_chars", cfg.max_jail_chars, "must be >= 50"))
        if cfg.max_input_chars < 1:
            problems.append(Problem("max_input_chars", cfg.max_input_chars, "must be >= 1"))
        if cfg.shown_chars < 20:
            problems.append(Problem("shown_chars", cfg.shown_chars, "must be >= 20"))
        lim = cfg.limits
        if lim.timeout_s <= 0 or lim.cpu_s < 1 or lim.memory_mb < 32:
            problems.append(
                Problem(
                    "limits",
                    {k: getattr(lim, k) for k in ("timeout_s", "cpu_s", "memory_mb")},
                    "need timeout_s > 0, cpu_s >= 1, memory_mb >= 32",
                )
            )
        return problems

    def check_sandbox(self, sandbox: Sandbox) -> str | None:
        """Refuse to run jails outside a security boundary unless explicitly allowed."""
        if sandbox.isolated or self.allow_unsafe_sandbox:
            return None
        return (
            f"game=pyjail runs code written to break out of its jail, and sandbox={sandbox.name} is "
            "not a security boundary. Use sandbox=auto (nsjail or bubblewrap; `bash scripts/setup.sh` "
            "installs them), or, for trusted simulated players only, add "
            "game.allow_unsafe_sandbox=true."
        )

    # ------------------------------------------------------------------ executing
    def run_try(self, sandbox: Sandbox, source: str, user_input: str) -> Try:
        """Run one input through the jail with a fresh flag; say what happened."""
        user_input = user_input[: self.max_input_chars]
        flag = new_flag()
        res = call_function(sandbox, source, FUNCTION, user_input, env={FLAG_VAR: flag}, limits=self.limits)
        if res.outcome is Outcome.SANDBOX_ERROR:
            return Try(user_input, TryVerdict.INFRASTRUCTURE, redact(res.stderr.strip()[-300:], flag))
        verdict = TryVerdict.CAPTURED if res.shows(flag) else _BY_OUTCOME[res.outcome]
        return Try(user_input, verdict, describe(res, flag, self.shown_chars))

    def _run_batch(self, sandbox: Sandbox, source: str, inputs: list[str]) -> list[Try]:
        if len(inputs) <= 1:
            return [self.run_try(sandbox, source, s) for s in inputs]
        with ThreadPoolExecutor(max_workers=min(len(inputs), max(1, sandbox.workers))) as pool:
            return list(pool.map(lambda s: self.run_try(sandbox, source, s), inputs))

    # ------------------------------------------------------------------ setting
    def proposal_text(self, proposal: JailProposal) -> str:
        return str(getattr(proposal, "source", proposal))

    def proposal_of(self, task: Task) -> tuple[dict[str, Any], JailProposal] | None:
        return ({}, JailProposal(task.prompt)) if task.prompt.strip() else None

    def validate(self, proposal: JailProposal, checks: Checks) -> Task | Rejection:
        source = str(getattr(proposal, "source", "") or "")
        if not source.strip():
            return Rejection(FailReason.MALFORMED, getattr(proposal, "note", "") or "the proposal has no jail")
        if len(source) > self.max_jail_chars:
            return Rejection(
                FailReason.MALFORMED, f"the jail is {len(source)} characters long; the limit is {self.max_jail_chars}"
            )
        problem = check_source(source)
        if problem:
            return Rejection(FailReason.MALFORMED, problem)
        tries: list[Try] = []
        session = int(checks.rng.integers(2**31))
        infra = 0
        while len(tries) < self.tries:
            query = AttackQuery(source, tuple(tries), self.tries - len(tries), session)
            (reply,) = checks.solve([query], checks.rng)
            if reply is VOID:
                return Rejection(FailReason.VOID, "the model call for the setter's own attack failed")
            if reply is GIVE_UP:
                break
            if reply is None:
                tries.append(Try("", TryVerdict.UNREADABLE, "your reply held no input"))
                continue
            result = self.run_try(checks.sandbox, source, str(reply))
            if result.verdict is TryVerdict.INFRASTRUCTURE:
                infra += 1
                if infra > MAX_INFRA_RETRIES:
                    return Rejection(FailReason.INFRASTRUCTURE, f"the sandbox failed: {result.shown}")
                continue
            tries.append(result)
            if result.captured:
                return checks.task(prompt=source, answer="", setter_solution=result.input, setter_tries=len(tries))
        seen = "; ".join(_told(i, t) for i, t in enumerate(tries, 1)) or "you gave up"
        return Rejection(
            FailReason.UNSOLVED,
            f"attacking your own jail in a fresh conversation, you did not "
            f"capture the flag in {len(tries)} of {self.tries} tries ({seen}). "
            "A jail counts only if you can break it yourself: leave a way to "
            "the flag that you can find from the source alone",
        )

    # ------------------------------------------------------------------ answering
    def practice_tasks(self, n: int, rng: np.random.Generator) -> list[Task]:
        """No practice tasks ([]): an answer sample here is a session of tries against a jail,
        each seeing what the earlier ones gave, run in the sandbox with a fresh flag, not one
        query with a known answer that make_query/grade could check."""
        return []

    def sample_views(self, task: Task, turns: Any, verdicts: Any) -> list[dict[str, Any]]:
        """Each sample is an attack session: its tries (each input, and what it gave where a later
        try was shown it), the last input, whether the flag was captured (``ok``), and the calls
        and places of its tries' queries (``calls``), which join it to the model's replies."""
        sessions: dict[int, list[tuple[int, int, AttackQuery, Any]]] = {}
        for call in turns:
            for index, (c, query, reply) in enumerate(call):
                sessions.setdefault(query.session, []).append((c, index, query, reply))
        played_sessions = list(sessions.values())
        out = []
        for k, verdict in enumerate(verdicts):
            view: dict[str, Any] = {"ok": verdict_view(verdict)}
            if k < len(played_sessions):
                played = played_sessions[k]
                last_query, last_reply = played[-1][2], played[-1][3]
                tries = [{"input": t.input, "verdict": t.verdict.value, "shown": t.shown} for t in last_query.tries]
                if last_reply is GIVE_UP:
                    tries.append({"input": "", "verdict": "gave up", "shown": ""})
                elif isinstance(last_reply, str):
                    tries.append(
                        {"input": last_reply, "verdict": "captured" if verdict is True else "last", "shown": ""}
                    )
                view.update(
                    answer=last_reply if isinstance(last_reply, str) else None,
                    tries=tries,
                    calls=[[c, i] for c, i, _, _ in played],
                )
            out.append(view)
        return out

    def play(
        self,
        task: Task,
        answer: Answer,
        n: int,
        rng: np.random.Generator,
        sandbox: Sandbox | None = None,
        query_rng: np.random.Generator | None = None,
    ) -> list[Verdict]:
        """``n`` attack sessions, advanced together one try at a time (so a model client can
        send a try of every open session at once, and the sandbox runs them side by side)."""
        if sandbox is None:
            raise ValueError("PyJail needs a sandbox to run its attack sessions")
        source = task.prompt
        shown = source if self.show_source else None
        sessions = [_Session(int(rng.integers(2**31))) for _ in range(n)]
        while True:
            live = [s for s in sessions if s.verdict is _OPEN]
            if not live:
                break
            queries = [AttackQuery(shown, tuple(s.tries), self.tries - len(s.tries), s.session) for s in live]
            replies = ask(answer, queries, rng)
            to_run: list[tuple[_Session, str]] = []
            for s, reply in zip(live, replies, strict=True):
                if reply is VOID:
                    s.verdict = VOID
                elif reply is GIVE_UP:
                    s.verdict = False
                elif reply is None:
                    s.add(Try("", TryVerdict.UNREADABLE, "your reply held no input"), self.tries)
                else:
                    to_run.append((s, str(reply)))
            results = self._run_batch(sandbox, source, [text for _, text in to_run])
            for (s, _), result in zip(to_run, results, strict=True):
                if result.verdict is TryVerdict.INFRASTRUCTURE:
                    s.infra += 1
                    if s.infra > MAX_INFRA_RETRIES:
                        s.verdict = VOID
                    continue  # not the attacker's fault: the try is asked again
                s.add(result, self.tries)
        return [s.verdict for s in sessions]


_OPEN: Any = Sentinel("_OPEN", __name__)  # a session still being played


@dataclass
class _Session:
    session: int
    tries: list[Try] = field(default_factory=list)
    infra: int = 0
    verdict: Verdict = _OPEN

    def add(self, t: Try, limit: int) -> None:
        self.tries.append(t)
        if t.captured:
            self.verdict = True
        elif len(self.tries) >= limit:
            # Every reply unreadable: the session is unreadable, otherwise it failed.
            self.verdict = None if all(x.verdict is TryVerdict.UNREADABLE for x in self.tries) else False

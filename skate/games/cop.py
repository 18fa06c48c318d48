"""Code-output prediction (COP): what does this Python program print?

A proposal is a program plus wrong options. It is valid when the program runs in the sandbox
without error within the limits, prints something, prints the same thing on every run, and the
setter supplied enough distractors that differ from each other and from the real output.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from skate.games.base import Game, GameSpec, normalize
from skate.records import FailReason, Rejection, Task
from skate.sandbox import Outcome, Sandbox


@dataclass(frozen=True)
class COPProposal:
    code: str
    distractors: list[str] = field(default_factory=list)
    note: str = ""  # why the proposal is empty, when the setter's reply could not be read


class COPGame(Game):
    def __init__(self, name: str = "cop", rounds: int = 50, attempts: int = 3, n_distractors: int = 9,
                 n_options: int = 4, determinism_runs: int = 2) -> None:
        self.spec = GameSpec(name=name, rounds=rounds, attempts=attempts,
                             n_distractors=n_distractors, n_options=n_options)
        self.determinism_runs = determinism_runs

    def proposal_text(self, proposal: COPProposal) -> str:
        return str(getattr(proposal, "code", proposal))

    def validate(self, proposal: COPProposal, *, round: int, setter: str,
                 sandbox: Sandbox) -> Task | Rejection:
        code = getattr(proposal, "code", None)
        if not isinstance(code, str) or not code.strip():
            return Rejection(FailReason.MALFORMED, getattr(proposal, "note", "") or "the proposal has no program")
        results = sandbox.run_many([code] * self.determinism_runs)
        for res in results:
            if res.outcome is Outcome.SANDBOX_ERROR:
                return Rejection(FailReason.INFRASTRUCTURE, res.summary())
            if not res.ok:
                return Rejection(FailReason.NOT_VERIFIABLE, f"the program did not run cleanly: {res.summary()}")
        outputs = [r.stdout.rstrip("\n") for r in results]
        if not normalize(outputs[0]):
            return Rejection(FailReason.NOT_VERIFIABLE, "the program printed nothing")
        if len({normalize(o) for o in outputs}) > 1:
            return Rejection(FailReason.NOT_VERIFIABLE,
                             f"the program is not deterministic: {_first_difference(outputs)}")
        answer = outputs[0]
        distractors, rejection = self.check_distractors(answer, proposal.distractors)
        if rejection is not None:
            return rejection
        return Task(task_id=f"r{round:03d}-{setter}", round=round, setter=setter, prompt=code,
                    answer=answer, distractors=distractors)


def _first_difference(outputs: list[str]) -> str:
    """Where repeated runs first disagree (by line, without quoting the varying text)."""
    runs = [o.splitlines() for o in outputs]
    for line_no in range(max(len(r) for r in runs)):
        seen = {r[line_no].strip() if line_no < len(r) else None for r in runs}
        if len(seen) > 1:
            return f"repeated runs printed different text on output line {line_no + 1}"
    return "repeated runs printed different output"

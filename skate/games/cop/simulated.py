"""How a simulated player of known skill plays COP.

It **sets** real Python programs from :mod:`skate.games.cop.generator`, aimed at a target
difficulty on the scale of :func:`~skate.games.cop.difficulty.code_difficulty` (it drafts a few and
keeps the closest), learns their output from the sandbox (never by running code in-process) and
writes plausible wrong options. A defective attempt crashes, prints nothing, prints something
different on every run, or has too few distinct wrong options.

It **answers** a multiple-choice sample correctly with probability ``know + (1 - know) / n``
(``n`` options): it finds the real output among the options (running the program in the sandbox)
when it knows, and guesses uniformly otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from skate.answers.choice import ChoiceQuery, normalize_text
from skate.games.base import GameEnv
from skate.games.cop.difficulty import code_difficulty
from skate.games.cop.distractors import make_distractors
from skate.games.cop.generator import KINDS, generate_program, kind_of
from skate.games.cop.rules import COPGame, COPProposal
from skate.players.simulated import Memo, SimulatedPlayer, Simulation
from skate.runlog.records import SetterContext
from skate.sandbox import Sandbox

FLAWS = ("crash", "silent", "nondeterministic", "few_distractors")


class SandboxOracle:
    """What a program prints, learnt by running it in the sandbox; memoised and thread-safe.

    Returns ``None`` when the program does not run cleanly.
    """

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self._memo: Memo[str, str | None] = Memo(self._run)

    def __call__(self, code: str) -> str | None:
        return self._memo(code)

    def _run(self, code: str) -> str | None:
        res = self.sandbox.run(code)
        return res.stdout.rstrip("\n") if res.ok else None


class COPSimulation(Simulation):
    kinds = KINDS

    def __init__(self, game: COPGame, env: GameEnv, oracle: SandboxOracle | None = None) -> None:
        self.n_distractors = game.n_distractors
        self.oracle = oracle or SandboxOracle(env.sandbox)
        # Memos shared by every player of the run (each task is read by all of them, and each
        # option shown in thousands of samples): a program's difficulty, an option's key.
        self._difficulty: Memo[str, float] = Memo(code_difficulty)
        self._keys: Memo[str, str] = Memo(normalize_text, size=8192)

    def kind_of(self, text: str) -> str | None:
        return kind_of(text)

    def difficulty(self, text: str) -> float:
        return self._difficulty(text)

    def _key(self, option: str) -> str:
        return self._keys(option)

    # ------------------------------------------------------------------ setting
    def write(
        self, player: SimulatedPlayer, ctx: SetterContext, kind: str, target: float, rng: np.random.Generator
    ) -> COPProposal:
        code = self._draft(kind, target, rng)
        answer = self.oracle(code)
        distractors = make_distractors(answer if answer else "0", self.n_distractors, rng)
        return COPProposal(code=code, distractors=distractors)

    @staticmethod
    def _draft(kind: str, target: float, rng: np.random.Generator) -> str:
        """Draft a few programs near the target and keep the one whose difficulty is closest."""
        drafts = [generate_program(kind, float(np.clip(target + rng.normal(0, 0.1), 0, 1)), rng) for _ in range(4)]
        return min(drafts, key=lambda c: abs(code_difficulty(c) - target))

    def flaw(
        self, player: SimulatedPlayer, ctx: SetterContext, proposal: COPProposal, rng: np.random.Generator
    ) -> COPProposal:
        flaw = str(rng.choice(FLAWS))
        code, distractors = proposal.code, proposal.distractors
        if flaw == "crash":
            return COPProposal(code + "\nprint(undefined_result)\n", distractors)
        if flaw == "silent":
            return COPProposal(code.replace("print(", "str("), distractors)
        if flaw == "nondeterministic":
            return COPProposal(code + "\nprint(__import__('os').urandom(6).hex())\n", distractors)
        # few_distractors: repeats and the real answer itself among the wrong options
        answer = self.oracle(code)
        k = max(1, len(distractors) // 2)
        bad = distractors[:k] + distractors[:k] + ([answer] if answer else [])
        return COPProposal(code, bad[: len(distractors)])

    # ------------------------------------------------------------------ answering
    def answer(
        self, player: SimulatedPlayer, queries: Sequence[ChoiceQuery], rng: np.random.Generator
    ) -> list[int | None]:
        picks: list[int | None] = []
        seen: dict[str, tuple[float, str | None]] = {}  # per task: (p_know, the output's key)
        for q in queries:
            if q.prompt not in seen:
                truth = self.oracle(q.prompt)
                seen[q.prompt] = (player.p_know(q.prompt), normalize_text(truth) if truth is not None else None)
            know, key = seen[q.prompt]
            right = [i for i, o in enumerate(q.options) if self._key(o) == key]
            if right and rng.random() < know:
                picks.append(right[0])
            else:
                picks.append(int(rng.integers(len(q.options))))
        return picks


def simulation(game: COPGame, env: GameEnv) -> COPSimulation:
    """How simulated players play COP in one run (its registered ``simulation`` part)."""
    return COPSimulation(game, env)

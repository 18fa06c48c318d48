"""MathQuiz (ZeroSumEval): write a question whose answer is a given number, then prove it.

Each round every setter is given a secret target integer, drawn from the run's seeded generator
in ``[target_min, target_max]`` and kept across its attempts that round. It writes a question
whose answer is the target without stating it. Then, in a fresh context that shows neither the
target nor the history, the setter answers its own question; the question is valid only if
that answer equals the target. Every player answers every valid question with a free-form
answer, compared with the target after normalising (:mod:`skate.answers.exact`), so
p(correct) is the fraction of sampled answers equal to the target. With ``game.tries`` = k > 1 a
sample is a session of up to k answers, each asked anew, correct once one of them is
(ZeroSumEval's student gets several tries a match); p(correct) is then the fraction of sessions
won.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from skate.answers.exact import NUMBER, ExactQuery, canonical_number, grade_number
from skate.errors import Problem
from skate.games.base import Answer, AnswerFormat, Checks, Game, GameSpec, Verdict, ask
from skate.games.mathquiz.config import MathQuizConfig
from skate.games.mathquiz.generator import KINDS
from skate.runlog.records import VOID, FailReason, Rejection, Task


@dataclass(frozen=True)
class MathQuizProposal:
    question: str
    note: str = ""  # why the question is empty, when the setter's reply could not be read


def recipe_for(target: int, rng: np.random.Generator) -> str:
    """One calculation of two steps whose value is ``target``: ``a × b + c`` (``- c`` when the
    product passes it; ``a × b`` when it is exact), with ``a`` from 3 to 12 and the product about
    half to nine tenths of the target, so the sum is not the whole of it."""
    a = int(rng.integers(3, 13))
    b = max(2, int(abs(target) * rng.uniform(0.5, 0.9)) // a)
    rest = target - a * b
    return f"{a} × {b}" + ("" if rest == 0 else f" + {rest}" if rest > 0 else f" - {-rest}")


def states_number(text: str, number: int) -> bool:
    """Whether ``text`` names ``number`` as a number of its own (``1,000`` names 1000; 120
    does not name 12)."""
    want = str(number)
    return any(canonical_number(token) == want for token in NUMBER.findall(text))


class MathQuizGame(Game[MathQuizConfig]):
    spec = GameSpec(
        name="mathquiz",
        answer_format=AnswerFormat.exact_match,
        kinds=KINDS,
        description="a question whose answer is a given integer; free-form answers",
    )
    config_schema = MathQuizConfig
    rejection_hints = {
        "breaks_rules": "its questions broke a rule (stated the target, ran too long): the rejection's detail in "
        "events.jsonl says which",
    }
    runs_programs = False  # questions are solved and checked in-process

    def __init__(self, *args: Any, **values: Any) -> None:
        super().__init__(*args, **values)
        cfg = self.config
        self.target_min, self.target_max = cfg.target_min, cfg.target_max
        self.reasoning = cfg.reasoning
        self.max_question_chars = cfg.max_question_chars
        self.tries = cfg.tries
        self.recipe = cfg.recipe

    def rejection_hint(self, reason: str) -> str | None:
        """MathQuiz's setting for an unsolved question, where it is not already in effect."""
        if reason == "unsolved":
            return "the setter did not reach its own target from its question" + (
                "" if self.recipe else ": game.recipe=true gives it a calculation that reaches the target, to ask for"
            )
        return super().rejection_hint(reason)

    @classmethod
    def check_config(cls, cfg: MathQuizConfig) -> list[Problem]:
        problems = super().check_config(cfg)
        if cfg.target_min > cfg.target_max:
            problems.append(Problem("target_min", cfg.target_min, f"must be <= game.target_max ({cfg.target_max})"))
        if max(abs(cfg.target_min), abs(cfg.target_max)) > 10**9:
            problems.append(Problem("target_max", cfg.target_max, "targets must lie within ±10^9"))
        if not 1 <= cfg.tries <= 20:
            problems.append(Problem("tries", cfg.tries, "give the answers per sample, from 1 to 20"))
        if cfg.max_question_chars < 20:
            problems.append(Problem("max_question_chars", cfg.max_question_chars, "must be >= 20"))
        return problems

    # ------------------------------------------------------------------ setting
    def assignment(self, setter: str, round: int, rng: np.random.Generator) -> dict[str, Any]:
        target = int(rng.integers(self.target_min, self.target_max + 1))
        return {"target": target, "recipe": recipe_for(target, rng)} if self.recipe else {"target": target}

    def proposal_text(self, proposal: MathQuizProposal) -> str:
        return str(getattr(proposal, "question", proposal))

    def proposal_of(self, task: Task) -> tuple[dict[str, Any], MathQuizProposal] | None:
        try:
            target = int(task.answer)
        except ValueError:
            return None
        return {"target": target}, MathQuizProposal(task.prompt)

    def validate(self, proposal: MathQuizProposal, checks: Checks) -> Task | Rejection:
        target = int(checks.assignment["target"])
        question = str(getattr(proposal, "question", "") or "").strip()
        if not question:
            return Rejection(FailReason.MALFORMED, getattr(proposal, "note", "") or "the proposal has no question")
        if len(question) > self.max_question_chars:
            return Rejection(
                FailReason.MALFORMED,
                f"the question is {len(question)} characters long; the limit is {self.max_question_chars}",
            )
        if states_number(question, target):
            return Rejection(
                FailReason.BREAKS_RULES,
                f"the question states its own answer, {target}: the target must be worked out, never given",
            )
        (reply,) = checks.solve([ExactQuery(question)], checks.rng)
        if reply is VOID:
            return Rejection(FailReason.VOID, "the model call for the setter's own answer failed")
        if reply is None:
            return Rejection(
                FailReason.UNSOLVED, "asked your own question in a fresh conversation, you gave no number as the answer"
            )
        if not grade_number(str(target), reply):
            return Rejection(
                FailReason.UNSOLVED,
                f"asked your own question in a fresh conversation, you "
                f"answered {reply}, not the target {target}: the question "
                "must lead to the target, and you must be able to solve it",
            )
        return checks.task(prompt=question, answer=str(target), setter_answer=reply)

    # ------------------------------------------------------------------ answering
    def play(
        self,
        task: Task,
        answer: Answer,
        n: int,
        rng: np.random.Generator,
        sandbox: Any = None,
        query_rng: np.random.Generator | None = None,
    ) -> list[Verdict]:
        """``n`` samples; with ``tries`` > 1 each is a session of up to ``tries`` fresh answers,
        the still-open sessions asked together, correct once one answer is right (a failed model
        call ends its session as void: left out of p(correct), never a wrong answer)."""
        if self.tries == 1:
            return super().play(task, answer, n, rng, sandbox, query_rng)
        verdicts: list[Verdict] = [False] * n
        still = list(range(n))
        for _ in range(self.tries):
            queries = [self.make_query(task, query_rng or rng) for _ in still]
            replies = ask(answer, queries, rng)
            wrong = []
            for i, query, reply in zip(still, queries, replies, strict=True):
                if reply is VOID:
                    verdicts[i] = VOID
                elif reply is not None and self.grade(task, query, reply):
                    verdicts[i] = True
                else:
                    wrong.append(i)
            still = wrong
            if not still:
                break
        return verdicts

    def make_query(self, task: Task, rng: np.random.Generator) -> ExactQuery:
        return ExactQuery(task.prompt)

    def grade(self, task: Task, query: ExactQuery, reply: Any) -> bool:
        return grade_number(task.answer, reply)

"""Code-output prediction (COP, SKATE): what does this Python program print?

A proposal is a program plus wrong options. It is valid when the program runs in the sandbox
without error within the limits, prints something, prints the same thing on every run, prints a
value rather than only True/False (``require_value``, on by default), and the setter supplied
enough wrong options that differ from each other and from the real output. Each
answer sample shows the program with the real output and ``n_options - 1`` of the wrong options,
shuffled (multiple choice).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from skate.answers.choice import ChoiceQuery, check_distractors, draw_choice, grade_choice, normalize_text
from skate.errors import Problem
from skate.games.base import AnswerFormat, Checks, Game, GameSpec
from skate.games.cop.config import COPConfig
from skate.games.cop.distractors import make_distractors
from skate.games.cop.generator import KINDS, boolean_only
from skate.runlog.records import VOID, FailReason, Rejection, Task
from skate.sandbox import Outcome


@dataclass(frozen=True)
class COPProposal:
    code: str
    distractors: list[str] = field(default_factory=list)
    note: str = ""  # why the proposal is empty, when the setter's reply could not be read


# What each of the generator's families is about, as a setter's topic for a round (game.topics).
TOPICS = {
    "arithmetic": "arithmetic: integer division, remainders and the order of operations",
    "strings": "string methods such as split, join, replace, find and strip",
    "slicing": "slicing lists and strings, with steps and negative indices",
    "dicts": "dictionaries: get, setdefault, counting and the order of keys",
    "recursion": "a function that calls itself",
    "closures": "closures, default arguments and lambdas made in a loop",
    "sorting": "sorting with a key, reverse order and ties",
    "bitwise": "the bitwise operators &, |, ^, << and >>",
    "generators": "generators: yield, next and what a generator has left",
    "exceptions": "exceptions: which of try, except, else and finally run",
    "classes": "classes: attributes, methods and inheritance",
    "comprehensions": "list, set and dict comprehensions, with conditions",
}


class COPGame(Game[COPConfig]):
    spec = GameSpec(
        name="cop",
        answer_format=AnswerFormat.multiple_choice,
        kinds=KINDS,
        description="code-output prediction: a Python program, the answer is what it prints",
    )
    config_schema = COPConfig
    rejection_hints = {
        "breaks_rules": "its programs broke a rule (printed only a boolean, stated their output): the rejection's "
        "detail in events.jsonl says which; game.require_value=false allows boolean outputs",
    }

    def rejection_hint(self, reason: str) -> str | None:
        """COP's settings for its rejections, those not already in effect."""
        if reason == "too_few_distractors":
            tries = [
                *([] if self.fill_distractors else ["game.fill_distractors=true tops them up with the game's own"]),
                *(["game.n_distractors=3 asks for fewer"] if self.n_distractors > 3 else []),
            ]
            return "too few distinct wrong options" + (": " + ", ".join(tries) if tries else "")
        if reason == "not_verifiable":
            tries = [] if self.topics else ["game.topics=true gives each setter a kind of program each round"]
            return "its programs did not run, or printed nothing: " + ", ".join(
                [*tries, f"{self.RESAMPLE} asks anew after a rejection (players.llm)"]
            )
        return super().rejection_hint(reason)

    def __init__(self, *args: Any, **values: Any) -> None:
        super().__init__(*args, **values)
        cfg = self.config
        self.n_distractors = cfg.n_distractors
        self.fill_distractors = cfg.fill_distractors
        self.n_options = cfg.n_options
        self.determinism_runs = cfg.determinism_runs
        self.require_value = bool(cfg.require_value)  # reject programs that print only True/False
        self.reasoning = bool(cfg.reasoning)  # language-model answerers reason before the letter
        self.topics = bool(cfg.topics)  # a topic for each setter each round (its assignment)
        self.topic_families = tuple(cfg.topic_families or KINDS)  # drawn from these
        self.self_check = bool(cfg.self_check)  # the setter must pick its own task's output once

    @classmethod
    def check_config(cls, cfg: COPConfig) -> list[Problem]:
        problems = super().check_config(cfg)
        if cfg.n_options < 2:
            problems.append(Problem("n_options", cfg.n_options, "need at least 2 options per sample"))
        if cfg.n_distractors < cfg.n_options - 1:
            problems.append(
                Problem(
                    "n_distractors",
                    cfg.n_distractors,
                    f"need at least game.n_options - 1 = {cfg.n_options - 1} distractors",
                )
            )
        if cfg.determinism_runs < 1:
            problems.append(Problem("determinism_runs", cfg.determinism_runs, "need >= 1"))
        if cfg.topic_families is not None:
            unknown = [f for f in cfg.topic_families if f not in TOPICS]
            if unknown or not cfg.topic_families:
                said = f"unknown: {', '.join(unknown)}; " if unknown else ""
                problems.append(
                    Problem(
                        "topic_families",
                        list(cfg.topic_families),
                        f"{said}need a non-empty list of {', '.join(TOPICS)}, or null for all",
                    )
                )
        return problems

    # ------------------------------------------------------------------ setting
    def proposal_text(self, proposal: COPProposal) -> str:
        return str(getattr(proposal, "code", proposal))

    def assignment(self, setter: str, round: int, rng: np.random.Generator) -> dict[str, Any]:
        """With ``game.topics``, the round's topic for this setter: one of the generator's
        families (of ``game.topic_families``), said in a few words (shown in the setter's situation); else nothing."""
        if not self.topics:
            return {}
        kind = self.topic_families[int(rng.integers(len(self.topic_families)))]
        return {"topic": TOPICS[kind]}

    def proposal_of(self, task: Task) -> tuple[dict[str, Any], COPProposal] | None:
        wrong = task.data.get("distractors")
        return ({}, COPProposal(task.prompt, [str(w) for w in wrong])) if wrong else None

    def validate(self, proposal: COPProposal, checks: Checks) -> Task | Rejection:
        code = getattr(proposal, "code", None)
        if not isinstance(code, str) or not code.strip():
            return Rejection(FailReason.MALFORMED, getattr(proposal, "note", "") or "the proposal has no program")
        # One run first: a program that fails, prints nothing or runs to the time limit (as small
        # models' programs often do) is rejected without spending the other runs' CPU, which the
        # model servers of a local game share.
        results = checks.sandbox.run_many([code])
        if results[0].ok and normalize_text(results[0].stdout) and self.determinism_runs > 1:
            results += checks.sandbox.run_many([code] * (self.determinism_runs - 1))
        for res in results:
            if res.outcome is Outcome.SANDBOX_ERROR:
                return Rejection(FailReason.INFRASTRUCTURE, res.summary())
            if not res.ok:
                return Rejection(FailReason.NOT_VERIFIABLE, f"the program did not run cleanly: {res.summary()}")
        outputs = [r.stdout.rstrip("\n") for r in results]
        if not normalize_text(outputs[0]):
            return Rejection(FailReason.NOT_VERIFIABLE, "the program printed nothing" + silent_hint(code))
        if len({normalize_text(o) for o in outputs}) > 1:
            return Rejection(
                FailReason.NOT_VERIFIABLE, f"the program is not deterministic: {_first_difference(outputs)}"
            )
        answer = outputs[0]
        if self.require_value and boolean_only(answer):
            return Rejection(
                FailReason.BREAKS_RULES,
                f"the program prints only {' '.join(answer.split())[:40]}, a boolean: make it print a "
                "value instead (a number, string, list, dict, ...), e.g. the quantity the "
                "condition is about (a rule of this game: game.require_value)",
            )
        distractors, rejection = check_distractors(answer, proposal.distractors, self.n_distractors)
        filled = 0
        if rejection is not None and self.fill_distractors and isinstance(proposal.distractors, (list, tuple)):
            own = {normalize_text(d) for d in distractors}
            extra = [
                d for d in make_distractors(answer, self.n_distractors, checks.rng) if normalize_text(d) not in own
            ]
            filled = self.n_distractors - len(distractors)
            distractors, rejection = (*distractors, *extra[:filled]), None
        if rejection is not None:
            return rejection
        task = checks.task(
            prompt=code, answer=answer, distractors=distractors, **({"filled_distractors": filled} if filled else {})
        )
        return self._checked_by_its_setter(task, checks) if self.self_check else task

    def _checked_by_its_setter(self, task: Task, checks: Checks) -> Task | Rejection:
        """``game.self_check``: the setter answers its own task once, in a fresh conversation (the
        program and a draw of its options only); a wrong pick rejects it as unsolved."""
        query = self.make_query(task, checks.rng)
        (reply,) = checks.solve([query], checks.rng)
        if reply is VOID:
            return Rejection(FailReason.VOID, "the model call for the setter's own answer failed")
        if reply is not None and self.grade(task, query, reply):
            return task
        chose = (
            f"you chose {query.options[reply]!r}"
            if isinstance(reply, int) and 0 <= reply < len(query.options)
            else "your reply named no option"
        )
        return Rejection(
            FailReason.UNSOLVED,
            f"answering your own task in a fresh conversation, {chose}, but the "
            f"program prints {task.answer!r}: a task counts only if you can trace "
            "it yourself (a rule of this game: game.self_check)",
        )

    # ------------------------------------------------------------------ answering
    def make_query(self, task: Task, rng: np.random.Generator) -> ChoiceQuery:
        return draw_choice(task.prompt, task.answer, task.data["distractors"], self.n_options, rng)

    def grade(self, task: Task, query: ChoiceQuery, reply: Any) -> bool:
        return grade_choice(query, task.answer, reply)


def silent_hint(code: str) -> str:
    """Why a program that ran cleanly printed nothing, where its syntax tree shows it: functions
    defined and never called, or no print() at all (what small models do most)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return ""
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    defined = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    uncalled = [f for f in defined if f not in called]
    top_level = [
        n
        for n in tree.body
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom))
        and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
    ]
    if uncalled and not top_level:
        first = next(n for n in tree.body if getattr(n, "name", None) == uncalled[0])
        prints = any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "print" for n in ast.walk(first)
        )
        call = f"{uncalled[0]}()" if prints else f"print({uncalled[0]}())"
        return (
            f": it defines {', '.join(f'{f}()' for f in uncalled[:3])} but never calls "
            f"{'it' if len(uncalled) == 1 else 'them'}; end the program with a call, e.g. {call}"
        )
    if "print" not in called:
        return ": it never calls print(); print the value the task is about"
    return ": its print() calls never ran (check the conditions and loops around them)"


def _first_difference(outputs: list[str]) -> str:
    """Where repeated runs first disagree (by line, without quoting the varying text)."""
    runs = [o.splitlines() for o in outputs]
    for line_no in range(max(len(r) for r in runs)):
        seen = {r[line_no].strip() if line_no < len(r) else None for r in runs}
        if len(seen) > 1:
            return f"repeated runs printed different text on output line {line_no + 1}"
    return "repeated runs printed different output"

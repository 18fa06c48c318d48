"""The COP setter and answerer as DSPy modules (typed signatures; see :mod:`skate.llm.modules`)."""

from __future__ import annotations

import json
from typing import Any, Literal

import dspy

import skate.llm  # noqa: F401  (environment defaults before dspy is imported)
from skate.games.base import GameEnv
from skate.games.cop.rules import COPGame, COPProposal
from skate.llm.modules import (
    GameModules,
    MultipleChoiceAnswerer,
    SetterModule,
    adapter,
    guidance_field,
    percent,
    render_history,
    render_situation,
    sections,
    strip_fences,
)
from skate.runlog.records import PASS_MARK, SetterContext

RULES = """\
The tournament has {n_players} players. Each round every player writes one task, and then every \
player, the author included, answers every task.

Your task is a Python 3 program:
- 4 to 20 lines, standard library only; it reads no input, files or network, and finishes in \
well under {timeout:g} seconds;
- it runs from top to bottom as a script: a function it defines does nothing until the program \
calls it;
- it prints a value with print() (a number, string, list, tuple, dict, ...), not a bare True or \
False{value_note}, and the same text every time it runs: no randomness, clock, environment, id() or default object \
reprs, set or hash order, platform details;
- its first line is a comment naming the point of Python it tests;
- what it prints turns on a real point of how Python behaves (slicing, aliasing and mutation, \
default arguments, scoping, integer and float arithmetic, string methods, sorting, generators, \
exceptions, ...), so that a careless reader predicts it wrongly; not a deliberate syntax error \
or crash, and not plain bookkeeping of a few variables through straight-line code.

Your wrong answers: {n_distractors} different outputs a careless reader might expect, each \
written exactly as print() would show it (an output, not code and not a description), none \
equal to the true output. A solver sees the program and {n_options} options, the true output \
and {n_shown} of your wrong answers in random order, and picks one.

Scoring: one point for each of your tasks that is accepted, and one point for each task (yours \
or another player's) that you answer correctly at least {pass_mark} of the time. The best task is \
one you can trace correctly yourself while the others are likely to get it wrong. A task is \
rejected when the program fails or times out, prints nothing, prints different text on \
different runs, {value_rejection}has fewer than {n_distractors} distinct wrong answers, or is too \
similar to one of your own earlier tasks.{self_check_note}"""

SELF_CHECK_NOTE = (
    " Before it counts you answer it yourself once, in a new conversation that shows only the "
    "program and its options: if you pick a wrong option, it is rejected."
)

VALUE_REJECTION = "prints only True or False (not a value), "
VALUE_NOTE = " (such a program is rejected)"


WRONG_DESC = "a wrong output"
PLACEHOLDER = f"<{WRONG_DESC}>"  # how the plain reply template shows each wrong answer (skate.llm.plain)


class SetCOPTask(dspy.Signature):
    """You are a player in a tournament of Python code-output-prediction tasks: each task is a
    short program, and the question is what it prints. Write your task for this round, following
    the rules and the guidance. If an earlier attempt this round was rejected, the situation says
    why: fix exactly that."""

    rules: str = dspy.InputField(desc="how the game is played and scored")
    guidance: str = guidance_field()
    history: str = dspy.InputField(desc="earlier tasks of the game you are allowed to see; may be empty")
    situation: str = dspy.InputField(desc="the round, attempts left, and any rejected attempts this round")
    program: str = dspy.OutputField(desc="the whole program, ending with its print()")
    wrong_answers: list[str] = dspy.OutputField(desc=WRONG_DESC)


class AnswerCOP(dspy.Signature):
    """Work out exactly what the Python program prints when it runs, then choose the option that
    is exactly that output. Exactly one option is right."""

    program: str = dspy.InputField(desc="a Python 3 program")
    options: str = dspy.InputField(desc="candidate outputs, each under its letter")
    answer: Literal["A", "B", "C", "D"] = dspy.OutputField(desc="the letter of the true output")


class COPSetter(SetterModule):
    plain_kinds = {"program": "code"}  # the plain reply format: the program in a fenced block

    def __init__(
        self,
        n_distractors: int = 9,
        n_options: int = 4,
        timeout_s: float = 5.0,
        pass_mark: float = PASS_MARK,
        require_value: bool = True,
        self_check: bool = False,
    ) -> None:
        super().__init__(SetCOPTask, plain_counts={"wrong_answers": n_distractors})
        self.n_distractors, self.n_options = n_distractors, n_options
        self.timeout_s, self.pass_mark = timeout_s, pass_mark
        self.require_value, self.self_check = require_value, self_check

    def inputs(self, ctx: SetterContext) -> dict[str, str]:
        rules = RULES.format(
            n_players=len(ctx.players),
            timeout=self.timeout_s,
            n_distractors=self.n_distractors,
            n_options=self.n_options,
            n_shown=self.n_options - 1,
            pass_mark=percent(self.pass_mark),
            value_rejection=VALUE_REJECTION if self.require_value else "",
            value_note=VALUE_NOTE if self.require_value else "",
            self_check_note=SELF_CHECK_NOTE if self.self_check else "",
        )
        return {
            "rules": rules,
            "guidance": self.guidance(ctx),
            "situation": render_situation(ctx),
            "history": render_history(ctx),
        }

    def parse(self, text: str) -> COPProposal:
        try:
            fields = adapter().parse(self.predict.signature, text)
            program, wrong = fields["program"], fields["wrong_answers"]
        except Exception:  # noqa: BLE001 - fall back to reading the sections ourselves
            sec = sections(text)
            program, wrong = sec.get("program", ""), sec.get("wrong_answers", "")
            if not program:
                return COPProposal(
                    "",
                    [],
                    note="the reply has no program: write it under a PROGRAM: heading, in a ```python fenced block",
                )
            try:
                wrong = json.loads(wrong)
            except ValueError:
                wrong = [line.strip() for line in str(wrong).splitlines() if line.strip()]
        if not isinstance(wrong, list):
            wrong = [wrong]
        # the template's own placeholder copied as an item (the 1.5B) is no wrong answer: left empty
        return COPProposal(strip_fences(str(program)), ["" if str(w).strip() == PLACEHOLDER else str(w) for w in wrong])

    def label(self, proposal: COPProposal) -> dict[str, Any]:
        return {"program": proposal.code, "wrong_answers": list(proposal.distractors)}


def answerer(n_options: int = 4, reasoning: bool = False) -> MultipleChoiceAnswerer:
    return MultipleChoiceAnswerer(AnswerCOP, n_options, prompt_field="program", reasoning=reasoning)


def cop_modules(game: COPGame, env: GameEnv) -> GameModules:
    timeout: Any = env.sandbox.limits.timeout_s if env.sandbox is not None else 5.0
    return GameModules(
        COPSetter(
            game.n_distractors, game.n_options, float(timeout), env.pass_mark, game.require_value, game.self_check
        ),
        answerer(game.n_options, game.reasoning),
    )

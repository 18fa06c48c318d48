"""The COP setter and answerer as DSPy modules (typed signatures; see :mod:`skate.llm.modules`)."""

from __future__ import annotations

import json
from typing import Any, Literal

import skate.llm  # noqa: F401  (environment defaults before dspy is imported)
import dspy

from skate.games.base import GameEnv
from skate.games.cop.rules import COPGame, COPProposal
from skate.llm.modules import (GameModules, MultipleChoiceAnswerer, SetterModule, adapter, guidance_field,
                               percent, render_history, render_situation, sections, strip_fences)
from skate.records import SetterContext

RULES = """\
You are one of {n_players} players in a tournament in which the players examine each other. In \
every round each player writes one code-output-prediction task, and then every player, the \
author included, answers every task.

A task is a short, self-contained Python 3 program that uses only the standard library, reads \
no input, files or network, finishes in well under {timeout:g} seconds, and prints the same text \
every time it runs. That printed text is the answer. With the program you give {n_distractors} \
wrong answers that look believable. A solver sees the program and {n_options} options, the true \
output plus {n_shown} of your wrong answers in random order, and must pick the true one.

Scoring: one point for each of your tasks that is accepted, and one point for each task (yours \
or another player's) that you answer correctly at least {pass_mark} of the time. The best task is one \
you can trace correctly yourself while the others are likely to get it wrong. A task is rejected \
when the program fails or times out, prints nothing, prints different text on different runs, \
{value_rejection}has fewer than {n_distractors} distinct wrong answers, or is too similar to one of your own \
earlier tasks.

What makes a good task here:
- It turns on a real point of how Python behaves, not on a cheap trick: no trivial or deliberate \
syntax error, and not plain bookkeeping of a few variables through straight-line code.
- Its first line is a comment naming the concept it tests, e.g. `# generators: a generator is \
exhausted after one pass`.
- It prints a value (a number, string, list, tuple, dict, an object's repr, ...), not a bare True \
or False{value_note}.
- Nothing it prints depends on the machine or the moment: no clock, randomness, environment, \
object addresses (id(), default reprs), string hash order or platform details."""

VALUE_REJECTION = "prints only True or False (not a value), "
VALUE_NOTE = ": such a program is rejected"
class SetCOPTask(dspy.Signature):
    """Write your task for this round of a code-output-prediction tournament.

    Follow the rules and the guidance, and if earlier attempts this round were rejected, fix what
    the rejection names. The program must print its result with print(). Every wrong answer must
    be text the program could plausibly print but does not."""

    rules: str = dspy.InputField(desc="how the game is played and scored")
    guidance: str = guidance_field()
    situation: str = dspy.InputField(desc="the round, attempts left, and any rejected attempts this round")
    history: str = dspy.InputField(desc="earlier tasks of the game you are allowed to see; may be empty")
    program: str = dspy.OutputField(desc="the complete Python program, without Markdown fences")
    wrong_answers: list[str] = dspy.OutputField(desc="the wrong answers, as a JSON list of strings")


class AnswerCOP(dspy.Signature):
    """Work out exactly what the Python program prints when it runs, then choose the option that
    is exactly that output. Exactly one option is right."""

    program: str = dspy.InputField(desc="a Python 3 program")
    options: str = dspy.InputField(desc="candidate outputs, each under its letter")
    answer: Literal["A", "B", "C", "D"] = dspy.OutputField(desc="the letter of the true output")


class COPSetter(SetterModule):
    def __init__(self, n_distractors: int = 9, n_options: int = 4, timeout_s: float = 5.0,
                 pass_mark: float = 0.55, require_value: bool = True) -> None:
        super().__init__(SetCOPTask)
        self.n_distractors, self.n_options = n_distractors, n_options
        self.timeout_s, self.pass_mark = timeout_s, pass_mark
        self.require_value = require_value

    def inputs(self, ctx: SetterContext) -> dict[str, str]:
        rules = RULES.format(n_players=len(ctx.players), timeout=self.timeout_s, n_distractors=self.n_distractors,
                             n_options=self.n_options, n_shown=self.n_options - 1,
                             pass_mark=percent(self.pass_mark),
                             value_rejection=VALUE_REJECTION if self.require_value else "",
                             value_note=VALUE_NOTE if self.require_value else "")
        return {"rules": rules, "guidance": self.guidance(ctx), "situation": render_situation(ctx),
                "history": render_history(ctx)}

    def parse(self, text: str) -> COPProposal:
        try:
            fields = adapter().parse(self.predict.signature, text)
            program, wrong = fields["program"], fields["wrong_answers"]
        except Exception:  # noqa: BLE001 - fall back to reading the sections ourselves
            sec = sections(text)
            program, wrong = sec.get("program", ""), sec.get("wrong_answers", "")
            if not program:
                return COPProposal("", [], note="the reply has no [[ ## program ## ]] section")
            try:
                wrong = json.loads(wrong)
            except ValueError:
                wrong = [line.strip() for line in str(wrong).splitlines() if line.strip()]
        if not isinstance(wrong, list):
            wrong = [wrong]
        return COPProposal(strip_fences(str(program)), [str(w) for w in wrong])


def answerer(n_options: int = 4, reasoning: bool = False) -> MultipleChoiceAnswerer:
    return MultipleChoiceAnswerer(AnswerCOP, n_options, prompt_field="program", reasoning=reasoning)


def cop_modules(game: COPGame, env: GameEnv) -> GameModules:
    timeout: Any = env.sandbox.limits.timeout_s if env.sandbox is not None else 5.0
    return GameModules(COPSetter(game.n_distractors, game.n_options, float(timeout), env.pass_mark,
                                 game.require_value),
                       answerer(game.n_options, game.reasoning))

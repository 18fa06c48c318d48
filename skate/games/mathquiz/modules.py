"""MathQuiz's DSPy setter and answerer (typed signatures; see :mod:`skate.llm.modules`)."""

from __future__ import annotations

import re

import dspy

import skate.llm  # noqa: F401  (environment defaults before dspy is imported)
from skate.answers.exact import normalize_number
from skate.games.base import GameEnv
from skate.games.mathquiz.rules import MathQuizGame, MathQuizProposal
from skate.llm.modules import (
    FreeFormAnswerer,
    GameModules,
    SetterModule,
    guidance_field,
    percent,
    render_history,
    render_situation,
)
from skate.runlog.records import PASS_MARK, SetterContext

RULES = """\
You are one of {n_players} players in a tournament in which the players test each other with \
maths questions. Every round each player is given a secret whole number, its target, and writes \
one question whose answer is exactly that number: a word problem or a calculation that takes \
several steps of arithmetic to solve.

{plan}

The question must not state the target or give it away. Before it counts, you will be asked to \
answer it yourself in a new conversation that shows neither the target nor these instructions; \
the question is accepted only if your answer there equals the target. Then every player, you \
included, answers it. Answers are compared as whole numbers, so the question needs exactly one \
correct answer, and that answer must be a whole number.

Scoring: one point for each of your questions that is accepted, and one point for each question \
(yours or another player's) that you answer correctly at least {pass_mark} of the time. The best \
question is one you can solve reliably yourself while the others are likely to get it wrong. A \
question is rejected when it is empty or longer than {max_chars} characters, when it states the \
target, when your own answer differs from the target, or when it is too similar to one of your \
own earlier questions."""


class SetMathQuestion(dspy.Signature):
    """Write your question for this round of a maths tournament.

    Its answer must be exactly the target, which the question must not mention. Follow the rules
    and the guidance, and if earlier attempts this round were rejected, fix what the rejection
    names."""

    rules: str = dspy.InputField(desc="how the game is played and scored")
    guidance: str = guidance_field()
    history: str = dspy.InputField(desc="earlier questions of the game you are allowed to see; may be empty")
    target: str = dspy.InputField(desc="the whole number your question's answer must equal; keep it secret")
    situation: str = dspy.InputField(desc="the round, attempts left, and any rejected attempts this round")
    question: str = dspy.OutputField(desc="the question, as a solver will read it")


PLAN = (
    "The target is the answer and never appears in the question: choose numbers that combine to it "
    "and build the question around them, with a step or two more than a single sum. For your target "
    "you could start from {starts}. Work the question out before you send it."
)
# With ``game.recipe``: the target comes with a calculation, and the question tells it.
RECIPE_PLAN = (
    "The target is the answer and never appears in the question. Each round your target comes with a "
    "calculation whose value is the target: write a question that a solver answers by working out "
    "exactly that calculation, giving its numbers and never its result, as a short story or a plain "
    "sum. Work the question out before you send it."
)


# With ``game.recipe``: the same request with the round's calculation beside the target, and
# the question asked of it.
SetMathQuestionFromCalculation = (
    SetMathQuestion.insert(
        4,
        "calculation",
        dspy.InputField(desc="a calculation whose value is the target; your question asks for it"),
        type_=str,
    )
    .with_updated_fields(
        "question", desc="the question, as a solver will read it: the calculation told as a problem, without its result"
    )
    .with_instructions("""Write your question for this round of a maths tournament.

    Its answer must be exactly the target, which the question must not mention: the question asks
    for the given calculation, worked out. Follow the rules and the guidance, and if earlier
    attempts this round were rejected, fix what the rejection names.""")
)
SetMathQuestionFromCalculation.__name__ = "SetMathQuestionFromCalculation"


class AnswerMathQuestion(dspy.Signature):
    """Solve the maths question. Its answer is a whole number."""

    question: str = dspy.InputField(desc="a maths question")
    answer: str = dspy.OutputField(desc="the answer: one number, with no units or words")


def starting_points(target: int) -> str:
    """Two ways to reach ``target`` in numbers that do not state it (a product of two factors
    when it has them, and a sum), for the rules. Small models copy what the rules show: a
    finished example question whatever their target, a question stating the target when the
    rules said such a question is rejected; so the rules give numbers only, and the target
    nowhere but in its own field."""
    ways = []
    a = max((d for d in range(2, int(abs(target) ** 0.5) + 1) if target % d == 0), default=None)
    if a is not None and target:
        ways.append(f"{a} × {target // a}")
    big = round(target * 0.6) or 1
    ways.append(f"{big} + {target - big}")
    return " or ".join(ways)


def headless_question(text: str, max_chars: int) -> str:
    """A reply with no heading that is itself a question ("Can you find how many rolls 24 trays
    of 24 hold?": the 0.5B wrote 4 of its 6 so in one game): the whole reply, when it has a
    number in it and fits the length limit; prose without a number is no question."""
    body = text.strip()
    if not body or len(body) > max_chars or body.startswith("{") or "[[ ##" in body or not re.search(r"\d", body):
        return ""
    return body


class MathQuizSetter(SetterModule):
    plain_kinds: dict[str, str] = {}  # the plain reply format: QUESTION: and the question under it

    def __init__(self, pass_mark: float = PASS_MARK, max_chars: int = 2000, recipe: bool = False) -> None:
        super().__init__(SetMathQuestionFromCalculation if recipe else SetMathQuestion)
        self.pass_mark, self.max_chars, self.recipe = pass_mark, max_chars, recipe

    def inputs(self, ctx: SetterContext) -> dict[str, str]:
        target = int(ctx.assignment["target"])
        plan = RECIPE_PLAN if self.recipe else PLAN.format(starts=starting_points(target))
        rules = RULES.format(
            n_players=len(ctx.players), pass_mark=percent(self.pass_mark), max_chars=self.max_chars, plan=plan
        )
        out = {
            "rules": rules,
            "guidance": self.guidance(ctx),
            "target": str(target),
            "situation": render_situation(ctx),
            "history": render_history(ctx),
        }
        if self.recipe:  # a demonstration's assignment (a practice question's target) has none to show
            out["calculation"] = str(ctx.assignment.get("recipe") or "(none given: any that reaches the target)")
        return out

    def parse(self, text: str) -> MathQuizProposal:
        question = self.field(text, "question") or headless_question(text, self.max_chars)
        if not question:
            return MathQuizProposal("", note="the reply has no question: write it under a QUESTION: heading")
        return MathQuizProposal(question.strip())

    def label(self, proposal: MathQuizProposal) -> dict[str, str]:
        return {"question": proposal.question}


def answerer(reasoning: bool = True) -> FreeFormAnswerer:
    return FreeFormAnswerer(AnswerMathQuestion, "question", normalize_number, reasoning=reasoning)


def mathquiz_modules(game: MathQuizGame, env: GameEnv) -> GameModules:
    return GameModules(MathQuizSetter(env.pass_mark, game.max_question_chars, game.recipe), answerer(game.reasoning))

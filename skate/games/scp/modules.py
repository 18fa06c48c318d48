"""SCP's DSPy setter and answerer (typed signatures; see :mod:`skate.llm.modules`).

The answerer sees a question and its four options numbered 1-4 (sequencing and cloze options
are orders of the letters A-C, so numbers keep the two apart) and replies with a number. The
setter (``game.mode=player_set``) sees numbered paragraphs of the documents offered to it and
names a document, the paragraph its fragment starts at and a question type; for prediction it
also writes three wrong continuations.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal

import dspy

import skate.llm  # noqa: F401  (environment defaults before dspy is imported)
from skate.games.base import GameEnv
from skate.games.scp.questions import TYPES
from skate.games.scp.rules import SCPGame, SCPProposal
from skate.llm.adapters import leading_choice
from skate.llm.modules import (
    AnswererModule,
    GameModules,
    SetterModule,
    adapter,
    guidance_field,
    percent,
    read_choice,
    render_history,
    render_situation,
    with_reasoning,
)
from skate.llm.sections import sections
from skate.runlog.records import PASS_MARK, SetterContext

NUMBERS = ("1", "2", "3", "4")

RULES = """\
You are one of {n_players} players in a tournament in which the players test each other's \
reading. Every round each player is shown numbered paragraphs from a few documents and turns \
one passage of them into a question; then every player, you included, answers every question. \
The right answer is always what the original document says, so you pick the passage and the \
kind of question, and the game cuts the question from the original text:

- sequencing: {seq} consecutive paragraph(s), at least {seq_chars} characters, are cut into \
three parts at sentence boundaries and shown shuffled; solvers pick the order that restores them.
- cloze: {cloze} consecutive paragraph(s), at least {cloze_chars} characters, have three \
sentences removed; solvers pick which removed sentence fills which hole.
- prediction: {pred} paragraph(s), at least {pred_chars} characters, are shown, and solvers pick \
the paragraph that really comes next among four candidates: the true next paragraph and the \
three wrong continuations you write. They must read like the document, {min_chars}-{max_chars} \
characters each, and must not say what the true next paragraph says (then they would be right \
too). For sequencing and cloze, write no wrong continuations.

Name the fragment by its document id (as written after "Document", e.g. {example_doc}) and the \
number of the paragraph it starts at. Under each document a line lists, for each kind of \
question, the paragraphs a fragment can start at: choose one of those. Any other start is \
refused (a fragment too short, starting mid-sentence or with a caption, ending with a colon, \
heavy with markup, code or formulas, or running past the paragraphs shown); a question is also \
refused when it is too similar to one of your earlier ones.

Scoring: one point for each of your questions that is accepted, and one point for each question \
(yours or another player's) that you answer correctly at least {pass_mark} of the time. A good \
question is one whose answer the text settles for a careful reader while a hasty one goes wrong."""


class SetSCPQuestion(dspy.Signature):
    """Choose this round's passage and question type in a reading tournament, and for a
    prediction question write three believable wrong continuations.

    Follow the rules and the guidance, and if earlier attempts this round were rejected, fix what
    the rejection names."""

    rules: str = dspy.InputField(desc="how the game is played and scored")
    guidance: str = guidance_field()
    history: str = dspy.InputField(desc="earlier questions of the game you are allowed to see; may be empty")
    documents: str = dspy.InputField(desc="the documents offered to you, each paragraph under its number")
    situation: str = dspy.InputField(desc="the round, attempts left, and any rejected attempts this round")
    document: str = dspy.OutputField(desc="the id of the document your passage comes from")
    paragraph: int = dspy.OutputField(desc="the number of the paragraph your passage starts at")
    question_type: Literal["sequencing", "cloze", "prediction"] = dspy.OutputField(desc="the kind of question")
    distractors: list[str] = dspy.OutputField(
        desc="for prediction, the three wrong continuations as a JSON list of strings; [] otherwise"
    )


class AnswerSCP(dspy.Signature):
    """Answer the reading question about a passage from a document. Exactly one option is what
    the original document says."""

    question: str = dspy.InputField(desc="the question, with the passage or its pieces")
    options: str = dspy.InputField(desc="the four options, each under its number")
    answer: Literal["1", "2", "3", "4"] = dspy.OutputField(desc="the number of the right option")


def render_documents(assignment: Mapping[str, Any]) -> str:
    """The offered paragraphs, each under its number in its document."""
    blocks = []
    for shown in assignment.get("documents", []):
        lines = [f"Document {shown['doc']} (domain: {shown['domain']}): {shown['title']}"]
        lines += [f"[{shown['first'] + i}] {p}" for i, p in enumerate(shown["paragraphs"])]
        if "starts" in shown:
            can = "; ".join(f"{t} at {', '.join(map(str, at)) if at else 'none'}" for t, at in shown["starts"].items())
            lines.append(f"Questions this document can give, by the paragraph they start at: {can}.")
        blocks.append("\n\n".join(lines))
    return "\n\n\n".join(blocks)


def render_numbered(options: tuple[str, ...] | list[str]) -> str:
    return "\n\n".join(f"{i + 1}. {o}" for i, o in enumerate(options))


class SCPSetter(SetterModule):
    def __init__(self, game: SCPGame, pass_mark: float = PASS_MARK) -> None:
        super().__init__(SetSCPQuestion)
        self.game, self.pass_mark = game, pass_mark

    def inputs(self, ctx: SetterContext) -> dict[str, str]:
        g = self.game
        sizes = {t: g.sizes[t] for t in ("sequencing", "cloze", "prediction")}
        rules = RULES.format(
            n_players=len(ctx.players),
            pass_mark=percent(self.pass_mark),
            seq=sizes["sequencing"][0],
            seq_chars=sizes["sequencing"][1],
            cloze=sizes["cloze"][0],
            cloze_chars=sizes["cloze"][1],
            pred=sizes["prediction"][0],
            pred_chars=sizes["prediction"][1],
            min_chars=g.min_distractor_chars,
            max_chars=g.max_distractor_chars,
            example_doc=next((d["doc"] for d in ctx.assignment.get("documents", [])), "doc-1"),
        )
        return {
            "rules": rules,
            "guidance": self.guidance(ctx),
            "documents": render_documents(ctx.assignment),
            "situation": render_situation(ctx),
            "history": render_history(ctx),
        }

    def parse(self, text: str) -> SCPProposal:
        doc = self.field(text, "document").strip().strip("`'\"")
        qtype = leading_choice(self.field(text, "question_type"), TYPES).strip().strip("`'\"").lower()
        if not doc or not qtype:
            missing = [n for n, v in (("document", doc), ("question_type", qtype)) if not v]
            return SCPProposal(
                "", None, "", note=f"the reply has no {' or '.join(f'[[ ## {m} ## ]]' for m in missing)} section"
            )
        found = re.search(r"-?\d+", self.field(text, "paragraph"))
        try:
            wrong: Any = adapter().parse(self.predict.signature, text)["distractors"]
        except Exception:  # noqa: BLE001 - lenient: the section as JSON, else one per line
            raw = sections(text).get("distractors", "")
            try:
                wrong = json.loads(raw) if raw.strip() else []
            except ValueError:
                wrong = [line.strip().lstrip("-*").strip() for line in raw.splitlines() if line.strip()]
        if not isinstance(wrong, list):
            wrong = [wrong]
        return SCPProposal(doc, int(found.group()) if found else None, qtype, tuple(str(w) for w in wrong))

    def label(self, proposal: SCPProposal) -> dict[str, Any]:
        return {
            "document": proposal.doc,
            "paragraph": proposal.paragraph,
            "question_type": proposal.type,
            "distractors": list(proposal.distractors),
        }


class SCPAnswerer(AnswererModule):
    """Names one of the four numbered options. With ``reasoning`` the model first writes its
    working in a ``reasoning`` output (chain of thought), then the number."""

    option_labels = NUMBERS

    def __init__(self, reasoning: bool = False) -> None:
        super().__init__(with_reasoning(AnswerSCP) if reasoning else AnswerSCP)
        self.reasoning = reasoning

    def inputs(self, query: Any) -> dict[str, str]:
        return {"question": query.prompt, "options": render_numbered(query.options)}

    def label(self, reply: Any) -> dict[str, str]:
        return {"answer": NUMBERS[int(reply)]}

    def parse(self, text: str) -> int | None:
        """The chosen option's index, or None when the reply names no option (or, with
        reasoning, was cut before its answer: :func:`~skate.llm.modules.read_choice`)."""
        answer = self.field(text, "answer")
        token = r"(?<!\d)([1-4])(?!\d)"
        found = read_choice(f"[[ ## answer ## ]]\n{answer}" if answer else text, token, self.reasoning)
        return NUMBERS.index(found) if found in NUMBERS else None


def scp_modules(game: SCPGame, env: GameEnv) -> GameModules:
    return GameModules(SCPSetter(game, env.pass_mark), SCPAnswerer(game.reasoning))

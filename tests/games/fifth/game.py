"""``game=fifth``: a fifth game that lives outside skate, in this test folder, registered the way an
installed game package is (the ``skate.games`` entry point group: test_game.py writes the entry
point). The setter picks a word; a solver must say it backwards.

It is a whole game, small: config, rules, simulated players, DSPy modules, the fake server's
player, a command of its own (``skate fifth-words``) and an export hook. Nothing in skate names it.
Importing this module registers it: only a process that adds the entry point (test_game.py's
subprocess) does, so the rest of the suite plays the four games it always did.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import dspy
import numpy as np

from skate.answers.exact import ExactQuery
from skate.games import (
    AnswerFormat,
    Checks,
    FakePlayer,
    FakeRequest,
    Game,
    GameConfig,
    GameEnv,
    GameExport,
    GameSpec,
    register,
    seeded_random,
)
from skate.llm.modules import FreeFormAnswerer, GameModules, SetterModule, guidance_field
from skate.players.simulated import SimulatedPlayer, Simulation, know
from skate.runlog.records import FailReason, Rejection, SetterContext, Task

# Words from short and easy to long and hard (a word's difficulty: its length over 16).
WORDS = (
    "ox",
    "cat",
    "lamp",
    "table",
    "garden",
    "kangaroo",
    "blackboard",
    "caterpillar",
    "hippopotamus",
    "encyclopaedia",
    "extraordinarily",
    "incomprehensibilities",
)
KINDS = ("short", "long")
PROMPT = "Say this word backwards: {}"


def difficulty_of(word: str) -> float:
    return min(1.0, len(word) / 16)


def word_of(text: str) -> str:
    return text.rsplit(":", 1)[-1].strip()


def read_word(text: str) -> str | None:
    """A reply's one word, lower-cased; None when it is not one word of letters."""
    word = text.strip().strip(".").lower()
    return word if word.isalpha() else None


@dataclass
class FifthConfig(GameConfig):
    _target_: str = "tests.games.fifth.game.FifthGame"
    name: str = "fifth"
    rounds: int = 4
    max_len: int = 24  # longer words are rejected
    reasoning: bool = False  # language-model answerers write their working first


@dataclass(frozen=True)
class FifthProposal:
    word: str
    note: str = ""  # why the word is empty, when the setter's reply could not be read


class FifthGame(Game):
    spec = GameSpec(
        name="fifth",
        answer_format=AnswerFormat.exact_match,
        kinds=KINDS,
        description="a word to say backwards (a game registered from outside skate)",
    )
    config_schema = FifthConfig
    runs_programs = False

    def validate(self, proposal: Any, checks: Checks) -> Task | Rejection:
        word = str(getattr(proposal, "word", "") or "").strip()
        if not word:
            return Rejection(FailReason.MALFORMED, getattr(proposal, "note", "") or "the proposal has no word")
        if not word.isalpha() or len(word) > self.config.max_len:
            return Rejection(FailReason.MALFORMED, f"give one word of letters only, at most {self.config.max_len}")
        return checks.task(prompt=PROMPT.format(word.lower()), answer=word.lower()[::-1])

    def proposal_text(self, proposal: Any) -> str:
        return str(getattr(proposal, "word", proposal))

    def make_query(self, task: Task, rng: np.random.Generator) -> ExactQuery:
        return ExactQuery(task.prompt)

    def grade(self, task: Task, query: ExactQuery, reply: Any) -> bool:
        return isinstance(reply, str) and read_word(reply) == task.answer


class FifthSimulation(Simulation):
    kinds = KINDS

    def kind_of(self, text: str) -> str | None:
        return "long" if len(word_of(text)) > 6 else "short"

    def difficulty(self, text: str) -> float:
        return difficulty_of(word_of(text))

    def write(
        self, player: SimulatedPlayer, ctx: SetterContext, kind: str, target: float, rng: np.random.Generator
    ) -> FifthProposal:
        return FifthProposal(min(WORDS, key=lambda w: abs(difficulty_of(w) - target) + rng.random() * 0.05))

    def flaw(self, player: SimulatedPlayer, ctx: SetterContext, proposal: Any, rng: np.random.Generator) -> Any:
        return replace(proposal, word=proposal.word + "!")

    def answer(self, player: SimulatedPlayer, queries: Sequence[Any], rng: np.random.Generator) -> list[Any]:
        return [
            word_of(q.prompt)[::-1] if rng.random() < player.p_know(q.prompt) else word_of(q.prompt) for q in queries
        ]


class SetWord(dspy.Signature):
    """Pick a word for the other players to say backwards: one they will find hard and you will not."""

    fifth_rules: str = dspy.InputField(desc="how the game is played")
    guidance: str = guidance_field()
    situation: str = dspy.InputField(desc="the round and any rejected attempts")
    word: str = dspy.OutputField(desc="one word of letters only")


class SayBackwards(dspy.Signature):
    """Say the word backwards."""

    backwards: str = dspy.InputField(desc="what to say backwards")
    answer: str = dspy.OutputField(desc="the word backwards, alone")


class FifthSetter(SetterModule):
    def __init__(self) -> None:
        super().__init__(SetWord)

    def inputs(self, ctx: SetterContext) -> dict[str, str]:
        return {
            "fifth_rules": "each player picks a word; the others say it backwards",
            "guidance": self.guidance(ctx),
            "situation": f"round {ctx.round}, attempt {ctx.attempt}",
        }

    def parse(self, text: str) -> FifthProposal:
        word = self.field(text, "word").strip()
        return FifthProposal(word) if word else FifthProposal("", note="the reply has no word: write it under WORD:")

    def label(self, proposal: FifthProposal) -> dict[str, str]:
        return {"word": proposal.word}


def modules(game: FifthGame, env: GameEnv) -> GameModules:
    return GameModules(
        FifthSetter(), FreeFormAnswerer(SayBackwards, "backwards", read_word, reasoning=game.config.reasoning)
    )


class FakeFifthPlayer(FakePlayer):
    def claims(self, inputs: Mapping[str, str]) -> bool:
        return set(inputs) - {"guidance"} in ({"fifth_rules", "situation"}, {"backwards"})

    def reply(self, req: FakeRequest) -> str:
        rnd = seeded_random("fifth", req.model, req.seed, req.index, sorted(req.inputs.items()))
        if "backwards" not in req.inputs:
            word = min(WORDS, key=lambda w: abs(difficulty_of(w) - req.skill + 0.1) + rnd.random() * 0.05)
            return f"[[ ## word ## ]]\n{word}\n\n[[ ## completed ## ]]"
        word = word_of(req.inputs["backwards"])
        said = word[::-1] if rnd.random() < know(req.skill, difficulty_of(word)) else word
        head = "[[ ## reasoning ## ]]\nletter by letter from the end\n\n" if "reasoning" in req.outputs else ""
        return f"{head}[[ ## answer ## ]]\n{said}\n\n[[ ## completed ## ]]"


def words_main(argv: list[str] | None = None) -> int:
    """``skate fifth-words``: the game's own command (it lists the words its players pick from)."""
    ap = argparse.ArgumentParser(prog="skate fifth-words", description=words_main.__doc__)
    ap.add_argument("--longest", type=int, default=len(WORDS), help="how many of the longest words to list")
    args = ap.parse_args(argv)
    print("\n".join(sorted(WORDS, key=len)[-args.longest :]))
    return 0


register(
    FifthGame,
    simulation=lambda game, env: FifthSimulation(),
    modules="tests.games.fifth.game:modules",
    fake_player=FakeFifthPlayer,
    commands={"fifth-words": ("tests.games.fifth.game:words_main", "the fifth game's words (its own command)")},
    export=GameExport(provenance=lambda task: {"word": word_of(task.prompt)}),
)

"""The shared DSPy module parts: the answer formats' answerers, and no network use."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Literal

import dspy
import pytest

from skate.answers.choice import ChoiceQuery
from skate.answers.exact import ExactQuery, normalize_number
from skate.llm.modules import FreeFormAnswerer, MultipleChoiceAnswerer

REPO = Path(__file__).resolve().parents[2]


class PickOne(dspy.Signature):
    """Pick the option that answers the riddle."""

    riddle: str = dspy.InputField()
    options: str = dspy.InputField()
    answer: Literal["A", "B"] = dspy.OutputField()


class Solve(dspy.Signature):
    """Solve the puzzle."""

    puzzle: str = dspy.InputField()
    answer: str = dspy.OutputField()


def test_multiple_choice_letters_follow_the_number_of_options():
    mc = MultipleChoiceAnswerer(PickOne, 5, prompt_field="riddle")
    assert mc.letters == ("A", "B", "C", "D", "E")
    user = mc.messages(ChoiceQuery("what has keys?", ("a piano", "b", "c", "d", "e")))[-1]["content"]
    assert "[[ ## riddle ## ]]\nwhat has keys?" in user and "E:\n```\ne\n```" in user
    assert mc.parse("[[ ## answer ## ]]\nE\n") == 4 and mc.parse("[[ ## answer ## ]]\nF\n") is None


@pytest.mark.parametrize(
    ("reply", "read"),
    [
        ("[[ ## answer ## ]]\n42\n\n[[ ## completed ## ]]", "42"),
        ("[[ ## answer ## ]]\nThe answer is 1,024.\n", "1024"),
        ("42", "42"),  # no sections at all: the whole reply
        ("[[ ## reasoning ## ]]\n6 x 7 = 42\n", None),  # sections, but no answer: the working is not read
        ("I cannot tell.", None),
    ],
)
def test_free_form_answers_are_read_by_the_format_s_reader(reply, read):
    assert FreeFormAnswerer(Solve, "puzzle", normalize_number).parse(reply) == read


def test_chain_of_thought_asks_for_reasoning_before_the_answer():
    plain = FreeFormAnswerer(Solve, "puzzle", normalize_number)
    cot = FreeFormAnswerer(Solve, "puzzle", normalize_number, reasoning=True)
    assert list(plain.predict.signature.output_fields) == ["answer"]
    assert list(cot.predict.signature.output_fields) == ["reasoning", "answer"]
    system = cot.messages(ExactQuery("2 + 2?"))[0]["content"]
    assert system.index("[[ ## reasoning ## ]]") < system.index("[[ ## answer ## ]]")
    assert cot.parse("[[ ## reasoning ## ]]\n2 and 2 make 4, not 5\n\n[[ ## answer ## ]]\n4\n") == "4"


def test_no_network_at_import_or_with_local_players(tmp_path):
    """Importing the LLM stack and playing against a loopback server connects nowhere else."""
    code = textwrap.dedent(f"""
        import os, sys, socket
        os.environ.pop("LITELLM_LOCAL_MODEL_COST_MAP", None)
        seen = []
        def hook(event, args):
            if event == "socket.connect":
                seen.append(args[1])
            if event == "socket.getaddrinfo":
                seen.append(("dns", args[0]))
        sys.addaudithook(hook)
        sys.path.insert(0, {str(REPO)!r})
        import skate.llm, skate.llm.modules, skate.llm.transport, skate.players.llm  # noqa
        import dspy  # noqa
        assert seen == [], seen
        from tests.llm.conftest import llm_config
        from skate.llm.fake_server import FakeLLMServer, FakeModel
        from skate.runner import run_game
        with FakeLLMServer({{"ace": FakeModel(0.9), "mid": FakeModel(0.5)}}) as srv:
            run_game(llm_config(srv.api_base, {str(tmp_path / "c")!r}, {{"game.rounds": 1}}, sandbox="subprocess",
                                names=("ace", "mid")), {str(tmp_path / "r")!r})
        local = ("127.0.0.1", "localhost")
        others = [a for a in seen if not (a[0] in local or (a[0] == "dns" and a[1] in local))]
        assert others == [], others
        print("ok", len(seen))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("ok ") and int(out.stdout.split()[1]) > 0


def test_a_label_read_asks_for_the_option_s_label_alone_with_the_same_instructions_and_demos():
    a = MultipleChoiceAnswerer(PickOne, 3, prompt_field="riddle")
    q = ChoiceQuery("What has keys but no locks?", ("a piano", "a door", "a map"))
    msgs = a.label_messages(q)
    assert msgs[0]["role"] == "system" and msgs[0]["content"].startswith("Pick the option that answers the riddle.")
    user = msgs[-1]["content"]
    assert "[[ ## riddle ## ]]\nWhat has keys but no locks?" in user and "A:\n```\na piano\n```" in user
    assert user.endswith("Reply with nothing but the letter of the option you choose: A, B or C.")
    assert "[[ ## answer ## ]]" not in user  # no template of sections to answer in
    a.predict.demos = [
        dspy.Example(riddle="What runs but never walks?", options="A:\n```\nwater\n```", answer="A").with_inputs(
            "riddle", "options"
        )
    ]
    with_demo = a.label_messages(q)
    assert [m["role"] for m in with_demo] == ["system", "user", "assistant", "user"]
    assert with_demo[2]["content"] == "A"  # a demonstration's reply is its label alone
    assert a.reads_labels and a.option_labels == ("A", "B", "C")


def test_what_reasons_first_or_names_no_option_is_not_read():
    thinking = MultipleChoiceAnswerer(PickOne, 2, prompt_field="riddle", reasoning=True)
    assert not thinking.reads_labels
    with pytest.raises(ValueError, match="reasons before its answer"):
        thinking.label_messages(ChoiceQuery("r", ("x", "y")))
    free = FreeFormAnswerer(Solve, "puzzle", normalize_number)
    assert not free.reads_labels

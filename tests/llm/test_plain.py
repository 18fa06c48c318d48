"""The plain reply format (skate.llm.plain): written and read back, read leniently the ways real
small models write it, asked for by PlainAdapter, and answered in by the fake server."""

from __future__ import annotations

from typing import Literal

import dspy
import pytest

from skate.games.cop.modules import COPSetter
from skate.llm import plain
from skate.llm.adapters import PlainAdapter
from skate.llm.fake_server import FakeLLMServer, FakeModel, as_plain_reply, read_request
from skate.runlog.records import SetterContext

COP = {"program": "code", "wrong_answers": "list"}


def ctx() -> SetterContext:
    return SetterContext(
        player="p",
        players=("p", "q"),
        round=1,
        rounds=3,
        attempt=1,
        attempts_left=3,
        failed=(),
        history=(),
        strategy="hist_perf",
    )


@pytest.mark.parametrize(
    "items",
    [
        ["4", "[1, 2]", "'a'"],
        ["two\nlines", "1. looks like an item", " padded ", "- dash"],  # fenced: kept exactly
        [],
    ],
)
def test_a_reply_reads_back_as_it_was_written(items):
    fields = [
        ("program", "code", "x = 1\nprint(x)"),
        ("wrong_answers", "list", items),
        ("answer", "choice", "B"),
        ("target", "number", "12"),
        ("question", "text", "How many?\nTwo lines."),
    ]
    text = plain.render_reply(fields)
    got, whole = plain.read_reply(text, {n: k for n, k, _ in fields})
    assert whole
    assert got == {
        "program": "x = 1\nprint(x)",
        "wrong_answers": items,
        "answer": "B",
        "target": "12",
        "question": "How many?\nTwo lines.",
    }


@pytest.mark.parametrize(
    "text, program, wrong",
    [
        # bold and Markdown headings, any case; ticks around an item; prose before and after
        (
            "Sure!\n\n**Program:**\n```python\nprint(1)\n```\n\n## Wrong answers\n1. `2`\n2) 3\n\nHope it helps.",
            "print(1)",
            ["2", "3"],
        ),
        ("**PROGRAM:**\n```py\nprint(1)\n```\n**WRONG ANSWERS:**\n- 2\n* 3", "print(1)", ["2", "3"]),
        # the list as JSON on the heading's line; the program with no heading (a python fence)
        ('```python\nprint(1)\n```\nWRONG ANSWERS: ["2", "3"]', "print(1)", ["2", "3"]),
        # an item over two lines; a stray closing fence and a remark after the list are no items
        (
            "PROGRAM:\n```python\nprint('a')\nprint('b')\n```\nWRONG ANSWERS:\n1. a\n   c\n2. b\n```\nThese are wrong.",
            "print('a')\nprint('b')",
            ["a\nc", "b"],
        ),
        # a program written without a fence under its heading
        ("PROGRAM:\nprint(1)\n\nWRONG ANSWERS:\n1. 2", "print(1)", ["2"]),
    ],
)
def test_replies_are_read_leniently(text, program, wrong):
    got, _ = plain.read_reply(text, COP)
    assert got == {"program": program, "wrong_answers": wrong}


def test_what_is_not_a_plain_reply_gives_nothing():
    assert plain.read_reply("Program output is 3, I think.", COP) == ({}, False)
    assert plain.read_reply('{"program": "print(1)"}', COP) == ({}, False)
    # a fence inside the list is not taken for a program that has no heading
    got, whole = plain.read_reply("WRONG ANSWERS:\n1.\n```\nx\n```", COP)
    assert got == {"wrong_answers": ["x"]} and not whole


def test_a_program_cut_inside_its_fence_is_not_whole():
    got, whole = plain.read_reply("PROGRAM:\n```python\nfor i in range(3):\n    print(i", COP)
    assert got["program"] == "for i in range(3):\n    print(i" and not whole


def test_the_template_says_what_is_asked_and_is_read_back():
    block = plain.request_block(
        [
            ("program", "code", "the program", ()),
            ("wrong_answers", "list", "a wrong output", (), 3),
            ("answer", "choice", "", ("A", "B")),
            ("target", "number", "a whole number", ()),
            ("question", "text", "the question", ()),
        ]
    )
    assert block.startswith(plain.REPLY_LINE)
    assert "1. <a wrong output>\n2. <a wrong output>\n3. <a wrong output>" in block
    assert "ANSWER: <one of A, B>" in block and "```python\n<the program>\n```" in block
    assert plain.template_fields("[[ ## rules ## ]]\nx\n\n" + block) == {
        "program": "code",
        "wrong_answers": "list",
        "answer": "choice",
        "target": "number",
        "question": "text",
    }
    assert plain.template_fields("Respond with the corresponding output fields") == {}


def test_the_cop_setter_asks_for_the_plain_format_and_no_schema():
    setter = COPSetter(n_distractors=4)
    assert setter.plain and not setter.structured_ok
    system, user = setter.messages(ctx())
    assert system["role"] == "system" and "[[ ##" not in system["content"] and "{program}" not in system["content"]
    assert system["content"].startswith("You are a player in a tournament of Python code-output-prediction tasks")
    assert "[[ ## rules ## ]]" in user["content"] and user["content"].rstrip().endswith("4. <a wrong output>")
    assert setter.messages(ctx(), structured=True) == setter.messages(ctx())  # plain either way
    inputs, outputs = read_request(user["content"])  # what the fake server reads of it
    assert set(inputs) == {"rules", "guidance", "situation", "history"} and outputs == ("program", "wrong_answers")


def test_the_adapter_parses_typed_fields_and_writes_demos_in_the_same_form():
    adapter = PlainAdapter({"program": "code"})
    sig = COPSetter().predict.signature
    reply = adapter.format_assistant_message_content(sig, {"program": "print(1)", "wrong_answers": ["2", "3"]})
    assert reply.startswith("PROGRAM:\n```python\nprint(1)\n```")
    assert adapter.parse(sig, reply) == {"program": "print(1)", "wrong_answers": ["2", "3"]}
    from dspy.utils.exceptions import AdapterParseError

    with pytest.raises(AdapterParseError):
        adapter.parse(sig, "PROGRAM:\n```python\nprint(1)\n```")  # no wrong answers


def test_a_cut_reply_counts_only_with_every_wrong_answer_it_needs():
    setter = COPSetter(n_distractors=3)
    full = "PROGRAM:\n```python\nprint(1)\n```\nWRONG ANSWERS:\n1. 2\n2. 3\n3. 4\n4. and then I went on"
    assert setter.finished(full)
    assert not setter.finished("PROGRAM:\n```python\nprint(1)\n```\nWRONG ANSWERS:\n1. 2\n2. 3")
    assert not setter.finished("PROGRAM:\n```python\nprint(1)\n")
    assert setter.finished("[[ ## program ## ]]\nprint(1)\n[[ ## wrong_answers ## ]]\n[]\n[[ ## completed ## ]]")


def test_the_fake_server_answers_a_plain_request_in_the_plain_format():
    sections = '[[ ## program ## ]]\nprint(1)\n\n[[ ## wrong_answers ## ]]\n["2", "3"]\n\n[[ ## completed ## ]]'
    assert as_plain_reply(sections, COP) == "PROGRAM:\n```python\nprint(1)\n```\n\nWRONG ANSWERS:\n1. 2\n2. 3"
    assert as_plain_reply("I do not know.", COP) == "I do not know."
    setter = COPSetter()
    with FakeLLMServer({"m": FakeModel(0.8)}) as srv:
        import json
        import urllib.request

        body = {"model": "m", "messages": setter.messages(ctx()), "seed": 3}
        req = urllib.request.Request(
            f"{srv.api_base}/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=30) as r:
            text = json.loads(r.read())["choices"][0]["message"]["content"]
    assert text.startswith("PROGRAM:\n```python\n") and "[[ ##" not in text
    proposal = setter.read_reply(text)
    assert proposal.code and len(proposal.distractors) == 9


def test_a_setter_s_reply_stops_where_it_copies_the_request_or_has_every_field():
    stops = COPSetter().stop_sequences()
    assert stops == ["[[ ##", "You are a player in a tournament of", plain.REPAIR_PREFIX, "\n10."]
    assert len(stops) <= plain.MAX_STOPS  # what OpenAI takes
    reply = plain.render_reply(
        [("program", "code", "print(1)"), ("wrong_answers", "list", [str(i) for i in range(12)])]
    )
    at = min(reply.find(s) for s in stops if s in reply)
    got, whole = plain.read_reply(reply[:at], COP)
    assert whole and got["wrong_answers"] == [str(i) for i in range(9)]  # stopped after the nine asked for
    # a list of unknown length, or a last field that is not a list: no count stop
    assert plain.stop_sequences([("question", "text")], {}, "Write a question") == [
        "[[ ##",
        "Write a question",
        plain.REPAIR_PREFIX,
    ]
    assert plain.opening_words("Too short") == ""


def test_a_label_request_names_its_labels_and_the_fake_server_reads_them():
    from skate.llm.fake_replies import label_request

    assert plain.label_request(("A", "B", "C", "D")) == (
        "Reply with nothing but the letter of the option you choose: A, B, C or D."
    )
    assert plain.label_request(("1", "2", "3", "4")).endswith("the number of the option you choose: 1, 2, 3 or 4.")
    user = "[[ ## program ## ]]\nprint(1)\n\n" + plain.label_request(("A", "B", "C"))
    assert label_request(user) == ("A", "B", "C") and read_request(user) == ({"program": "print(1)"}, ("answer",))
    assert label_request("[[ ## program ## ]]\nprint(1)") == ()


def test_a_choice_followed_by_a_copied_note_is_read_as_that_choice():
    """The Qwen 1.5B wrote SCP's question type with the template's note after it."""

    class Sig(dspy.Signature):
        """Pick one."""

        question: str = dspy.InputField()
        kind: Literal["sequencing", "cloze", "prediction"] = dspy.OutputField()

    adapter = PlainAdapter()
    text = "KIND:\nprediction        # note: the value you produce must exactly match (no extra characters) one of: ..."
    assert adapter.parse(Sig, text) == {"kind": "prediction"}
    assert adapter.parse(Sig, "KIND:\nCloze") == {"kind": "cloze"}
    with pytest.raises(ValueError, match="literal_error"):
        adapter.parse(Sig, "KIND:\nclozes of all kinds")  # no choice at its start

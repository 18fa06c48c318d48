"""COP's DSPy setter and answerer: what the setter is told, and how replies are read."""

from __future__ import annotations

import dspy
import pytest

from skate.answers.choice import ChoiceQuery
from skate.games.cop.modules import COPSetter, answerer
from skate.runlog.records import FailedAttempt, FailReason, HistoryItem, SetterContext


def ctx(**kw):
    base = dict(
        player="ace",
        players=("ace", "mid", "low"),
        round=7,
        rounds=50,
        attempt=2,
        attempts_left=2,
        failed=(
            FailedAttempt(
                1,
                "print(random.random())",
                FailReason.NOT_VERIFIABLE,
                "the program printed different text on different runs",
            ),
        ),
        history=(HistoryItem(3, 2, "mid", "print(sum(range(10)))", {"ace": 0.9, "mid": 0.4}),),
        strategy="full_context",
    )
    base.update(kw)
    return SetterContext(**base)


def test_setter_is_a_dspy_module_with_an_optimisable_predictor():
    setter = COPSetter()
    assert isinstance(setter, dspy.Module)
    assert [name for name, _ in setter.named_predictors()] == ["predict"]
    assert set(setter.predict.signature.output_fields) == {"program", "wrong_answers"}


def test_setter_prompt_carries_rules_incentives_round_attempts_failures_and_history():
    setter = COPSetter(n_distractors=9, n_options=4, timeout_s=5)
    text = "\n".join(m["content"] for m in setter.messages(ctx()))
    for needed in (
        "one point for each of your tasks that is accepted",
        "at least 55%",
        "you can trace correctly yourself while the others are likely to get it wrong",
        "Round 7 of 50",
        "attempt 1",
        "2 attempt(s) left",
        "rejected (not_verifiable): the program printed different text on different runs",
        "print(random.random())",
        "Task #3 (round 2, set by mid)",
        "answered correctly: you 90%, mid 40%",
        "9 different outputs",
        "3 of your wrong answers",
        "9. <a wrong output>",
    ):
        assert needed in text, needed
    bare = setter.inputs(ctx(failed=(), history=(), attempt=1, attempts_left=3))
    assert bare["history"] == "(none)" and "rejected" not in bare["situation"]


def test_after_a_rejection_the_setter_answers_its_own_reply():
    """Asked again, a plain-format setter sees the round's first request, its own reply to it
    (as it wrote it, where kept) and the rejection as the next user message."""
    setter = COPSetter()
    reply = "PROGRAM:\n```python\nprint(random.random())\n```\n\nWRONG ANSWERS:\n1. 0.5"
    setter.remember(ctx(attempt=1, attempts_left=3, failed=()), reply)
    msgs = setter.messages(ctx())
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    assert "This is attempt 1; counting it you have 3 attempt(s) left" in msgs[1]["content"]
    assert msgs[2]["content"] == reply
    assert msgs[3]["content"].startswith("That attempt was rejected (not_verifiable): the program printed different")
    assert "(PROGRAM:, then WRONG ANSWERS:)" in msgs[3]["content"] and "2 attempt(s) left" in msgs[3]["content"]
    # a reply not kept (another process made it): the rejected program stands in for it
    assert COPSetter().messages(ctx())[2]["content"] == "PROGRAM:\n```python\nprint(random.random())\n```"
    # another round's replies are let go
    setter.remember(ctx(round=8, attempt=1, failed=()), "x")
    assert set(setter._replies) == {(8, 1)}


def test_the_pass_mark_in_the_rules_is_the_configured_one():
    rules = COPSetter(pass_mark=0.7).inputs(ctx())["rules"]
    assert "at least 70% of the time" in rules and "55%" not in rules


def test_setter_reads_replies_leniently():
    setter = COPSetter()
    good = (
        "[[ ## program ## ]]\n```python\nprint(2 + 2)\n```\n\n[[ ## wrong_answers ## ]]\n"
        '["5", "22", "3"]\n\n[[ ## completed ## ]]'
    )
    p = setter.parse(good)
    assert p.code == "print(2 + 2)" and p.distractors == ["5", "22", "3"]
    numbers = "[[ ## program ## ]]\nprint(4)\n\n[[ ## wrong_answers ## ]]\n[5, 6]\n"
    assert setter.parse(numbers).distractors == ["5", "6"]
    lines = "[[ ## program ## ]]\nprint(4)\n\n[[ ## wrong_answers ## ]]\n5\n6\n"
    assert setter.parse(lines).distractors == ["5", "6"]
    # the plain format, as the setter asks for it (read_reply), with the slips small models make
    plain = (
        "Sure!\n\n**Program:**\n```python\nprint([1, 2][::-1])\n```\n\nWRONG ANSWERS:\n1. [1, 2]\n"
        "2. `[2]`\n3.\n```\n2\n1\n```\n\nHope this helps!"
    )
    p = setter.read_reply(plain)
    assert p.code == "print([1, 2][::-1])" and p.distractors == ["[1, 2]", "[2]", "2\n1"]
    assert setter.read_reply("```python\nprint(3)\n```\nWrong answers:\n- 4\n- 5").distractors == ["4", "5"]
    empty = setter.parse("Sure! Here is a fun program.")
    assert empty.code == "" and "program" in empty.note


@pytest.mark.parametrize(
    ("reply", "pick"),
    [
        ("[[ ## answer ## ]]\nC\n\n[[ ## completed ## ]]", 2),
        ("[[ ## answer ## ]]\nThe answer is B\n", 1),
        ("After tracing it, I pick D.", 3),
        ("No idea, sorry.", None),
        ("[[ ## answer ## ]]\nE\n", None),
    ],
)
def test_answerer_reads_a_letter_or_nothing(reply, pick):
    assert answerer(4).parse(reply) == pick


def test_answerer_shows_the_program_and_lettered_options():
    msgs = answerer(4).messages(ChoiceQuery("print('x')", ("x", "y", "z\nw", "''")))
    user = msgs[-1]["content"]
    assert "print('x')" in user and "A:\n```\nx\n```" in user and "C:\n```\nz\nw\n```" in user
    assert "Literal['A', 'B', 'C', 'D']" in user or "A; B; C; D" in msgs[0]["content"]


def test_a_round_s_topic_is_in_the_setter_s_situation_when_the_game_gives_one():
    """``game.topics``: each setter gets one of the generator's families each round, drawn per
    setter and round, and its situation names it; by default there is none."""
    import numpy as np

    from skate.games.cop.rules import TOPICS, COPGame

    game, plain = COPGame(topics=True), COPGame()
    assert plain.assignment("ace", 1, np.random.default_rng(0)) == {}
    drawn = [game.assignment("ace", r, np.random.default_rng([0, r]))["topic"] for r in range(1, 13)]
    assert set(drawn) <= set(TOPICS.values()) and len(set(drawn)) > 3
    setter = COPSetter()
    situation = setter.inputs(ctx(failed=(), assignment={"topic": drawn[0]}))["situation"]
    assert f"This round your task is about {drawn[0]}." in situation
    assert "your task is about" not in setter.inputs(ctx(failed=()))["situation"]


def test_a_round_s_topic_comes_from_the_families_the_game_names():
    """``game.topic_families`` narrows the draw (easier families for weak setters); a family the
    generator does not have, or an empty list, is refused naming the families there are."""
    import numpy as np

    from skate.games.cop.config import COPConfig
    from skate.games.cop.rules import TOPICS, COPGame

    game = COPGame(topics=True, topic_families=["arithmetic", "strings"])
    drawn = {game.assignment("ace", r, np.random.default_rng([0, r]))["topic"] for r in range(1, 25)}
    assert drawn == {TOPICS["arithmetic"], TOPICS["strings"]}
    assert COPGame.check_config(COPConfig(topic_families=["arithmetic"])) == []
    ((key, value, need),) = COPGame.check_config(COPConfig(topic_families=["arithmetic", "loops"]))
    assert key == "topic_families" and value == ["arithmetic", "loops"]
    assert "unknown: loops" in need and "comprehensions" in need
    ((_, _, need),) = COPGame.check_config(COPConfig(topic_families=[]))
    assert need.startswith("need a non-empty list")


def test_the_rules_say_a_setter_answers_its_own_task_when_the_game_checks_it():
    on = COPSetter(self_check=True).inputs(ctx(failed=()))["rules"]
    off = COPSetter().inputs(ctx(failed=()))["rules"]
    assert "you answer it yourself once, in a new conversation" in on and "answer it yourself once" not in off


def test_the_templates_placeholder_copied_as_a_wrong_answer_counts_as_none():
    """The 1.5B sent `<a wrong output>`, the template's own line, as one of its three wrong answers."""
    setter = COPSetter()
    reply = "PROGRAM:\n```python\nprint(84)\n```\n\nWRONG ANSWERS:\n1. 42\n2. <a wrong output>\n3. None"
    assert setter.read_reply(reply).distractors == ["42", "", "None"]
    # a wrong answer that merely looks like one (a function's repr) is kept
    assert (
        setter.read_reply(reply.replace("<a wrong output>", "<function f at 0x1>")).distractors[1]
        == "<function f at 0x1>"
    )

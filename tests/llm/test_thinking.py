"""A reasoning model's thinking is taken out of every reply before anything reads it: inline
``<think>`` blocks (closed, left open by a cut, opened by the chat template), the fields some
servers return it in, thinking blocks; it is counted apart, kept in the run's folder, and a reply
cut inside it is no answer. Against the loopback fake server, each wire format as it is."""

from __future__ import annotations

import json

import pytest

from skate.llm import LLMClient, ModelSpec, ResponseCache, RetryPolicy
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.llm.fake_wire import BROKEN_PROGRAM, decoy, thinking_text
from skate.llm.thinking import from_message, split_inline, thinking_tokens
from skate.runlog.files import ThinkingLog

MSGS = [{"role": "user", "content": "hello"}]


@pytest.mark.parametrize(
    ("text", "answer", "thinking", "open_", "bare"),
    [
        (
            "<think>\nB is wrong.\n</think>\n\n[[ ## answer ## ]]\nC",
            "[[ ## answer ## ]]\nC",
            "B is wrong.",
            False,
            False,
        ),
        ("  <think>one</think><think>two</think>final", "final", "one\n\ntwo", False, False),
        ("<thinking>x</thinking>\nA", "A", "x", False, False),
        ("<think>\nstill going when the limit came", "", "still going when the limit came", True, False),
        ("opened by the template\n</think>\n\nA", "A", "opened by the template", False, True),
        ("no thinking at all", "no thinking at all", None, False, False),
        (
            "print('<think>')  # a tag inside the reply is the reply's",
            "print('<think>')  # a tag inside the reply is the reply's",
            None,
            False,
            False,
        ),
    ],
)
def test_inline_thinking_is_taken_out(text, answer, thinking, open_, bare):
    got = split_inline(text)
    assert (got.answer, got.thinking, got.open, got.bare) == (answer, thinking, open_, bare)


def test_a_model_known_to_think_without_an_opening_tag_is_read_as_thinking_when_cut():
    assert split_inline("half a thought", thinks_inline=True) == split_inline("<think>half a thought")


def test_thinking_beside_the_content_in_each_servers_field():
    assert from_message({"content": "A", "reasoning_content": "because"}) == ("A", "because")
    assert from_message({"content": "A", "reasoning": "because"}) == ("A", "because")
    blocks = {"content": [{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "A"}]}
    assert from_message(blocks) == ("A", "hm")
    mistral = {
        "content": [{"type": "thinking", "thinking": [{"type": "text", "text": "x"}]}, {"type": "text", "text": "B"}]
    }
    assert from_message(mistral) == ("B", "x")

    class LiteLLMMessage:  # LiteLLM's view of Anthropic's thinking blocks
        content, reasoning_content, thinking_blocks = "C", None, [{"type": "thinking", "thinking": "t"}]

    assert from_message(LiteLLMMessage()) == ("C", "t")
    assert from_message({"content": "plain"}) == ("plain", None)
    assert thinking_tokens({"completion_tokens_details": {"reasoning_tokens": 7}}) == 7
    assert thinking_tokens({"completion_tokens": 3}) == 0


def test_the_fake_thinking_holds_a_wrong_draft_of_the_reply():
    reply = '{"program": "```python\\nprint(1)\\n```", "answer": "B"}'
    draft = json.loads(decoy(reply))
    assert draft["answer"] == "C" and BROKEN_PROGRAM in draft["program"]
    assert "[[ ## answer ## ]]\nC" in decoy("[[ ## answer ## ]]\nB\n\n[[ ## completed ## ]]")
    text = thinking_text("[[ ## answer ## ]]\nD", 300, ("m", 1, 0))
    assert "[[ ## answer ## ]]\nA" in text and abs(len(text) / 4 - 300) < 40


def spec(srv, name, **kw):
    return ModelSpec(f"hosted_vllm/{name}", api_base=srv.api_base, **kw)


def client(**kw):
    return LLMClient(retry=RetryPolicy(max_retries=1, backoff_s=0.01, max_backoff_s=0.02), **kw)


@pytest.mark.parametrize("style", ["reasoning_content", "reasoning", "inline", "inline_bare"])
def test_each_style_gives_the_same_answer_as_the_model_without_thinking(style, tmp_path):
    """The reply the game reads is the same, thinking or not; the thinking is kept apart and
    its tokens counted apart (as the server counts them, or their share of the reply)."""
    user = [
        {
            "role": "user",
            "content": "[[ ## question ## ]]\nWhat is 2 + 2?\n\nRespond with the corresponding "
            "output fields, starting with the field `[[ ## answer ## ]]`.",
        }
    ]
    kept = ThinkingLog(tmp_path / "thinking.jsonl")
    c = client(on_thinking=kept)
    with FakeLLMServer({"m": FakeModel(0.5)}) as srv:
        plain = c.complete(spec(srv, "m"), user, [(0, 5), (1, 6)], "a")
    with FakeLLMServer({"m": FakeModel(0.5, thinking=style, thinking_tokens=120)}) as srv:
        thought = c.complete(spec(srv, "m"), user, [(0, 5), (1, 6)], "b")
    kept.close()
    assert [x.text for x in thought] == [x.text for x in plain]
    assert all(x.thinking and "Draft:" in x.thinking and x.thinking not in (x.text or "") for x in thought)
    usage = c.usage["b"]
    assert 200 <= usage.thinking_tokens <= usage.completion_tokens and c.usage["a"].thinking_tokens == 0
    lines = [json.loads(line) for line in (tmp_path / "thinking.jsonl").read_text().splitlines()]
    assert [(x["player"], x["index"], x["seed"]) for x in lines] == [("b", 0, 5), ("b", 1, 6)]
    assert lines[0]["thinking"] == thought[0].thinking


def test_a_reply_cut_inside_its_thinking_is_no_answer_and_said_once(caplog):
    with FakeLLMServer(
        {
            "t": FakeModel(0.5, thinking="inline", thinking_tokens=400),
            "r": FakeModel(0.5, thinking="reasoning_content", thinking_tokens=400),
        }
    ) as srv:
        c = client()
        with caplog.at_level("WARNING", logger="skate.llm.client"):
            cut = c.complete(spec(srv, "t", max_tokens=100), MSGS, [(0, 1), (1, 2)], "p")
            cut += c.complete(spec(srv, "r", max_tokens=100), MSGS, [(0, 1)], "q")
    assert all(x.text == "" and x.thinking_cut and x.cut and x.thinking for x in cut)
    assert c.usage["p"].cut_thinking == 2 and c.usage["p"].empty == 0
    said = [r.getMessage() for r in caplog.records if "still thinking" in r.getMessage()]
    assert len(said) == 2 and all("Raise max_tokens" in s for s in said)  # once per model


def test_thinking_is_cached_with_the_answer_and_replayed(tmp_path):
    with FakeLLMServer({"t": FakeModel(0.5, thinking="inline")}) as srv:
        first = client(cache=ResponseCache(tmp_path)).complete(spec(srv, "t"), MSGS, [(0, 1)], "p")
        again = client(cache=ResponseCache(tmp_path)).complete(spec(srv, "t"), MSGS, [(0, 1)], "p")
        assert srv.stats.requests == 1
    assert again[0].cached and (again[0].text, again[0].thinking) == (first[0].text, first[0].thinking)


def test_a_server_that_stops_a_reply_inside_its_thinking_gets_no_more_stop_sequences(caplog):
    """An inline thinker's server ends a reply at a stop sequence its thinking wrote: skate sends
    it no stop sequences from then on and ends its replies itself, after the thinking."""
    with FakeLLMServer({"t": FakeModel(0.5, thinking="inline")}) as srv:
        c = client()
        with caplog.at_level("WARNING", logger="skate.llm.shaping"):
            (done,) = c.complete(spec(srv, "t"), MSGS, [(0, 1)], "p", options={"stop": ["Draft:"]})
            (again,) = c.complete(spec(srv, "t"), MSGS, [(0, 2)], "p", options={"stop": ["Draft:"]})
        sent = [entry["fields"] for entry in srv.log]
    assert "stop" in sent[0] and "stop" not in sent[1] and "stop" not in sent[2]
    assert done.thinking and "Draft:" in done.thinking and again.thinking
    assert sum("inside its thinking" in r.getMessage() for r in caplog.records) == 1


def test_the_fake_server_s_command_line_serves_reasoning_models():
    from skate.llm.fake_server import parse_model

    assert parse_model("r1=0.9@inline")[1].thinking == "inline"
    hidden = parse_model("o=0.8+0.1@openai")[1]
    assert (hidden.thinking, hidden.rules, hidden.demo_gain) == ("hidden", "openai_reasoning", 0.1)
    with pytest.raises(ValueError, match="styles: hidden"):
        parse_model("x=0.5@weird")

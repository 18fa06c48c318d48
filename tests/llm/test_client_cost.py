"""What a model call costs the engine (issue 26) without changing what is sent: the modules'
own user-message formatting gives DSPy's messages exactly, and with structured output the
text-format request is made only when the client falls back to it."""

from __future__ import annotations

import dspy
import numpy as np
import pytest

import skate
from skate.answers.choice import ChoiceQuery
from skate.games import load_games
from skate.games.base import GameEnv
from skate.games.cop.modules import answerer as cop_answerer
from skate.llm import LLMClient, ModelSpec, RetryPolicy
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.llm.modules import _ADAPTER, _JSON_ADAPTER, GameModules, _Formatter
from skate.players.llm import LLMPlayer
from skate.settings.build import build_game

QUERY = ChoiceQuery("print(sorted({3, 1, 2}))", ("[1, 2, 3]", "{1, 2, 3}", "[3, 1, 2]", "(1, 2, 3)"))


def game_modules(game, reasoning=False):
    quick = {"mode": "player_set"} if game == "scp" else {}
    return build_game(skate.preset(game, "game", values={**quick, "reasoning": reasoning})).modules(
        GameEnv(sandbox=None)
    )


def _inputs(signature, i):
    """String inputs with what DSPy's formatting could trip on: blank values, leading and
    trailing whitespace (the message is stripped), markers, braces, non-ASCII text."""
    values = ["", "  padded  \n", "{x}\n[[ ## not a field ## ]]\n", "naïve — ünïcode ✓", f"call {i}\n\nline"]
    return {name: values[(i + k) % len(values)] for k, name in enumerate(signature.input_fields)}


@pytest.mark.parametrize("game", sorted(load_games()))
@pytest.mark.parametrize("reasoning", [False, True])
@pytest.mark.parametrize("adapter", [_ADAPTER, _JSON_ADAPTER], ids=["text", "json"])
def test_every_game_s_requests_are_dspy_s_messages_call_after_call(game, reasoning, adapter):
    mods = game_modules(game, reasoning)
    for module in (mods.setter, mods.answerer):
        fmt, predict = _Formatter(adapter), module.predict
        for i in range(6):  # the first call checks the formatter's own user message; the rest use it
            inputs = _inputs(predict.signature, i)
            assert fmt(predict, inputs) == adapter.format(predict.signature, predict.demos, inputs)
        assert fmt._cached[3] is not None  # the check passed: the formatter's own user message is in use


def test_demos_an_optimiser_sets_and_other_signatures_are_formatted_afresh():
    mc = cop_answerer(4)
    fmt, predict = _Formatter(), mc.predict
    inputs = mc.inputs(QUERY)
    assert fmt(predict, inputs) == _ADAPTER.format(predict.signature, [], inputs)
    predict.demos = [dspy.Example(**mc.inputs(QUERY), answer="A").with_inputs(*inputs)]
    assert fmt(predict, inputs) == _ADAPTER.format(predict.signature, predict.demos, inputs)
    assert fmt(predict, inputs) == _ADAPTER.format(predict.signature, predict.demos, inputs)
    predict.signature = predict.signature.with_instructions("Answer quickly.")
    assert fmt(predict, inputs) == _ADAPTER.format(predict.signature, predict.demos, inputs)
    assert "Answer quickly." in fmt(predict, inputs)[0]["content"]


def test_an_input_that_is_not_a_string_is_left_to_dspy():
    mc = cop_answerer(4)
    fmt, sig = _Formatter(), mc.predict.signature
    odd = {"program": ["a", "b"], "options": 7}  # DSPy renders a list as a numbered list, a number as JSON
    for inputs in (odd, mc.inputs(QUERY), odd):
        assert fmt(mc.predict, inputs) == _ADAPTER.format(sig, [], inputs)
    assert fmt._cached[3] is None  # not checked on its first call: DSPy's formatting for that key


def test_an_adapter_whose_user_message_differs_is_used_as_it_is():
    class Shouting(dspy.ChatAdapter):
        def format_user_message_content(self, signature, inputs, prefix="", suffix="", main_request=False):
            return super().format_user_message_content(signature, inputs, prefix, suffix, main_request).upper()

    adapter, mc = Shouting(), cop_answerer(4)
    fmt = _Formatter(adapter)
    for _ in range(3):
        got = fmt(mc.predict, mc.inputs(QUERY))
        assert got == adapter.format(mc.predict.signature, [], mc.inputs(QUERY)) and got[-1]["content"].isupper()
    assert fmt._cached[3] is None  # the check failed: DSPy's formatting


# ------------------------------------------------------------------- the text-format request
class _Counting(GameModules):
    """A game's modules, counting the answerer's text- and JSON-format requests made."""

    def __init__(self, mods):
        super().__init__(mods.setter, mods.answerer)
        self.made = {False: 0, True: 0}
        messages = mods.answerer.messages

        def counted(x, structured=False):
            self.made[structured] += 1
            return messages(x, structured)

        mods.answerer.messages = counted


def _player(srv, mode):
    client = LLMClient(retry=RetryPolicy(max_retries=1, backoff_s=0.01, max_backoff_s=0.02), structured=mode)
    spec = ModelSpec("openai/ace", api_base=srv.api_base, api_key_env="SKATE_TEST_NO_KEY")
    mods = _Counting(GameModules(game_modules("cop").setter, cop_answerer(4)))
    return LLMPlayer("ace", spec, client, mods), mods


@pytest.mark.parametrize(
    ("mode", "formats", "text_made", "json_made"),
    [
        ("auto", ("json_schema", "json_object"), 0, 8),  # the schema is taken: the text request is never made
        ("off", ("json_schema", "json_object"), 8, 0),
        ("auto", (), 8, 2),  # refused (twice, in both forms) on the first call: text from then on
    ],
)
def test_the_text_request_is_made_only_when_it_is_sent(mode, formats, text_made, json_made):
    with FakeLLMServer({"ace": FakeModel(0.9)}, formats=formats) as srv:
        player, mods = _player(srv, mode)
        rng = np.random.default_rng(0)
        for _k in range(4):  # two distinct queries a batch: two requests each
            q2 = ChoiceQuery(QUERY.prompt, QUERY.options[::-1])
            picks = player.answer([QUERY, q2, QUERY], rng)
            assert all(p in range(4) for p in picks)
        player.client.close()
    assert mods.made == {False: text_made, True: json_made}
    assert srv.stats.structured == (json_made if formats else 0)

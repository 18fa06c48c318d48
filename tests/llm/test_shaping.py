"""Each model is sent only the parameters it takes: LiteLLM's rules for a known reasoning model, the
provider's own refusal for one no table knows (learnt once per model and parameter, never void),
and what the game loses kept true to the game (stops applied by skate, the temperature used
recorded, log-probabilities sampled instead). Against the loopback fake server with OpenAI's rules."""

from __future__ import annotations

import pytest

import skate
from skate.errors import ConfigError
from skate.llm import CallFailed, LLMClient, ModelConfigError, ModelSpec, RetryPolicy
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.llm.preflight import PreflightError, preflight
from skate.llm.refusals import OptionRefused
from skate.llm.shaping import ParameterRefused, refusal, table_changes
from skate.players.config import LLMPlayerConfig

MSGS = [{"role": "user", "content": "hello"}]


def changes(model, **kw):
    return {c.param: (c.action, c.to, c.used) for c in table_changes(ModelSpec(model, **kw))}


def test_litellm_s_rules_for_known_reasoning_models():
    assert changes("openai/gpt-5-mini") == {
        "max_tokens": ("renamed", "max_completion_tokens", None),
        "temperature": ("dropped", None, 1.0),
        "stop": ("dropped", None, None),
        "logprobs": ("dropped", None, None),
    }
    assert changes("openai/gpt-5-mini", temperature=1.0) == {
        "max_tokens": ("renamed", "max_completion_tokens", None),
        "stop": ("dropped", None, None),
        "logprobs": ("dropped", None, None),
    }
    # Anthropic's extended thinking runs at temperature 1; LiteLLM sends its stop sequences itself.
    assert changes("anthropic/claude-sonnet-4-5", thinking_budget=2048) == {
        "temperature": ("dropped", None, 1.0),
        "logprobs": ("dropped", None, None),
    }
    # Models that answer at once, and local servers' models, are sent what they always were.
    assert changes("openai/gpt-4o-2024-11-20") == {} and changes("hosted_vllm/o3", api_base="http://h:1/v1") == {}


@pytest.mark.parametrize(
    ("body", "found"),
    [
        (
            '{"error": {"message": "Unsupported parameter: \'max_tokens\' is not supported with this model. Use '
            '\'max_completion_tokens\' instead.", "type": "invalid_request_error", "param": "max_tokens", '
            '"code": "unsupported_parameter"}}',
            ("max_tokens", "max_completion_tokens"),
        ),
        (
            '{"error": {"message": "Unsupported value: \'temperature\' does not support 0.7 with this model. Only the default '
            '(1) value is supported.", "param": "temperature", "code": "unsupported_value"}}',
            ("temperature", None),
        ),
        (
            'litellm.BadRequestError: {"error": {"message": "\'stop\' is not supported with this model."}} (trailing)',
            ("stop", None),
        ),
        (
            '{"error": {"message": "Invalid value for \'n\': must be at most 8.", "param": "n", "code": "integer_above_max_value"}}',
            None,
        ),  # a value out of range: no refusal of the parameter itself
        ('{"error": {"message": "The model `x` does not exist"}}', None),
    ],
)
def test_a_refusal_names_its_parameter_and_what_to_use_instead(body, found):
    got = refusal(CallFailed("client", f"HTTP 400: {body[:200]}", False, status=400, body=body))
    assert (got[:2] if got else None) == found


def spec(srv, name, **kw):
    return ModelSpec(f"openai/{name}", api_base=srv.api_base, api_key_env="SKATE_TEST_NO_KEY", **kw)


def client(**kw):
    return LLMClient(retry=RetryPolicy(max_retries=2, backoff_s=0.01, max_backoff_s=0.02), **kw)


def test_an_unknown_model_s_refusals_are_learnt_once_each_and_never_void(caplog):
    told = []
    with FakeLLMServer({"house": FakeModel(0.5, thinking="hidden", rules="openai_reasoning")}) as srv:
        c = client(on_adjust=told.append)
        with caplog.at_level("WARNING", logger="skate.llm.shaping"):
            first = c.complete(spec(srv, "house"), MSGS, [(0, 1)], "p", options={"stop": ["I"]})
            again = c.complete(spec(srv, "house"), MSGS, [(0, 2), (1, 3)], "p", options={"stop": ["I"]})
        fields = [entry["fields"] for entry in srv.log]
        refused = srv.stats.refused_param
    assert refused == 3 and c.usage["p"].refused == 3 and c.usage["p"].void == 0  # max_tokens, temperature, stop
    assert [(t["param"], t["action"], t["to"], t["used"]) for t in told] == [
        ("max_tokens", "renamed", "max_completion_tokens", None),
        ("temperature", "dropped", None, 1.0),
        ("stop", "dropped", None, None),
    ]
    assert len([r for r in caplog.records if "is not sent" in r.getMessage() or "is sent as" in r.getMessage()]) == 3
    assert {"max_completion_tokens"} <= set(fields[-1]) and not {"max_tokens", "temperature", "stop"} & set(fields[-1])
    # The stop sequence the server took no more is applied by skate: the reply ends before it.
    assert all(x.ok and "I" not in (x.text or "") and x.finish_reason == "stop" for x in [*first, *again])


def test_a_known_reasoning_model_is_refused_nothing():
    with FakeLLMServer({"gpt-5-mini": FakeModel(0.5, thinking="hidden", rules="openai_reasoning")}) as srv:
        c = client()
        (done,) = c.complete(spec(srv, "gpt-5-mini"), MSGS, [(0, 1)], "p", options={"stop": ["zzz"]})
        body = srv.log[-1]["body"]
    assert srv.stats.refused_param == 0 and done.ok
    assert body["max_completion_tokens"] == 16384 and "temperature" not in body and "stop" not in body
    assert c.usage["p"].thinking_tokens > 0 and c.usage["p"].cost_usd > 0  # priced from LiteLLM's map


def test_log_probabilities_a_model_refuses_are_not_asked_for_again():
    with FakeLLMServer({"house": FakeModel(0.5, rules="openai_reasoning")}) as srv:
        c = client()
        s = spec(srv, "house", temperature=1.0)
        options = {"logprobs": True, "top_logprobs": 5, "max_tokens": 1}
        for _ in range(2):
            with pytest.raises(OptionRefused):
                c.complete(s, MSGS, [(0, 1)], "p", options=options)
        assert srv.stats.requests == 2  # max_tokens refused, then logprobs; the second call sends nothing
    assert c.usage["p"].void == 0


def test_a_refused_setting_of_the_user_s_stops_in_one_line():
    with FakeLLMServer({"house": FakeModel(0.5, rules="openai_reasoning")}) as srv:
        s = spec(srv, "house", reasoning_effort="max", temperature=1.0, max_tokens=None)
        with pytest.raises(ParameterRefused, match=r"refused 'reasoning_effort'.*its thinking settings"):
            client().complete(s, MSGS, [(0, 1)], "p")
        with pytest.raises(PreflightError) as err:
            preflight(client(), [("p", s)])
    assert "\n" not in str(err.value) and "reasoning_effort" in str(err.value)


def test_the_preflight_learns_what_a_model_refuses_and_passes():
    with FakeLLMServer({"house": FakeModel(0.5, thinking="hidden", rules="openai_reasoning")}) as srv:
        c = client()
        report = preflight(c, [("p", spec(srv, "house"))])
    assert report.ok and srv.stats.refused_param == 2  # max_tokens, then temperature 0
    assert set(c.shaper.shape(spec(srv, "house")).changes) == {"max_tokens", "temperature"}


@pytest.mark.parametrize(
    ("kw", "fields"),
    [
        ({"model": "openrouter/openai/gpt-5", "reasoning_effort": "high"}, {"reasoning": {"effort": "high"}}),
        (
            {"model": "openrouter/anthropic/claude-sonnet-4.5", "thinking_budget": 4000},
            {"reasoning": {"max_tokens": 4000}},
        ),
        (
            {"model": "anthropic/claude-sonnet-4-5", "thinking_budget": 4000},
            {"thinking": {"type": "enabled", "budget_tokens": 4000}},
        ),
        ({"model": "openai/gpt-5", "reasoning_effort": "minimal"}, {"reasoning_effort": "minimal"}),
        (
            {"model": "hosted_vllm/Qwen/Qwen3-8B", "api_base": "http://h:1/v1", "thinking": False},
            {"chat_template_kwargs": {"enable_thinking": False}},
        ),
        ({"model": "ollama/qwen3", "thinking": True}, {"think": True}),
    ],
)
def test_thinking_settings_become_each_provider_s_request_fields(kw, fields):
    assert ModelSpec(**kw).request_fields() == fields


@pytest.mark.parametrize(
    ("kw", "max_tokens"),
    [
        ({"model": "openai/gpt-4o-2024-11-20"}, 2048),
        ({"model": "openai/gpt-5-mini"}, 16384),
        ({"model": "anthropic/claude-sonnet-4-5", "thinking_budget": 8000}, 12096),
        ({"model": "hosted_vllm/r1", "api_base": "http://h:1/v1"}, 2048),
        ({"model": "hosted_vllm/r1", "api_base": "http://h:1/v1", "thinking": True}, 16384),
        ({"model": "openai/gpt-5-mini", "max_tokens": 3000}, 3000),
    ],
)
def test_a_model_that_thinks_gets_room_for_its_thinking(kw, max_tokens):
    assert ModelSpec(**kw).max_tokens == max_tokens


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ({"thinking_budget": 4096, "max_tokens": 4096}, r"thinking_budget=4096 must be below max_tokens=4096"),
        ({"reasoning_effort": "extreme"}, r"reasoning_effort='extreme' is not a level"),
        ({"thinking_budget": 2000, "reasoning_effort": "low"}, r"not both"),
    ],
)
def test_thinking_settings_that_cannot_work_are_refused_before_the_run(entry, says):
    llm = [
        LLMPlayerConfig(name="a", model="anthropic/claude-sonnet-4-5", api_base="http://127.0.0.1:9", **entry),
        LLMPlayerConfig(name="b", model="anthropic/claude-haiku-4-5", api_base="http://127.0.0.1:9"),
    ]
    with pytest.raises(ConfigError, match=says) as err:
        skate.config(values={"players.simulated": [], "players.llm": llm})
    assert "\n" not in str(err.value)


def test_a_thinking_budget_is_for_the_providers_that_take_one():
    with pytest.raises(ModelConfigError, match="thinking_budget is for anthropic/"):
        ModelSpec("openai/gpt-5", thinking_budget=2000)

"""Structured output (``llm.structured``): every game's modules ask for their output fields as one
JSON object under a JSON schema, read replies in either format, and fall back to the text format
where the server refuses the schema. Against the real loopback fake server."""

from __future__ import annotations

import json
import logging

import pytest

import skate
from skate.answers.choice import ChoiceQuery
from skate.games import load_games
from skate.games.base import GameEnv
from skate.games.cop.modules import COPSetter
from skate.games.cop.modules import answerer as cop_answerer
from skate.games.mathquiz.modules import MathQuizSetter
from skate.games.pyjail.modules import PyJailAttacker
from skate.games.scp.modules import SCPSetter
from skate.llm import LLMClient, ModelSpec, ResponseCache, RetryPolicy, plain
from skate.llm.endpoints import StructuredOutputRefused
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.runlog.files import read_events
from skate.runner import run_game
from skate.settings.build import build_client, build_game
from tests.conftest import REQUIRED_SANDBOXES  # noqa: F401  (same sandbox rules as every game)
from tests.llm.conftest import SKILLS, RecordingServer, llm_config

QUERY = ChoiceQuery("print(sorted({3, 1, 2}))", ("[1, 2, 3]", "{1, 2, 3}", "[3, 1, 2]", "(1, 2, 3)"))


def game_modules(game, reasoning=False):
    quick = {"mode": "player_set"} if game == "scp" else {}
    return build_game(skate.preset(game, "game", values={**quick, "reasoning": reasoning})).modules(
        GameEnv(sandbox=None)
    )


# ------------------------------------------------------------------------------ the schema
@pytest.mark.parametrize("game", sorted(load_games()))
@pytest.mark.parametrize("reasoning", [False, True])
def test_every_game_s_modules_ask_for_exactly_their_output_fields(game, reasoning):
    """Through the shared module machinery, not game by game: each setter's and answerer's
    schema has exactly its signature's output fields, in order, all required, nothing else."""
    mods = game_modules(game, reasoning)
    for module in (mods.setter, mods.answerer):
        rf = module.response_format()
        assert rf["type"] == "json_schema" and rf["json_schema"]["strict"] is True
        schema = rf["json_schema"]["schema"]
        fields = list(module.predict.signature.output_fields)
        assert list(schema["properties"]) == fields == schema["required"]
        assert schema["additionalProperties"] is False
    answer_fields = list(mods.answerer.predict.signature.output_fields)
    assert (answer_fields[0] == "reasoning") is reasoning


def test_types_and_enums_come_from_the_signature():
    mc = cop_answerer(3, reasoning=True).response_format()["json_schema"]["schema"]["properties"]
    assert list(mc) == ["reasoning", "answer"]
    assert mc["reasoning"]["type"] == "string" and mc["answer"]["enum"] == ["A", "B", "C"]  # narrowed to 3 options
    cop = COPSetter().response_format()["json_schema"]["schema"]["properties"]
    assert cop["program"]["type"] == "string" and cop["wrong_answers"] == {
        "type": "array",
        "items": {"type": "string"},
        "description": cop["wrong_answers"]["description"],
    }
    scp = game_modules("scp").setter.response_format()["json_schema"]["schema"]["properties"]
    assert scp["paragraph"]["type"] == "integer"
    assert scp["question_type"]["enum"] == ["sequencing", "cloze", "prediction"]
    assert (
        game_modules("mathquiz").answerer.response_format()["json_schema"]["schema"]["properties"]["answer"]["type"]
        == "string"
    )


def test_the_json_request_has_the_same_inputs_and_asks_for_json():
    mc = cop_answerer(4, reasoning=True)
    text, js = mc.messages(QUERY), mc.messages(QUERY, structured=True)
    assert text[-1]["content"].split("Respond with")[0] == js[-1]["content"].split("Respond with")[0]
    assert "[[ ## reasoning ## ]]" in text[-1]["content"] and "[[ ## reasoning ## ]]" not in js[-1]["content"]
    assert "Respond with a JSON object" in js[-1]["content"] and "`reasoning`, then `answer`" in js[-1]["content"]
    assert "JSON object" in js[0]["content"] and js[0]["content"] != text[0]["content"]


# ------------------------------------------------------------------------------- reading
@pytest.mark.parametrize(
    "reply",
    [
        '{"reasoning": "tracing it gives C", "answer": "C"}',
        'Sure! Here is my answer:\n```json\n{"reasoning": "tracing it gives C", "answer": "C"}\n```\nHope this helps!',
        'The program sorts the set. {"reasoning": "so C", "answer": "C"} That is all.',
        '{"reasoning": "line one\nline two", "answer": "C"}',  # a raw newline inside a string
        "[[ ## reasoning ## ]]\ntracing it gives C\n\n[[ ## answer ## ]]\nC\n\n[[ ## completed ## ]]",  # text format
    ],
)
def test_a_reply_is_read_in_either_format_even_inside_prose(reply):
    assert cop_answerer(4, reasoning=True).read_reply(reply) == 2
    assert cop_answerer(4, reasoning=True).finished(reply)


def test_a_truncated_json_reply_is_repaired_but_not_finished():
    mc = cop_answerer(4, reasoning=True)
    cut = '{"reasoning": "tracing it gives C", "answer": "C'
    assert not mc.finished(cut)
    assert not mc.finished('{"reasoning": "tracing it gives C')  # cut inside its reasoning
    assert mc.read_reply('{"reasoning": "tracing it gives C') is None  # no answer: unparsable, as in text


def test_every_game_s_parse_reads_its_json_reply():
    program = "values = [3, 1, 2]\nprint(sorted(values))"
    got = COPSetter().read_reply(json.dumps({"program": program, "wrong_answers": ["[3, 1, 2]", "[1, 2]"]}))
    assert (got.code, got.distractors) == (program, ["[3, 1, 2]", "[1, 2]"])
    scp = SCPSetter(game_modules("scp").setter.game).read_reply(
        '```json\n{"document": "doc-7", "paragraph": 12, "question_type": "cloze", "distractors": []}\n```'
    )
    assert (scp.doc, scp.paragraph, scp.type, scp.distractors) == ("doc-7", 12, "cloze", ())
    assert MathQuizSetter().read_reply('{"question": "What is 6 times 7?"}').question == "What is 6 times 7?"
    assert PyJailAttacker(reasoning=True).read_reply('{"reasoning": "no filter", "input": "print(1)"}') == "print(1)"
    assert game_modules("mathquiz").answerer.read_reply('{"reasoning": "6 x 7", "answer": "42"}') == "42"
    # a reply that is neither: the game's own lenient reading, as before
    assert MathQuizSetter().read_reply("").note.startswith("the reply has no")


# ---------------------------------------------------------------------------- the client
def spec(srv, name="m", **kw):
    return ModelSpec(f"openai/{name}", api_base=srv.api_base, api_key_env="SKATE_TEST_NO_KEY", **kw)


def client(mode, **kw):
    return LLMClient(retry=RetryPolicy(max_retries=1, backoff_s=0.01, max_backoff_s=0.02), structured=mode, **kw)


def _ask(c, srv, samples=((0, 5),)):
    mc = cop_answerer(4)
    return c.complete(
        spec(srv), mc.messages(QUERY), list(samples), "p", (mc.messages(QUERY, structured=True), mc.response_format())
    )


def test_the_schema_is_sent_and_the_reply_is_one_json_object(tmp_path):
    with FakeLLMServer({"m": FakeModel(0.9)}) as srv:
        c = client("auto", cache=ResponseCache(tmp_path))
        (done,) = _ask(c, srv)
        assert srv.stats.structured == 1 and done.structured and done.ok
        assert set(json.loads(done.text)) == {"answer"}
        assert cop_answerer(4).read_reply(done.text) in range(4)
        # the same request in the text format is another cache entry: asked, not replayed
        mc = cop_answerer(4)
        (plain,) = client("off", cache=c.cache).complete(
            spec(srv), mc.messages(QUERY), [(0, 5)], "p", (mc.messages(QUERY, structured=True), mc.response_format())
        )
        assert srv.stats.requests == 2 and not plain.structured and plain.text.startswith("[[ ## answer ## ]]")
        assert cop_answerer(4).read_reply(plain.text) == cop_answerer(4).read_reply(done.text)  # the same pick
        (again,) = _ask(c, srv)
        assert srv.stats.requests == 2 and again.cached and again.text == done.text
        assert c.usage["p"].structured == 1 and c.structured_formats() == {f"openai/m at {srv.api_base}": "json_schema"}


@pytest.mark.parametrize(("formats", "form", "refusals"), [((), "text", 2), (("json_object",), "json_object", 1)])
def test_auto_falls_back_where_the_server_refuses_and_remembers_it(formats, form, refusals, caplog):
    with FakeLLMServer({"m": FakeModel(0.9)}, formats=formats) as srv:
        c = client("auto")
        with caplog.at_level(logging.WARNING, logger="skate.llm.client"):
            first = _ask(c, srv)
            later = [_ask(c, srv, [(i, 9)]) for i in range(3)]
        assert srv.stats.refused_format == refusals  # json_schema, then json_object with the schema
        assert srv.stats.requests == refusals + 4  # the refusals, then each of the four asks once
    assert all(d.ok for d in [*first, *(d for g in later for d in g)])
    assert c.structured_formats() == {f"openai/m at {srv.api_base}": form}
    assert c.wants_structured(spec(srv)) is (form != "text")
    warned = [r for r in caplog.records if "refused structured output" in r.getMessage()]
    assert len(warned) == (1 if form == "text" else 0)  # once for the run, and only when it falls back to text
    if form == "text":
        assert all(d.text.startswith("[[ ## answer ## ]]") for d in first)
    else:
        assert srv.stats.structured == 4 and json.loads(first[0].text)["answer"] in "ABCD"


def test_on_stops_with_a_message_naming_the_model_and_the_fix():
    with FakeLLMServer({"m": FakeModel(0.9)}, formats=()) as srv:
        with pytest.raises(StructuredOutputRefused) as err:
            _ask(client("on"), srv)
    msg = str(err.value)
    assert "openai/m" in msg and srv.api_base in msg and "llm.structured=auto" in msg and "HTTP 400" in msg


def test_off_sends_no_schema():
    with FakeLLMServer({"m": FakeModel(0.9)}, formats=()) as srv:
        (done,) = _ask(client("off"), srv)
        assert done.ok and srv.stats.refused_format == srv.stats.structured == 0
        assert done.text.startswith("[[ ## answer ## ]]")


def test_a_bad_mode_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="auto, on, off"):
        LLMClient(structured="yes")


# ------------------------------------------------------------------------- whole games
def _estimates(run):
    return sorted(
        (e["task_id"], e["player"], e["p"], e["n"], e["correct"], e["unparsable"])
        for e in read_events(run)
        if e["event"] == "estimate"
    )


def _tasks(run):
    return [(e["round"], e["setter"], e["prompt"]) for e in read_events(run) if e["event"] == "task"]


# The least of a game that still shows the difference (a game not named: two rounds).
SMALL = {
    "scp": {"game.questions": 8, "game.rounds": 1},
    "pyjail": {"game.rounds": 1, "game.tries": 2},
}


@pytest.mark.parametrize("name", sorted(load_games()))
def test_a_game_plays_the_same_with_structured_output_as_without(name, tmp_path):
    """The fake players pick the same either way, so tasks and every p(correct) match; with
    structured output every call carried the schema and was answered in JSON, but for a setter
    that asks for the plain format, which never does."""
    small = SMALL.get(name, {"game.rounds": 2})
    runs = {}
    for mode in ("auto", "off"):
        with RecordingServer({n: FakeModel(s) for n, s in SKILLS.items()}) as srv:
            cfg = llm_config(
                srv.api_base, tmp_path / "cache", {**small, "estimator.n": 4, "llm.structured": mode}, game=name
            )
            run_game(cfg, tmp_path / mode)
            runs[mode] = srv
    assert _estimates(tmp_path / "auto") == _estimates(tmp_path / "off") and _estimates(tmp_path / "auto")
    assert _tasks(tmp_path / "auto") == _tasks(tmp_path / "off") and _tasks(tmp_path / "auto")
    assert all(e[5] == 0 for e in _estimates(tmp_path / "auto"))
    on, off = runs["auto"], runs["off"]
    # requests in the plain format: COP's and MathQuiz's setters, PyJail's setter and attacker
    in_plain = sum(plain.REPLY_LINE in u or u.startswith(plain.REPAIR_PREFIX) for u in on.users)
    assert (in_plain > 0) == (name != "scp")
    assert on.stats.structured == on.stats.requests - in_plain and off.stats.structured == 0
    assert on.stats.structured > 0 or name == "pyjail"
    # one cache directory for both: the text-format run could not replay the structured replies
    # (the plain setters' requests are the same either way: those it replays)
    assert off.stats.requests > 0
    usage = json.loads((tmp_path / "auto" / "usage.json").read_text())
    assert usage["total"]["structured"] == usage["total"]["calls"] - in_plain == on.stats.structured
    assert json.loads((tmp_path / "off" / "usage.json").read_text())["total"]["structured"] == 0


def test_a_game_falls_back_to_text_on_a_server_without_json_schema(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="skate.llm.client"):
        with FakeLLMServer({n: FakeModel(s) for n, s in SKILLS.items()}, formats=()) as srv:
            run_game(
                llm_config(
                    srv.api_base, tmp_path / "cache", {"game.rounds": 2, "estimator.n": 4, "llm.structured": "auto"}
                ),
                tmp_path / "run",
            )
    assert srv.stats.structured == 0 and srv.stats.refused_format >= 2 * len(SKILLS)
    # remembered: a few refusals, then text. The first requests that carry a schema are answers
    # (setters ask in the plain format), sent together: up to the in-flight limit (8 per server)
    # may each be refused in both forms before the first refusal is remembered.
    assert srv.stats.refused_format <= 2 * 8 * len(SKILLS) and srv.stats.refused_format < srv.stats.requests / 3
    est = _estimates(tmp_path / "run")
    assert est and all(e[5] == 0 for e in est) and len(_tasks(tmp_path / "run")) == 2 * len(SKILLS)
    warned = [r.getMessage() for r in caplog.records if "refused structured output" in r.getMessage()]
    assert sorted(m.split()[0] for m in warned) == sorted(f"openai/{n}" for n in SKILLS)  # once per model
    assert not [e for e in read_events(tmp_path / "run") if e["event"] == "llm_void"]  # refusals are not void


def test_structured_on_against_a_refusing_server_stops_the_run_with_the_fix(tmp_path):
    with FakeLLMServer({n: FakeModel(s) for n, s in SKILLS.items()}, formats=()) as srv:
        run_game(
            llm_config(srv.api_base, tmp_path / "cache", {"game.rounds": 2, "llm.structured": "on"}), tmp_path / "run"
        )
    stopped = [e for e in read_events(tmp_path / "run") if e["event"] == "run_stopped"]
    assert stopped and "StructuredOutputRefused" in stopped[0]["reason"]
    assert "llm.structured=auto" in stopped[0]["reason"] and "openai/" in stopped[0]["reason"]
    assert srv.stats.structured == 0


@pytest.mark.parametrize("mode", ["auto", "on", "off"])
def test_llm_structured_in_the_config_reaches_the_run_s_client(mode, tmp_path):
    settings = skate.config(values={"llm.structured": mode, "llm.cache_dir": str(tmp_path)})
    client = build_client(settings.llm)
    try:
        assert client.structured == mode
    finally:
        client.close()
    assert skate.SkateConfig().llm.structured == "auto"  # the default


def test_llama_cpp_python_s_500_for_a_json_schema_is_a_refusal_but_other_500s_are_not():
    """llama-cpp-python's server rejects OpenAI's json_schema form with an HTTP 500 carrying its
    validator's message; auto must fall back to the json_object form there, and still retry a
    plain server error."""
    from skate.llm.refusals import is_format_refusal
    from skate.llm.wire import CallFailed

    llama = (
        'HTTP 500: {"error":{"message":"1 validation error:\\n  {\'type\': \'literal_error\', '
        "'loc': ('body', 'response_format', 'type'), 'msg': \\\"Input should be 'text' or "
        "'json_object'\\\", 'input': 'json_schema'}\",\"type\":\"internal_server_error\"}}"
    )
    assert is_format_refusal(CallFailed("server", llama, retryable=True, status=500))
    assert not is_format_refusal(CallFailed("server", "HTTP 500: out of memory", retryable=True, status=500))
    assert not is_format_refusal(CallFailed("server", "HTTP 503: response_format busy", retryable=True, status=503))

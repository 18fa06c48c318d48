"""The fake server for DSPy's prompt optimisers: demonstrations that help (``demo_gain``), the
``name=skill+gain`` command line, and replies to the optimisers' own requests (MIPROv2's
instruction proposer and dataset summariser), over real HTTP on loopback."""

from __future__ import annotations

import json
import urllib.request
from typing import Literal

import dspy
import numpy as np
import pytest
from dspy.propose.dataset_summary_generator import (
    DatasetDescriptor,
    DatasetDescriptorWithPriorObservations,
    ObservationSummarizer,
    create_dataset_summary,
)
from dspy.propose.grounded_proposer import DescribeModule, DescribeProgram, generate_instruction_class

import skate.llm  # noqa: F401  (environment defaults before dspy is imported)
from skate.answers.exact import ExactQuery
from skate.games.mathquiz.generator import KINDS, generate_question
from skate.games.mathquiz.modules import AnswerMathQuestion, answerer
from skate.llm.fake_replies import count_demos
from skate.llm.fake_server import FakeLLMServer, FakeModel, arg_parser, parse_model, parse_models

ADAPTER = dspy.ChatAdapter(use_json_adapter_fallback=False)


def post(srv: FakeLLMServer, model: str, messages: list[dict], seed: int = 0, n: int = 1) -> list[str]:
    body = json.dumps({"model": model, "messages": messages, "seed": seed, "n": n}).encode()
    req = urllib.request.Request(srv.api_base + "/chat/completions", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return [c["message"]["content"] for c in json.load(resp)["choices"]]


def questions(n: int = 40) -> list[tuple[str, int]]:
    rng = np.random.default_rng(7)
    out = []
    for i in range(n):
        target = int(rng.integers(5, 200))
        out.append((generate_question(KINDS[i % len(KINDS)], 0.3 + 0.4 * (i % 5) / 4, target, rng), target))
    return out


# ---------------------------------------------------------------------------- demonstrations
def test_a_demo_is_an_assistant_message_before_the_last_user_message():
    plain = ADAPTER.format(AnswerMathQuestion, [], {"question": "2 + 2?"})
    assert count_demos(plain) == 0
    complete = dspy.Example(question="1 + 1?", answer="2")
    incomplete = dspy.Example(question="3 + 3?")  # an input but no output: DSPy drops it
    partial = {"question": "5 + 5?", "reasoning": "5 and 5"}  # no answer: an "incomplete" demo
    cot = AnswerMathQuestion.prepend("reasoning", dspy.OutputField(), type_=str)
    msgs = ADAPTER.format(cot, [complete, incomplete, partial], {"question": "2 + 2?"})
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert msgs[1]["content"].startswith("This is an example of the task, though some input or output fields")
    assert count_demos(msgs) == 2
    assert count_demos([]) == 0 and count_demos([{"role": "assistant", "content": "x"}]) == 0


def answered(srv: FakeLLMServer, model: str, demos: list) -> list[bool]:
    module = answerer(reasoning=True)
    module.predict.demos = demos
    got = []
    for i, (question, target) in enumerate(questions()):
        msgs = module.messages(ExactQuery(question))
        assert count_demos(msgs) == len(demos)
        (text,) = post(srv, model, msgs, seed=i)
        got.append(module.parse(text) == str(target))
    return got


def test_demonstrations_raise_the_skill_of_a_model_with_a_demo_gain():
    models = {"low": FakeModel(0.1, demo_gain=0.8), "flat": FakeModel(0.1)}
    demo = dspy.Example(question="Ann has 3 apples and buys 4 more. How many apples does she have?", answer="7")
    with FakeLLMServer(models) as srv:
        low_plain, low_demo = answered(srv, "low", []), answered(srv, "low", [demo])
        flat_plain, flat_demo = answered(srv, "flat", []), answered(srv, "flat", [demo])
    assert sum(low_plain) <= 8 and sum(flat_plain) <= 8  # skill 0.1 without demos: mostly wrong
    assert sum(low_demo) >= sum(low_plain) + 20, (sum(low_plain), sum(low_demo))
    assert flat_demo == flat_plain  # no gain: the very same answers, with or without demos


def test_the_skill_with_demos_is_capped_at_one():
    m = FakeModel(0.7, demo_gain=0.5)
    assert m.skill_for(0) == 0.7 and m.skill_for(1) == 1.0 and m.skill_for(3) == 1.0
    assert FakeModel(0.4).skill_for(2) == 0.4


# ----------------------------------------------------------------------------- command line
def test_the_command_line_takes_name_skill_plus_gain():
    assert parse_model("low=0.3+0.5") == ("low", FakeModel(0.3, demo_gain=0.5))
    assert parse_model("ace=0.9") == ("ace", FakeModel(0.9))
    args, models = parse_models(["--port", "0", "low=0.3+0.5", "ace=0.9"])
    assert args.port == 0 and models == {"low": FakeModel(0.3, demo_gain=0.5), "ace": FakeModel(0.9)}
    _, default = parse_models([])
    assert default == {"ace": FakeModel(0.9), "mid": FakeModel(0.6), "low": FakeModel(0.3)}
    assert "name=skill+gain" in arg_parser().format_help()


@pytest.mark.parametrize("bad", ["low", "low=", "low=x", "low=0.3+", "=0.3", "low=0.3+y"])
def test_a_bad_model_on_the_command_line_is_an_error(bad, capsys):
    with pytest.raises(SystemExit):
        parse_models([bad])
    assert "name=skill+gain" in capsys.readouterr().err


# ---------------------------------------------------------------------- unclaimed requests
class MadeUp(dspy.Signature):
    """Propose how to study a topic."""

    topic: str = dspy.InputField()
    proposed_instruction: str = dspy.OutputField()
    notes: str = dspy.OutputField()


def test_a_request_no_game_claims_gets_every_output_field_deterministically():
    msgs = ADAPTER.format(MadeUp, [], {"topic": "tides"})
    with FakeLLMServer({"m": FakeModel()}) as srv:
        first, again = post(srv, "m", msgs, seed=1), post(srv, "m", msgs, seed=1)
        other = post(srv, "m", msgs, seed=2, n=3)
        (bare,) = post(srv, "m", [{"role": "user", "content": "hello"}])
    (text,) = first
    assert text.endswith("[[ ## completed ## ]]") and text.startswith("[[ ## proposed_instruction ## ]]\n")
    fields = ADAPTER.parse(MadeUp, text)
    assert set(fields) == {"proposed_instruction", "notes"} and all(fields.values())
    assert first == again
    assert text not in other and len(set(other)) > 1  # another seed or choice, another reply
    assert bare == "I do not understand the request."


class Typed(dspy.Signature):
    """Rate the topic."""

    topic: str = dspy.InputField()
    score: int = dspy.OutputField()
    share: float = dspy.OutputField()
    ok: bool = dspy.OutputField()
    grade: Literal["low", "very high"] = dspy.OutputField()
    tags: list[str] = dspy.OutputField()
    counts: dict[str, int] = dspy.OutputField()
    comment: str = dspy.OutputField()


def test_typed_output_fields_get_values_of_their_type():
    with FakeLLMServer({"m": FakeModel()}) as srv:
        for seed in range(5):
            (text,) = post(srv, "m", ADAPTER.format(Typed, [], {"topic": "tides"}), seed=seed)
            got = ADAPTER.parse(Typed, text)
            assert isinstance(got["score"], int) and isinstance(got["ok"], bool)
            assert got["grade"] in ("low", "very high") and got["tags"] == [] and got["counts"] == {}


def test_dspy_predict_through_dspy_lm_reads_an_unclaimed_reply():
    with FakeLLMServer({"m": FakeModel()}) as srv:
        lm = dspy.LM("openai/m", api_base=srv.api_base, api_key="x", cache=False, num_retries=0)
        with dspy.context(lm=lm, adapter=ADAPTER):
            out = dspy.Predict(MadeUp)(topic="tides")
    assert out.proposed_instruction and out.notes
    assert srv.stats.requests == 1


def mipro_requests() -> list[tuple[type[dspy.Signature], dict[str, str]]]:
    basic = AnswerMathQuestion.instructions
    propose = generate_instruction_class(
        use_dataset_summary=True, program_aware=True, use_task_demos=True, use_instruct_history=True, use_tip=True
    ).signature
    code, example = "class Answer(dspy.Module): ...", "Question: 2 + 2?\nAnswer: 4"
    return [
        (DatasetDescriptor, {"examples": "[Example({'question': '2 + 2?', 'answer': '4'})]"}),
        (DatasetDescriptorWithPriorObservations, {"examples": "[...]", "prior_observations": "Arithmetic."}),
        (ObservationSummarizer, {"observations": "Arithmetic word problems."}),
        (DescribeProgram, {"program_code": code, "program_example": example}),
        (
            DescribeModule,
            {
                "program_code": code,
                "program_example": example,
                "program_description": "Solves sums.",
                "module": "self.predict = dspy.Predict(AnswerMathQuestion)",
            },
        ),
        (
            propose,
            {
                "dataset_description": "Arithmetic.",
                "program_code": code,
                "program_description": "Sums.",
                "module": "predict",
                "module_description": "Answers.",
                "task_demos": "No task demos provided.",
                "previous_instructions": "",
                "basic_instruction": basic,
                "tip": "Keep the instruction clear and concise.",
            },
        ),
    ]


def test_mipro_proposer_and_summariser_requests_get_parsable_replies():
    with FakeLLMServer({"m": FakeModel()}) as srv:
        for sig, inputs in mipro_requests():
            msgs = ADAPTER.format(sig, [], inputs)
            (text,) = post(srv, "m", msgs, seed=3)
            got = ADAPTER.parse(sig, text)
            assert set(got) == set(sig.output_fields) and all(str(v).strip() for v in got.values()), sig.__name__
        sig, inputs = mipro_requests()[-1]
        proposals = {
            ADAPTER.parse(sig, post(srv, "m", ADAPTER.format(sig, [], inputs), seed=s)[0])["proposed_instruction"]
            for s in range(8)
        }
    assert len(proposals) > 1  # the proposal varies with the seed
    assert all(
        p.startswith(AnswerMathQuestion.instructions) and len(p) > len(AnswerMathQuestion.instructions)
        for p in proposals
    )  # the basic instruction, then a sentence of advice


def test_dspy_s_own_dataset_summary_runs_against_the_server():
    trainset = [dspy.Example(question=q, answer=str(t)).with_inputs("question") for q, t in questions(12)]
    with FakeLLMServer({"m": FakeModel()}) as srv:
        lm = dspy.LM("openai/m", api_base=srv.api_base, api_key="x", cache=False, num_retries=0)
        with dspy.context(adapter=ADAPTER):
            summary = create_dataset_summary(trainset, 10, lm)
    assert summary and "[[" not in summary
    assert srv.stats.requests == 3  # describe, describe with prior observations, summarise


def test_mipro_v2_compiles_against_the_server_and_demos_lift_the_metric():
    """DSPy's own MIPROv2 (auto="light") end to end through ``dspy.LM``: the dataset summary and
    the instruction proposals are answered, and a low-skill model with a demo gain scores better
    with the compiled program's demos."""
    pytest.importorskip("optuna")
    from skate.answers.exact import normalize_number

    data = [dspy.Example(question=q, answer=str(t)).with_inputs("question") for q, t in questions(30)]

    def metric(example, pred, trace=None):
        return normalize_number(str(pred.answer)) == example.answer

    with FakeLLMServer({"low": FakeModel(0.1, demo_gain=0.8)}) as srv:
        lm = dspy.LM("openai/low", api_base=srv.api_base, api_key="x", cache=False, num_retries=0)
        with dspy.context(lm=lm, adapter=ADAPTER):
            evaluate = dspy.Evaluate(devset=data[15:], metric=metric, num_threads=4, display_progress=False)
            program = answerer()
            before = evaluate(program).score
            compiled = dspy.MIPROv2(metric=metric, auto="light", num_threads=4, verbose=False, seed=0).compile(
                program, trainset=data[:15], valset=data[15:], max_bootstrapped_demos=2, max_labeled_demos=2
            )
            after = evaluate(compiled).score
    assert compiled.predict.demos and after >= before + 50, (before, after)
    assert compiled.predict.signature.instructions.startswith(AnswerMathQuestion.instructions)

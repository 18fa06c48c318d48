"""SCP with language-model players over HTTP on loopback (the fake server plays SCP through
skate/games/scp/fake.py): the built benchmark and player-set games, their prompts, the cache,
and how the setter's and answerer's replies are read."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from skate.games.base import Checks, FakeRequest
from skate.games.scp.fake import FakeSCPPlayer
from skate.games.scp.modules import SCPAnswerer, SCPSetter, render_documents
from skate.games.scp.questions import check
from skate.games.scp.rules import SCPGame, question_of
from skate.llm.fake_server import FakeModel
from skate.runlog.files import read_events
from skate.runlog.records import Task
from skate.runner import run_game
from tests.llm.conftest import SKILLS, RecordingServer, llm_config

TASK_FIELDS = ("event", "ts", "task_id", "round", "setter", "prompt", "answer", "attempts")


def kinds(events, kind):
    return [e for e in events if e["event"] == kind]


class Replies(RecordingServer):
    """The recording server, also keeping every exchange: ``pairs`` of (last user message, reply)."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.pairs: list[tuple[str, str]] = []
        record = self.brain.reply

        def keep(name, messages, seed, index):
            text = record(name, messages, seed, index)
            self.pairs.append((messages[-1]["content"], text))
            return text

        self.brain.reply = keep


def test_llm_players_answer_a_built_benchmark(tmp_path):
    with RecordingServer({n: FakeModel(s) for n, s in SKILLS.items()}) as srv:
        cfg = llm_config(
            srv.api_base, tmp_path / "cache", {"game.questions": 24, "game.rounds": 2, "estimator.n": 4}, game="scp"
        )
        result = run_game(cfg, tmp_path / "run")
        requests = srv.stats.requests
        assert requests > 0
        # the same game again: every call is served from the response cache
        again = run_game(cfg, tmp_path / "again")
        assert srv.stats.requests == requests and again.table == result.table
    assert [r["player"] for r in result.table] == ["ace", "mid", "low"]  # the fake skills' order
    events = read_events(tmp_path / "run")
    tasks = kinds(events, "task")
    assert len(tasks) == 24 and not kinds(events, "attempt")
    est = kinds(events, "estimate")
    assert len(est) == 3 * 24 and all(e["n"] == 4 and e["void"] == 0 for e in est)
    # only answering prompts: the question and its four options, numbered 1-4
    assert not any("[[ ## documents ## ]]" in u for u in srv.users)
    for u in srv.users:
        assert "[[ ## question ## ]]" in u and "[[ ## options ## ]]" in u
        options = u.split("[[ ## options ## ]]", 1)[1]
        assert re.findall(r"^([1-9])\. ", options, re.MULTILINE) == ["1", "2", "3", "4"]
    prompts = {t["prompt"] for t in tasks}
    assert all(any(p in u for p in prompts) for u in srv.users)


def test_llm_players_set_questions_from_offered_paragraphs(tmp_path):
    with Replies({n: FakeModel(s) for n, s in SKILLS.items()}) as srv:
        cfg = llm_config(
            srv.api_base,
            tmp_path / "cache",
            {"game.mode": "player_set", "game.rounds": 2, "estimator.n": 4},
            game="scp",
        )
        result = run_game(cfg, tmp_path / "run")
    events = read_events(tmp_path / "run")
    setting = [(u, r) for u, r in srv.pairs if "[[ ## documents ## ]]" in u]
    assert len(setting) >= 6  # three setters, two rounds
    for u, _ in setting:
        documents = u.split("[[ ## documents ## ]]", 1)[1].split("[[ ## situation ## ]]", 1)[0]
        assert re.search(r"^Document \S+ \(domain: \w+\): ", documents, re.MULTILINE)
        assert len(re.findall(r"^\[\d+\] \S", documents, re.MULTILINE)) >= 12
    tasks = kinds(events, "task")
    attempts = kinds(events, "attempt")
    # the fake setter's proposals make valid questions (rejections, if any, say why)
    assert len(tasks) == 6 and sum(a["valid"] for a in attempts) == len(tasks)
    assert all(a["reason"] == "breaks_rules" and a["detail"] for a in attempts if not a["valid"])
    assert {t["setter"] for t in tasks} <= {"ace", "mid", "low"} and len({t["round"] for t in tasks}) == 2
    written = [
        json.loads(r.split("[[ ## distractors ## ]]", 1)[1].split("[[ ## completed ## ]]")[0]) for _, r in setting
    ]
    for t in tasks:
        assert (
            check(
                question_of(
                    Task(
                        t["task_id"],
                        t["round"],
                        t["setter"],
                        t["prompt"],
                        t["answer"],
                        {k: v for k, v in t.items() if k not in TASK_FIELDS},
                    )
                )
            )
            == []
        )
        if t["type"] == "prediction":  # its wrong options are the ones a setter wrote
            wrong = sorted(o for o in t["options"] if o != t["answer"])
            assert wrong in [sorted(w) for w in written]
    assert len(kinds(events, "estimate")) == 3 * len(tasks)
    assert {r["player"] for r in result.table} == {"ace", "mid", "low"}


# --------------------------------------------------------------------------- the fake setter


def _fake_proposals(qtype):
    """The fake setter's proposals of ``qtype`` over 60 offered windows, each with the game's verdict."""
    game = SCPGame(mode="player_set")
    setter, fake = SCPSetter(game), FakeSCPPlayer()
    out = []
    for r in range(1, 61):
        offered = game.assignment("p", r, np.random.default_rng(r))
        inputs = {"rules": "", "documents": render_documents(offered), "situation": "", "history": ""}
        reply = fake.reply(
            FakeRequest("m", 0.6, inputs, ("document", "paragraph", "question_type", "distractors"), seed=r, index=0)
        )
        proposal = setter.parse(reply)
        if proposal.type == qtype:
            out.append(
                (
                    proposal,
                    game.validate(
                        proposal,
                        Checks(
                            r,
                            "p",
                            offered,
                            None,  # type: ignore[arg-type]
                            np.random.default_rng(r),
                            None,
                        ),
                    ),
                )
            )  # type: ignore[arg-type]
    assert len(out) >= 10
    return out


def test_the_fake_setter_names_offered_paragraphs():
    for proposal, _ in _fake_proposals("sequencing") + _fake_proposals("cloze"):
        assert proposal.doc and proposal.paragraph is not None and proposal.distractors == ()


def test_the_fake_setter_s_prediction_proposals_are_valid():
    rejected = [(p.doc, p.paragraph, v.detail) for p, v in _fake_proposals("prediction") if not isinstance(v, Task)]
    assert not rejected, rejected


def test_the_fake_setter_s_sequencing_proposals_are_valid():
    # where no shown paragraph makes a fragment of any type it falls back to naming the first
    # one as sequencing, which the game rejects; every other proposal is valid
    rejected = [(p.doc, p.paragraph, v.detail) for p, v in _fake_proposals("sequencing") if not isinstance(v, Task)]
    assert len(rejected) <= 3 and all("characters; a sequencing fragment needs" in d for _, _, d in rejected), rejected


# --------------------------------------------------------------------------- reading replies


@pytest.fixture(scope="module")
def setter():
    return SCPSetter(SCPGame(mode="player_set"))


def test_the_setter_reads_a_json_list_of_distractors(setter):
    p = setter.parse(
        "[[ ## document ## ]]\npep-0318.rst\n\n[[ ## paragraph ## ]]\n14\n\n"
        "[[ ## question_type ## ]]\nprediction\n\n"
        '[[ ## distractors ## ]]\n["First wrong one.", "Second wrong one.", "Third wrong one."]\n\n'
        "[[ ## completed ## ]]"
    )
    assert (p.doc, p.paragraph, p.type) == ("pep-0318.rst", 14, "prediction")
    assert p.distractors == ("First wrong one.", "Second wrong one.", "Third wrong one.") and not p.note


def test_the_setter_reads_distractors_one_per_line(setter):
    p = setter.parse(
        "[[ ## document ## ]]\n`pep-0318.rst`\n\n[[ ## paragraph ## ]]\nparagraph 7\n\n"
        "[[ ## question_type ## ]]\nPrediction\n\n"
        "[[ ## distractors ## ]]\n- First wrong one.\n- Second wrong one.\n* Third wrong one.\n\n"
        "[[ ## completed ## ]]"
    )
    assert (p.doc, p.paragraph, p.type) == ("pep-0318.rst", 7, "prediction")
    assert p.distractors == ("First wrong one.", "Second wrong one.", "Third wrong one.")


@pytest.mark.parametrize(
    "written",
    ["prediction        # note: the value you produce must exactly match one of: ...", "Predict", "**prediction**"],
)
def test_the_setter_reads_a_question_type_with_a_copied_note_or_of_its_stem(setter, written):
    """The 1.5B wrote the template's note after its type, the 0.5B a word of the type's stem."""
    reply = (
        f"[[ ## document ## ]]\npep-0318.rst\n\n[[ ## paragraph ## ]]\n14\n\n[[ ## question_type ## ]]\n{written}\n\n"
        '[[ ## distractors ## ]]\n["First wrong one here.", "Second wrong one.", "Third wrong one."]\n\n[[ ## completed ## ]]'
    )
    assert setter.parse(reply).type == "prediction"
    # and so does DSPy's reading of the reply, as a prompt optimiser's program makes it
    assert setter.adapter.parse(setter.predict.signature, reply)["question_type"] == "prediction"


def test_the_setter_reads_sequencing_without_distractors(setter):
    p = setter.parse(
        "[[ ## document ## ]]\npep-0435.rst\n\n[[ ## paragraph ## ]]\n3\n\n"
        "[[ ## question_type ## ]]\nsequencing\n\n[[ ## distractors ## ]]\n[]\n\n[[ ## completed ## ]]"
    )
    assert (p.doc, p.paragraph, p.type, p.distractors) == ("pep-0435.rst", 3, "sequencing", ())


def test_a_reply_without_a_document_is_an_empty_proposal_saying_so(setter):
    p = setter.parse("[[ ## paragraph ## ]]\n3\n\n[[ ## question_type ## ]]\ncloze\n\n[[ ## completed ## ]]")
    assert (p.doc, p.type) == ("", "") and "[[ ## document ## ]]" in p.note
    assert "question_type" not in p.note
    q = setter.parse("I would rather not.")
    assert "[[ ## document ## ]]" in q.note and "[[ ## question_type ## ]]" in q.note


@pytest.mark.parametrize(
    ("reply", "index"),
    [
        ("3", 2),
        ("Answer: 2", 1),
        ("[[ ## answer ## ]]\n4", 3),
        ("[[ ## answer ## ]]\n1\n\n[[ ## completed ## ]]", 0),
        ("no idea", None),
        ("[[ ## answer ## ]]\nnone of them", None),
    ],
)
def test_the_answerer_reads_an_option_number(reply, index):
    assert SCPAnswerer().parse(reply) == index

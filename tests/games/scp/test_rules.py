"""SCP rules: every way a player-set proposal is rejected (with a reason that says what to fix),
a valid prediction proposal, option shuffling and grading, and the benchmark format's round trip."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from skate.games.base import Checks, GameEnv
from skate.games.scp.corpus import shipped_corpus
from skate.games.scp.fragments import markup_density
from skate.games.scp.questions import build, check, from_json, normalise
from skate.games.scp.rules import SCPGame, SCPProposal, offered_id, question_of, read_benchmark
from skate.runlog.records import FailReason, Rejection, SetterContext, Task

DOC = "science/lab.txt"

# Paragraph i of the document is PARAS[i]; the window offered is paragraphs 1-12.
GOOD = [
    (
        "The survey of the river began in the spring, when the water was still cold and clear. Three teams "
        "walked the banks every morning and wrote down the level at each marker. The first reports were "
        "short and uneven. Over the weeks the notes grew longer and more careful."
    ),
    (
        "By the middle of summer the teams had learned to read the markers from a distance. They compared "
        "their numbers at the mill each evening and settled any difference before supper. The miller kept "
        "the ledger in a dry cupboard. Nobody was allowed to take it home."
    ),
    (
        "Late in the summer a storm brought the river over its banks for two days. The teams could not "
        "reach the lower markers, so they estimated the level from the height of the reeds. Those two "
        "days are marked with a cross in the ledger. Later readers treated them with caution."
    ),
    (
        "In the autumn the survey moved upstream to the quarry, where the current is faster. The markers "
        "there were painted posts driven into the gravel. Several posts were lost to floating timber. "
        "The teams replaced them with iron rods set in concrete."
    ),
]
SHORT = "Too short to use."
LOWER = (
    "and so the survey went on for many weeks while the river kept rising along the banks of the old "
    "town near the mill."
)
COLON = "The survey team wrote down the following rules for measuring the river level at the mill every single morning:"
MARKUP = (
    "The level L_t = {a} + [b] * <c> ~ d^2 $x$ was computed as |L| for each station near the mill on "
    "the river, every day of the survey."
)
LATER = [
    (
        "Winter ended the survey for the year, since the markers were buried under snow. The teams copied "
        "the ledger into a clean book by lamplight. Each copy was checked twice by different hands. The "
        "clean book went to the town library in the new year."
    ),
    (
        "The library kept the clean book on an open shelf for anyone to read. Farmers consulted it before "
        "planting, and boatmen before the spring trips. Its pages soon grew soft at the corners. A second "
        "copy was made within ten years."
    ),
    (
        "Historians later used the ledger to date the great flood of the following decade. Their estimate "
        "agreed with the church records to within a week. The agreement made the survey famous. Other "
        "towns began surveys of their own."
    ),
    (
        "The original markers can still be found along the lower bank. Most are worn smooth by the water. "
        "A few carry the initials of the team that set them. Walkers sometimes stop to read them."
    ),
    (
        "Today the river is measured by automatic gauges that report every ten minutes. The old ledger is "
        "kept in a glass case at the mill. Visitors can turn its pages on the first day of each month. "
        "The gauges are checked against it once a year."
    ),
    (
        "The mill itself was restored by volunteers and grinds flour again in the summer. Its wheel turns "
        "on the same current the teams once measured. Children visit it on school trips. They are shown "
        "the cross that marks the storm."
    ),
]
PARAS = ["Lab notes on the river survey", *GOOD, SHORT, LOWER, COLON, MARKUP, *LATER]
FIRST, LAST = 1, 12  # the offered window

WRONG = (
    "A violent hailstorm flattened the barley in the western meadows and scattered the sheep overnight.",
    "Merchants from the coast arrived with salt, copper pans and bolts of dyed linen for the autumn fair.",
    "The bishop ordered new bells for the cathedral tower after lightning cracked the oldest of them.",
)


@pytest.fixture(scope="module")
def game(tmp_path_factory):
    folder = tmp_path_factory.mktemp("docs")
    (folder / "science").mkdir()
    (folder / "science" / "lab.txt").write_text("\n\n".join(PARAS) + "\n", encoding="utf-8")
    g = SCPGame(mode="player_set", docs=str(folder))
    assert g.paragraphs_of(DOC) == PARAS  # the document reads back paragraph by paragraph
    assert markup_density(MARKUP) > g.threshold >= markup_density(COLON)
    return g


def assignment():
    return {
        "documents": [
            {
                "doc": DOC,
                "domain": "science",
                "title": "Lab notes on the river survey",
                "first": FIRST,
                "paragraphs": PARAS[FIRST : LAST + 1],
            }
        ]
    }


def checks(seed=0):
    def solve(queries, rng):  # SCP does not ask the setter to prove its question solvable
        raise AssertionError("validate must not ask the setter to answer")

    return Checks(
        round=2,
        setter="ann",
        assignment=assignment(),
        sandbox=None,  # type: ignore[arg-type]
        rng=np.random.default_rng(seed),
        solve=solve,
    )


def rejected(game, proposal) -> Rejection:
    out = game.validate(proposal, checks())
    assert isinstance(out, Rejection), out
    return out


# --------------------------------------------------------------------------- fragments


@pytest.mark.parametrize(
    ("proposal", "reason", "says"),
    [
        (
            SCPProposal(DOC, 2, "summary"),
            FailReason.MALFORMED,
            r"unknown question type 'summary': use one of sequencing, cloze, prediction",
        ),
        (
            SCPProposal("", None, "", note="the reply has no [[ ## document ## ]] section"),
            FailReason.MALFORMED,
            r"no \[\[ ## document ## \]\] section",
        ),
        (
            SCPProposal("science/other.txt", 2, "sequencing"),
            FailReason.BREAKS_RULES,
            r"'science/other.txt' was not offered to you this round; choose one of science/lab\.txt",
        ),
        (
            SCPProposal(DOC, 0, "sequencing"),
            FailReason.BREAKS_RULES,
            (
                r"a sequencing fragment is 2 paragraphs, all within the paragraphs shown \(1-12\), so it must start "
                r"between 1 and 11; you gave 0"
            ),
        ),
        (SCPProposal(DOC, 12, "sequencing"), FailReason.BREAKS_RULES, r"must start between 1 and 11; you gave 12"),
        (
            SCPProposal(DOC, 9, "cloze"),
            FailReason.BREAKS_RULES,
            r"a cloze fragment is 5 paragraphs, .*must start between 1 and 8; you gave 9",
        ),
        (SCPProposal(DOC, None, "cloze"), FailReason.BREAKS_RULES, r"you gave None"),
        # prediction: the true continuation must be shown as well
        (
            SCPProposal(DOC, 12, "prediction", WRONG),
            FailReason.BREAKS_RULES,
            r"a prediction fragment is 1 paragraph and the one after it, .*must start between 1 and 11; you gave 12",
        ),
        (
            SCPProposal(DOC, 5, "prediction", WRONG),
            FailReason.BREAKS_RULES,
            rf"the fragment has {len(SHORT)} characters; a prediction fragment needs at least 100",
        ),
        (
            SCPProposal(DOC, 6, "prediction", WRONG),
            FailReason.BREAKS_RULES,
            r"starts mid-sentence or with a caption; choose one that starts a sentence",
        ),
        (
            SCPProposal(DOC, 7, "prediction", WRONG),
            FailReason.BREAKS_RULES,
            r"ends with a colon.*choose a fragment of running prose",
        ),
        (
            SCPProposal(DOC, 8, "prediction", WRONG),
            FailReason.BREAKS_RULES,
            r"heavy with markup, code or formulas; choose a passage of plain prose",
        ),
        # a good paragraph whose true continuation is no prose paragraph (too short)
        (
            SCPProposal(DOC, 4, "prediction", WRONG),
            FailReason.BREAKS_RULES,
            r"the paragraph after your fragment, its true continuation, is not a paragraph of prose.*choose another",
        ),
    ],
)
def test_every_bad_fragment_is_rejected_with_what_to_fix(game, proposal, reason, says):
    rej = rejected(game, proposal)
    assert rej.reason is reason
    assert re.search(says, rej.detail), rej.detail


def test_fragments_that_break_a_rule_inside_a_longer_run_are_caught(game):
    # a 5-paragraph cloze fragment that would take in the colon paragraph
    rej = rejected(game, SCPProposal(DOC, 4, "cloze"))
    assert rej.reason is FailReason.BREAKS_RULES
    assert "starts mid-sentence" not in rej.detail  # it starts with a good paragraph
    assert "colon" in rej.detail or "characters" in rej.detail


# --------------------------------------------------------------------------- prediction distractors

TRUTH = GOOD[2]  # the paragraph after GOOD[1] (paragraph 2)
CONTEXT = GOOD[1]


@pytest.mark.parametrize(
    ("distractors", "reason", "says"),
    [
        ((), FailReason.TOO_FEW_DISTRACTORS, r"needs exactly 3 wrong continuations; you wrote 0"),
        (WRONG[:2], FailReason.TOO_FEW_DISTRACTORS, r"needs exactly 3 wrong continuations; you wrote 2"),
        (
            (*WRONG, "The ferry stopped running when the new bridge opened at the narrows."),
            FailReason.TOO_FEW_DISTRACTORS,
            r"needs exactly 3 wrong continuations; you wrote 4",
        ),
        (
            (WRONG[0], TRUTH, WRONG[2]),
            FailReason.TOO_FEW_DISTRACTORS,
            r"wrong continuation 2 repeats the true continuation",
        ),
        (
            (WRONG[0], WRONG[1], "  " + TRUTH.replace(". ", ".\n  ")),
            FailReason.TOO_FEW_DISTRACTORS,
            r"wrong continuation 3 repeats the true continuation",
        ),  # up to whitespace
        (
            (CONTEXT, WRONG[1], WRONG[2]),
            FailReason.TOO_FEW_DISTRACTORS,
            r"wrong continuation 1 repeats the passage itself",
        ),
        (
            (WRONG[0], WRONG[1], WRONG[0]),
            FailReason.TOO_FEW_DISTRACTORS,
            r"wrong continuation 3 repeats wrong continuation 1",
        ),
        (
            (WRONG[0], "Then it rained.", WRONG[2]),
            FailReason.BREAKS_RULES,
            r"wrong continuation 2 has 15 characters; write between 40 and 2000",
        ),
        (
            (WRONG[0], WRONG[1], "The river rose again. " * 100),
            FailReason.BREAKS_RULES,
            r"wrong continuation 3 has 2199 characters; write between 40 and 2000",
        ),
        (
            (TRUTH.replace("two days", "three days"), WRONG[1], WRONG[2]),
            FailReason.BREAKS_RULES,
            (
                r"wrong continuation 1 says nearly what the true continuation says \(similarity 0\.\d\d > 0\.80\): "
                r"it could also be right"
            ),
        ),
    ],
)
def test_bad_distractors_are_rejected_with_what_to_fix(game, distractors, reason, says):
    rej = rejected(game, SCPProposal(DOC, 2, "prediction", tuple(distractors)))
    assert rej.reason is reason
    assert re.search(says, rej.detail), rej.detail


def test_blank_distractors_do_not_count(game):
    rej = rejected(game, SCPProposal(DOC, 2, "prediction", (*WRONG[:2], "   ")))
    assert rej.reason is FailReason.TOO_FEW_DISTRACTORS and "you wrote 2" in rej.detail


def test_a_valid_prediction_proposal_becomes_a_sound_task(game):
    task = game.validate(SCPProposal(DOC, 2, "prediction", WRONG), checks())
    assert isinstance(task, Task), task
    assert (task.task_id, task.setter, task.round) == ("r002-ann", "ann", 2)
    d = task.data
    assert sorted(d["options"]) == sorted([TRUTH, *WRONG])
    assert task.answer == TRUTH == d["original"]
    assert d["context"] == CONTEXT and CONTEXT in task.prompt and TRUTH not in task.prompt
    assert (d["doc"], d["position"], d["type"], d["domain"]) == (DOC, 2, "prediction", "science")
    assert d["groups"] == {"type": "prediction", "domain": "science"}
    assert isinstance(d["seed"], int) and d["question_id"].startswith(f"prediction/{DOC}/2/")
    q = question_of(task)
    assert check(q) == [] and q.options[q.answer] == TRUTH
    # the seed drawn from the checks' generator: same generator, same task
    again = game.validate(SCPProposal(DOC, 2, "prediction", WRONG), checks())
    assert again == task


@pytest.mark.parametrize(("qtype", "start", "n"), [("sequencing", 1, 2), ("cloze", 1, 5), ("sequencing", 9, 2)])
def test_valid_sequencing_and_cloze_proposals_restore_the_fragment(game, qtype, start, n):
    task = game.validate(SCPProposal(DOC, start, qtype), checks(seed=3))
    assert isinstance(task, Task), task
    q = question_of(task)
    assert check(q) == []
    assert normalise(q.original) == normalise(" ".join(PARAS[start : start + n]))
    assert q.options[q.answer] == task.answer and len(set(q.options)) == 4


def test_the_setter_is_shown_exactly_the_starts_that_validate(game):
    """The starts listed under a document are those validate accepts, type by type; every
    other start in the window is refused."""
    starts = game.fragment_starts(DOC, FIRST, LAST - FIRST + 1)
    assert set(starts) == {"sequencing", "cloze", "prediction"} and all(starts.values())
    for qtype, listed in starts.items():
        for start in range(FIRST, LAST + 1):
            out = game.validate(SCPProposal(DOC, start, qtype, WRONG if qtype == "prediction" else ()), checks())
            assert isinstance(out, Task) == (start in listed), (qtype, start, out)
    # the setter's prompt lists them under the document
    setter = game.modules(GameEnv(sandbox=None)).setter
    text = setter.inputs(
        SetterContext(
            player="ann",
            players=("ann",),
            round=1,
            rounds=1,
            attempt=1,
            attempts_left=3,
            failed=(),
            history=(),
            strategy="no_info",
            assignment={"documents": [{**assignment()["documents"][0], "starts": starts}]},
        )
    )
    line = f"cloze at {', '.join(map(str, starts['cloze']))}"
    assert line in text["documents"] and DOC in text["rules"]
    # a start off the list is refused with the list
    listed = Checks(
        round=2,
        setter="ann",
        assignment={"documents": [{**assignment()["documents"][0], "starts": starts}]},
        sandbox=None,
        rng=np.random.default_rng(0),
        solve=None,
    )  # type: ignore[arg-type]
    off = next(k for k in range(FIRST, LAST + 1) if k not in starts["cloze"])
    out = game.validate(SCPProposal(DOC, off, "cloze"), listed)
    assert (
        isinstance(out, Rejection)
        and f"(listed for cloze in {DOC}: {', '.join(map(str, starts['cloze']))})" in out.detail
    )


def test_a_document_named_up_to_case_punctuation_or_extension_is_the_offered_one(game):
    """What the cohort's small models wrote for pep-0514.rst and pep-0729.rst."""
    offered = ["pep-0514.rst", "pep-0729.rst"]
    for name, meant in (
        ("Pep-0514.rst", "pep-0514.rst"),
        (">(PEP-0514.rst),", "pep-0514.rst"),
        ("PEP-0729", "pep-0729.rst"),
        ("pep-0729.rst", "pep-0729.rst"),
        ("pep-0730", "pep-0730"),
        ("", ""),
        ("Document", "Document"),
        ("pep-0729.rst (domain: typing): Self Type", "pep-0729.rst"),
    ):  # the heading it was shown
        assert offered_id(name, offered) == meant, name
    task = game.validate(SCPProposal(f"**{DOC.upper()}**", 1, "sequencing"), checks())
    assert isinstance(task, Task) and task.data["doc"] == DOC


def test_sequencing_and_cloze_ignore_written_distractors(game):
    task = game.validate(SCPProposal(DOC, 1, "sequencing", WRONG), checks())
    assert isinstance(task, Task) and not set(WRONG) & set(task.data["options"])


# --------------------------------------------------------------------------- answering


@pytest.fixture(scope="module")
def built_task(game):
    return game.validate(SCPProposal(DOC, 2, "prediction", WRONG), checks())


def test_queries_shuffle_the_options_and_keep_all_four(game, built_task):
    rng = np.random.default_rng(0)
    orders = set()
    for _ in range(60):
        q = game.make_query(built_task, rng)
        assert q.prompt == built_task.prompt
        assert sorted(q.options) == sorted(built_task.data["options"]) and len(q.options) == 4
        orders.add(q.options)
    assert len(orders) >= 12  # of the 24 orders
    assert len({o.index(TRUTH) for o in orders}) == 4  # the truth is shown in every position


def test_grading_accepts_only_the_true_option(game, built_task):
    rng = np.random.default_rng(1)
    for _ in range(10):
        q = game.make_query(built_task, rng)
        verdicts = [game.grade(built_task, q, i) for i in range(4)]
        assert verdicts.count(True) == 1 and q.options[verdicts.index(True)] == TRUTH
        assert not game.grade(built_task, q, None) and not game.grade(built_task, q, 4)
        assert not game.grade(built_task, q, -1) and not game.grade(built_task, q, str(verdicts.index(True)))


def test_sequencing_queries_grade_by_the_restoring_order(game):
    task = game.validate(SCPProposal(DOC, 1, "sequencing"), checks())
    rng = np.random.default_rng(2)
    for _ in range(5):
        q = game.make_query(task, rng)
        right = [i for i in range(4) if game.grade(task, q, i)]
        assert len(right) == 1
        order = ["ABC".index(x) for x in q.options[right[0]].split()]
        assert normalise(" ".join(q.parts[k] for k in order)) == normalise(task.data["original"])


# --------------------------------------------------------------------------- the benchmark format


def test_every_built_question_round_trips_through_jsonl(tmp_path):
    questions = build(shipped_corpus(), 1, 0)
    assert len(questions) >= 90 and {q.type for q in questions} == {"sequencing", "cloze", "prediction"}  # 98
    path = tmp_path / "bench.jsonl"
    path.write_text("".join(json.dumps(q.to_json()) + "\n" for q in questions), encoding="utf-8")
    assert read_benchmark(path) == questions
    for q in questions:
        assert from_json(json.loads(json.dumps(q.to_json()))) == q


def test_read_benchmark_names_the_bad_line(tmp_path):
    q = build(shipped_corpus()[:3], 1, 0)[0].to_json()
    path = tmp_path / "bench.jsonl"
    wrong = dict(q, answer=(q["answer"] + 1) % 4)
    path.write_text(json.dumps(q) + "\n\n" + json.dumps(wrong) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bench\.jsonl, line 3: .*fails its checks"):
        read_benchmark(path)
    path.write_text(json.dumps({k: v for k, v in q.items() if k != "original"}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 1: .*needs the fields \['original'\]"):
        read_benchmark(path)


def test_markup_density_is_the_share_of_markup_among_the_visible_characters():
    """Against the definition, one character at a time (spaces of every kind left out)."""
    import random

    from skate.games.scp.fragments import MARKUP_CHARS

    def by_definition(text):
        visible = [c for c in text if not c.isspace()]
        return sum(c in MARKUP_CHARS for c in visible) / len(visible) if visible else 0.0

    alphabet = "ab c\t\n\r\x0b\x0c`*|_={}[]<>\\#~^$+\u00a0\u2003\u3000\x85\x1c\u2028é"
    rng = random.Random(0)
    texts = [
        "",
        "   ",
        "`x`",
        "a_b c",
        *("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(2000)),
    ]
    for text in texts:
        assert markup_density(text) == pytest.approx(by_definition(text), abs=1e-12), repr(text)

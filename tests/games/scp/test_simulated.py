"""Simulated SCP players: the reader that finds the right option in the source documents, the
difficulty measure, answering by skill against difficulty (with a guess among four otherwise),
skill offsets per type and domain, and setting questions in player-set mode."""

from __future__ import annotations

import numpy as np
import pytest

from skate.games.base import Checks
from skate.games.scp.corpus import shipped_corpus
from skate.games.scp.questions import TYPES, build, prediction_stem
from skate.games.scp.reader import Reader, SCPQuery, difficulty, shipped_reader
from skate.games.scp.rules import (
    SHIPPED_DOMAINS,
    SCPGame,
    SCPProposal,
    query_of,
    question_of,
)
from skate.games.scp.simulated import SCPSimulation, key_of
from skate.players.simulated import SimulatedPlayer
from skate.runlog.records import Rejection, SetterContext, Task

ORDERS = ([0, 1, 2, 3], [3, 1, 0, 2], [2, 3, 1, 0])


@pytest.fixture(scope="module")
def bench():
    questions = build(shipped_corpus(), 4, 0)
    assert len(questions) >= 300  # the size for the shipped corpus
    return questions


@pytest.fixture(scope="module")
def game():
    return SCPGame(mode="player_set")  # the shipped corpus, nothing built


@pytest.fixture(scope="module")
def sim(game):
    return SCPSimulation(game)


def player(sim, skill, **kw):
    kw.setdefault("noise", 0.0)
    return SimulatedPlayer(name="p", skill=skill, sim=sim, seed=0, **kw)


# --------------------------------------------------------------------------- reading


def test_the_reader_finds_the_right_option_of_every_shipped_question(bench):
    reader = shipped_reader()
    wrong = []
    for q in bench:
        truth = q.options[q.answer]
        for order in ORDERS:
            query = query_of(q, order)
            right = reader.solve(query)
            if right is None or query.options[right] != truth:
                wrong.append((q.id, order, right))
    assert not wrong, wrong[:5]


def test_the_reader_knows_where_a_question_comes_from(bench):
    reader = shipped_reader()
    for q in bench[::7]:
        assert reader.domain(query_of(q)) == q.domain


def test_text_from_elsewhere_cannot_be_read():
    reader = shipped_reader()
    made_up = SCPQuery(
        "The passage below was cut",
        ("A B C", "B A C", "C A B", "A C B"),
        type="sequencing",
        parts=("Zebras graze at noon.", "Otters sleep at dusk.", "Herons fish at dawn."),
    )
    assert reader.solve(made_up) is None and reader.domain(made_up) is None
    other = Reader([])
    q = build(shipped_corpus()[:2], 1, 0)[0]
    assert other.solve(query_of(q)) is None


def test_difficulty_lies_in_0_1_and_spreads(bench):
    ds = np.array([difficulty(query_of(q), q.answer) for q in bench])
    assert ((ds >= 0) & (ds <= 1)).all()
    p10, p90 = np.percentile(ds, [10, 90])
    assert p90 - p10 > 0.3, (p10, p90)
    # it is a property of the question, not of the order its options are shown in
    for q in bench[::11]:
        for order in ORDERS[1:]:
            shown = query_of(q, order)
            assert difficulty(shown, shown.options.index(q.options[q.answer])) == pytest.approx(ds[bench.index(q)])


def test_every_type_spans_easy_and_hard_questions(bench):
    for qtype in TYPES:
        ds = [difficulty(query_of(q), q.answer) for q in bench if q.type == qtype]
        assert len(ds) >= 15 and max(ds) - min(ds) > 0.25, qtype  # cloze: 18 questions


# --------------------------------------------------------------------------- answering


def _accuracy(p, q, n, seed=0):
    rng = np.random.default_rng(seed)
    queries = [query_of(q, [int(i) for i in rng.permutation(4)]) for _ in range(n)]
    replies = p.answer(queries, rng)
    truth = q.options[q.answer]
    picks = [query.options[r] for query, r in zip(queries, replies, strict=True)]
    return sum(x == truth for x in picks) / n, picks


@pytest.mark.parametrize("qtype", TYPES)
def test_accuracy_is_know_plus_a_quarter_of_the_rest(sim, bench, qtype):
    q = next(q for q in bench if q.type == qtype and 0.3 < difficulty(query_of(q), q.answer) < 0.7)
    d = sim.read(query_of(q))[2]
    p = player(sim, skill=d)  # knows about half the time
    know = p.p_know(key_of(query_of(q)))
    assert know == pytest.approx(0.5, abs=0.01)
    acc, picks = _accuracy(p, q, 4000)
    assert acc == pytest.approx(know + (1 - know) / 4, abs=0.03)
    # a miss is a guess: the three wrong options come up about equally often
    wrong = [x for x in picks if x != q.options[q.answer]]
    counts = [wrong.count(o) for o in q.options if o != q.options[q.answer]]
    assert min(counts) > 0.25 * len(wrong)
    strong, _ = _accuracy(player(sim, skill=d + 0.1), q, 2000, seed=1)
    weak, _ = _accuracy(player(sim, skill=d - 0.1), q, 2000, seed=2)
    assert weak + 0.2 < acc < strong - 0.2


def test_a_question_not_in_the_corpus_is_answered_at_chance(sim):
    context = "Quokkas were observed sharing burrows with shearwaters on the island throughout the dry season."
    options = (
        "The rangers counted four hundred of them by torchlight in March.",
        "Ferries from the mainland now carry signs warning visitors not to feed them.",
        "Their main predator on the island is the introduced red fox.",
        "Researchers fitted collars to thirty animals the following year.",
    )
    q = SCPQuery(prediction_stem(context), options, type="prediction", parts=(context,))
    assert sim.read(q)[3] is None
    replies = player(sim, skill=1.0).answer([q] * 4000, np.random.default_rng(0))
    shares = np.bincount(replies, minlength=4) / 4000
    assert shares == pytest.approx([0.25] * 4, abs=0.03)


def test_skill_keys_are_the_types_and_the_domains(sim, tmp_path):
    assert set(sim.skill_keys) >= set(TYPES) | set(SHIPPED_DOMAINS)
    (tmp_path / "astronomy").mkdir()
    (tmp_path / "astronomy" / "a.txt").write_text("Title\n\nSome prose about comets. It is short.\n")
    other = SCPSimulation(SCPGame(mode="player_set", docs=str(tmp_path)))
    assert "astronomy" in other.skill_keys and set(TYPES) <= set(other.skill_keys)
    with pytest.raises(ValueError, match="unknown topic_skill kinds"):
        SimulatedPlayer(name="p", skill=0.5, sim=sim, seed=0, topic_skill={"astronomy": 0.1})


def test_an_answered_question_has_its_type_and_domain_as_kinds(sim, bench):
    for qtype in TYPES:
        q = next(q for q in bench if q.type == qtype and q.domain != "language")
        key = key_of(query_of(q))
        p = player(sim, 0.6)
        p.answer([query_of(q, [1, 0, 3, 2])], np.random.default_rng(0))  # any order: the same key
        assert sim.kinds_of(key) == (q.type, q.domain)
        assert sim.kind_of(key) == q.type


def test_type_and_domain_offsets_move_p_know(sim, bench):
    q = next(q for q in bench if q.type == "cloze" and q.domain == "packaging")
    query = query_of(q)
    d = sim.read(query)[2]
    key = key_of(query)
    base = player(sim, d).p_know(key)
    assert player(sim, d, topic_skill={"packaging": -0.1}).p_know(key) < base - 0.3
    assert player(sim, d, topic_skill={"cloze": 0.1}).p_know(key) > base + 0.3
    assert player(sim, d, topic_skill={"governance": -0.3, "prediction": -0.3}).p_know(key) == base


# --------------------------------------------------------------------------- setting


def _context(game, r, rng):
    return SetterContext(
        player="p",
        players=("p", "q"),
        round=r,
        rounds=30,
        attempt=1,
        attempts_left=3,
        failed=(),
        history=(),
        strategy="no_info",
        assignment=game.assignment("p", r, rng),
    )


def _checks(ctx, rng):
    return Checks(
        round=ctx.round,
        setter="p",
        assignment=ctx.assignment,
        sandbox=None,  # type: ignore[arg-type]
        rng=rng,
        solve=lambda queries, rng: [0] * len(queries),
    )


@pytest.fixture(scope="module")
def proposals(game, sim):
    """30 careful setters' proposals, each with its context and the game's verdict."""
    p = player(sim, 0.6, sloppiness=0.0)
    out = []
    for r in range(1, 31):
        rng = np.random.default_rng(r)
        ctx = _context(game, r, rng)
        proposal = p.set_task(ctx, rng)
        out.append((ctx, proposal, game.validate(proposal, _checks(ctx, np.random.default_rng(100 + r)))))
    return out


def test_a_careful_simulated_setter_mostly_writes_valid_questions(proposals):
    valid = [v for _, _, v in proposals if isinstance(v, Task)]
    assert len(valid) >= 21, [v for _, _, v in proposals if isinstance(v, Rejection)]
    assert len({v.data["type"] for v in valid}) >= 2
    for _, proposal, v in proposals:
        if isinstance(v, Task):
            assert v.data["doc"] == proposal.doc and v.data["position"] == proposal.paragraph
            if proposal.type == "prediction":  # its distractors are the wrong options
                assert set(v.data["options"]) == {v.answer, *proposal.distractors}


def test_the_setter_picks_from_the_documents_it_was_offered(proposals):
    for ctx, proposal, _ in proposals:
        shown = {s["doc"]: s for s in ctx.assignment["documents"]}
        assert proposal.doc in shown
        s = shown[proposal.doc]
        assert s["first"] <= proposal.paragraph < s["first"] + len(s["paragraphs"])


def test_every_flaw_of_a_careless_setter_is_rejected(game, sim, proposals):
    p = player(sim, 0.6)
    for k, (ctx, proposal, _) in enumerate(proposals):
        for j in range(4):
            rng = np.random.default_rng([k, j])
            flawed = sim.flaw(p, ctx, proposal, rng)
            assert flawed != proposal
            out = game.validate(flawed, _checks(ctx, rng))
            assert isinstance(out, Rejection), (flawed, out)
            assert out.detail


def test_a_setter_aims_at_the_difficulty_it_wants(game, sim):
    p = player(sim, 0.6, sloppiness=0.0)
    by_target = {}
    for target in (0.2, 0.9):
        ds = []
        for r in range(1, 13):
            rng = np.random.default_rng(r)
            ctx = _context(game, r, rng)
            proposal = sim.write(p, ctx, "sequencing", target, rng)
            task = game.validate(proposal, _checks(ctx, np.random.default_rng(r)))
            if isinstance(task, Task):
                q = question_of(task)
                ds.append(sim.read(query_of(q))[2])
        assert len(ds) >= 8
        by_target[target] = float(np.mean(ds))
    # the game cuts the question again with its own seed (the shuffle, hence near misses, change),
    # so the aim shows through the fragment's length rather than exactly
    assert by_target[0.2] + 0.05 < by_target[0.9], by_target


def test_a_prediction_setter_writes_three_distinct_distractors_from_the_shown_paragraphs(game, sim):
    p = player(sim, 0.6, sloppiness=0.0)
    made = 0
    for r in range(1, 11):
        rng = np.random.default_rng(r)
        ctx = _context(game, r, rng)
        proposal = sim.write(p, ctx, "prediction", 0.6, rng)
        if proposal.type != "prediction":
            continue
        assert isinstance(proposal, SCPProposal) and len(set(proposal.distractors)) == 3
        shown = next(s for s in ctx.assignment["documents"] if s["doc"] == proposal.doc)
        assert set(proposal.distractors) <= set(shown["paragraphs"])
        made += 1
    assert made >= 5

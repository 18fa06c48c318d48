"""Answerer reasoning (``game.reasoning``): with it the answerer's signature asks for a
``reasoning`` output before the answer, without it the answer alone; replies are read leniently
after a reasoning section, and a reply cut inside its reasoning is unparsable. Games are played
against the loopback fake server both ways."""

from __future__ import annotations

import dspy
import pytest

import skate
from skate.answers.choice import ChoiceQuery
from skate.games import load_games
from skate.games.base import GameEnv
from skate.games.cop.modules import answerer as cop_answerer
from skate.games.pyjail.modules import PyJailAttacker
from skate.games.scp.modules import SCPAnswerer
from skate.llm.fake_replies import cut_in_reasoning
from skate.llm.fake_server import FakeModel
from skate.llm.modules import MultipleChoiceAnswerer
from skate.runlog.files import read_events
from skate.runner import run_game
from skate.settings.build import build_game
from tests.llm.conftest import SKILLS, RecordingServer, llm_config

QUICK = {"scp": {"mode": "player_set"}}  # nothing to build


@pytest.mark.parametrize("game", sorted(load_games()))
def test_each_game_has_a_reasoning_key_and_its_answerer_follows_it(game):
    # each game's default: its schema's (e.g. tests/games/mathquiz)
    assert isinstance(skate.preset(game, "game").reasoning, bool)
    quick = QUICK.get(game, {})
    for on in (True, False):
        g = build_game(skate.preset(game, "game", values={**quick, "reasoning": on}))
        fields = list(g.modules(GameEnv(sandbox=None)).answerer.predict.signature.output_fields)  # type: ignore[arg-type]
        assert (fields[0] == "reasoning") is on and len(fields) == 1 + on


# ----------------------------------------------------------------------------- parsing
CUT = "[[ ## reasoning ## ]]\nOption B prints 3, but the loop runs once more, so"


@pytest.mark.parametrize(
    ("reply", "with_cot", "without"),
    [
        (
            "[[ ## reasoning ## ]]\nA looks right, but tracing it gives C.\n\n[[ ## answer ## ]]\nC\n\n[[ ## completed ## ]]",
            2,
            2,
        ),
        ("[[ ## reasoning ## ]]\nNot A: the list is copied.\n\n[[ ## answer ## ]]\nThe answer is D.\n", 3, 3),
        ("[[ ## reasoning ## ]]\nB, no: C.\n[[ ## answer ## ]]\n**B**", 1, 1),  # no completed marker, markdown
        (CUT, None, 1),  # cut inside its reasoning: unparsable with reasoning (without, the old lenient read)
        ("I traced it: A is off by one, so the answer is (C).", 2, 2),
        ("Tracing it, A and then D.", None, 3),  # letters named while thinking, no conclusion
        ("No idea.", None, None),
    ],
)
def test_a_multiple_choice_reply_is_read_after_its_reasoning(reply, with_cot, without):
    assert cop_answerer(4, reasoning=True).parse(reply) == with_cot
    assert cop_answerer(4, reasoning=False).parse(reply) == without


def test_a_cut_reply_is_the_fake_server_s_fault_and_unparsable():
    whole = "[[ ## reasoning ## ]]\nStep one, then step two, then B.\n\n[[ ## answer ## ]]\nB\n\n[[ ## completed ## ]]"
    cut = cut_in_reasoning(whole)
    assert whole.startswith(cut) and "[[ ## answer" not in cut and len(cut) > len("[[ ## reasoning ## ]]\n")
    assert cop_answerer(4, reasoning=True).parse(whole) == 1 and cop_answerer(4, reasoning=True).parse(cut) is None
    assert cut_in_reasoning("[[ ## answer ## ]]\nB\n") == "[[ ## answer ## ]]\nB\n"


def test_numbered_and_input_answerers_read_after_reasoning_too():
    scp = SCPAnswerer(reasoning=True)
    assert scp.parse("[[ ## reasoning ## ]]\nOption 2 reads well, but 4 follows.\n\n[[ ## answer ## ]]\n4\n") == 3
    assert scp.parse("[[ ## reasoning ## ]]\nOption 2 reads well, but") is None
    assert SCPAnswerer().parse("[[ ## reasoning ## ]]\nOption 2 reads well, but") == 1  # off: as before
    jail = PyJailAttacker(reasoning=True)
    assert list(jail.predict.signature.output_fields) == ["reasoning", "input"]
    assert (
        jail.parse("[[ ## reasoning ## ]]\nThe filter misses getattr.\n\n[[ ## input ## ]]\nprint(1)\n") == "print(1)"
    )
    assert jail.parse("[[ ## reasoning ## ]]\nThe filter misses getattr, so I") is None


def test_the_reasoning_field_comes_before_the_answer_in_the_prompt():
    mc = cop_answerer(4, reasoning=True)
    system = mc.messages(ChoiceQuery("print(1)", ("1", "2", "3", "4")))[0]["content"]
    assert system.index("[[ ## reasoning ## ]]") < system.index("[[ ## answer ## ]]")
    assert "Literal['A', 'B', 'C', 'D']" in system or "A; B; C; D" in system  # the letters are still narrowed
    assert isinstance(mc, MultipleChoiceAnswerer) and isinstance(mc, dspy.Module)


# ------------------------------------------------------------------- over the loopback server
def _asks_reasoning(user):
    """Whether a request asks for a reasoning output first: ChatAdapter's sections, (structured
    output, the default with the fake server) JSONAdapter's list of fields, or the plain format's
    reply template (PyJail's attacker)."""
    return (
        "[[ ## reasoning ## ]]" in user
        or "fields: `reasoning`, then" in user
        or "\n\nREASONING:\n" in user.split("Reply in exactly this form:")[-1]
    )


def _answer_requests(users, first_field):
    return [u for u in users if f"[[ ## {first_field} ## ]]" in u and "[[ ## options ## ]]" in u]


def _estimates(run):
    return sorted(
        (e["task_id"], e["player"], e["p"], e["n"], e["correct"], e["unparsable"])
        for e in read_events(run)
        if e["event"] == "estimate"
    )


def _play(tmp_path, values, reasoning, models=None, tag="", **choices):
    models = models or {n: FakeModel(s) for n, s in SKILLS.items()}
    with RecordingServer(models) as srv:
        cfg = llm_config(
            srv.api_base, tmp_path / f"cache{reasoning}{tag}", {**values, "game.reasoning": reasoning}, **choices
        )
        run_game(cfg, tmp_path / f"run{reasoning}{tag}")
    return srv, tmp_path / f"run{reasoning}{tag}"


def test_a_cop_game_reads_the_same_p_correct_with_and_without_reasoning(tmp_path):
    """The fake model picks the same letter either way (its reasoning names another option on
    the way), so every p(correct) must be the same: the answer is read after the reasoning."""
    values = {"game.rounds": 2, "estimator.n": 6}
    on_srv, on = _play(tmp_path, values, True, aug="full_personal")
    off_srv, off = _play(tmp_path, values, False, aug="full_personal")
    asked_on, asked_off = _answer_requests(on_srv.users, "program"), _answer_requests(off_srv.users, "program")
    assert asked_on and all(_asks_reasoning(u) for u in asked_on)
    assert asked_off and not any("reasoning" in u for u in asked_off)
    est_on, est_off = _estimates(on), _estimates(off)
    assert est_on and est_on == est_off
    assert all(e[5] == 0 for e in est_on)  # nothing unparsable
    assert len({e[2] for e in est_on}) > 1  # p(correct) varies: the comparison is not vacuous
    # the setters were told the run's strategy (full_personal), through the game protocol
    setting = [u for u in on_srv.users if "[[ ## guidance ## ]]" in u]
    assert setting and all("your own earlier tasks, each with every player's score" in u for u in setting)


def test_a_reply_cut_inside_its_reasoning_counts_as_unparsable(tmp_path):
    models = {"ace": FakeModel(0.9), "mid": FakeModel(0.6), "low": FakeModel(0.3, {"cut_reasoning": 1.0})}
    values = {"game.rounds": 1, "estimator.n": 4}
    _, on = _play(tmp_path, values, True, models)
    _, off = _play(tmp_path, values, False, models)
    low_on = [e for e in _estimates(on) if e[1] == "low"]
    low_off = [e for e in _estimates(off) if e[1] == "low"]
    assert low_on and all(e[5] == e[3] == 4 and e[2] == 0 for e in low_on)  # every sample unreadable: wrong
    assert low_off and all(e[5] == 0 for e in low_off)  # no reasoning to cut: the fault changes nothing
    assert all(e[5] == 0 for e in _estimates(on) if e[1] != "low")


def test_a_built_scp_game_reads_the_same_p_correct_with_and_without_reasoning(tmp_path):
    values = {"game.questions": 8, "game.rounds": 1, "estimator.n": 4}
    on_srv, on = _play(tmp_path, values, True, game="scp")
    off_srv, off = _play(tmp_path, values, False, game="scp")
    asked_on, asked_off = _answer_requests(on_srv.users, "question"), _answer_requests(off_srv.users, "question")
    assert asked_on and all(_asks_reasoning(u) for u in asked_on)
    assert asked_off and not any("reasoning" in u for u in asked_off)
    assert _estimates(on) == _estimates(off) and all(e[5] == 0 for e in _estimates(on))


def test_a_pyjail_game_with_reasoning_attacks_through_it(tmp_path):
    values = {"game.rounds": 1, "game.tries": 2, "estimator.n": 2}
    on_srv, on = _play(tmp_path, values, True, game="pyjail")
    attacks = [u for u in on_srv.users if "[[ ## earlier_tries ## ]]" in u]
    assert attacks and all(_asks_reasoning(u) for u in attacks)
    events = read_events(on)
    assert [e for e in events if e["event"] == "task"]  # the setters' self-attacks read their inputs
    _, off = _play(tmp_path, values, False, game="pyjail")
    assert _estimates(on) == _estimates(off)

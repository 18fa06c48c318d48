"""A small PyJail game with language-model players over HTTP on loopback (the fake server): the
setter writes a jail and attacks it in a fresh conversation, attackers work in multi-turn
sessions, and no flag ever reaches a prompt."""

from __future__ import annotations

import re

from skate.games.pyjail.modules import PyJailAttacker
from skate.games.pyjail.rules import AttackQuery, Try, TryVerdict
from skate.llm.fake_server import FakeModel
from skate.runlog.files import read_events
from skate.runner import run_game
from tests.llm.conftest import SKILLS, RecordingServer, llm_config

FLAG = re.compile(r"skate\{[0-9a-f]{32}\}")


Recording = RecordingServer


def test_llm_players_play_a_whole_pyjail_game(tmp_path):
    with Recording({n: FakeModel(s) for n, s in SKILLS.items()}) as srv:
        cfg = llm_config(
            srv.api_base, tmp_path / "cache", {"game.rounds": 2, "game.tries": 3, "estimator.n": 4}, game="pyjail"
        )
        result = run_game(cfg, tmp_path / "run")
    events = read_events(tmp_path / "run")
    start = events[0]
    assert start["game"] == "pyjail" and start["sandbox_isolated"] is True
    tasks = [e for e in events if e["event"] == "task"]
    assert tasks, "the fake models' jails should be valid"
    assert all(t["setter_solution"] and 1 <= t["setter_tries"] <= 3 for t in tasks)
    attacks = [u for u in srv.users if "[[ ## earlier_tries ## ]]" in u]
    writes = [u for u in srv.users if "[[ ## flag_location ## ]]" in u]
    assert attacks and writes
    # multi-turn: later tries carry the session's earlier inputs and what they gave
    assert any("Input 1:" in u and "Result:" in u for u in attacks)
    # the setter's solution and any flag never reach a prompt
    for t in tasks:
        assert not any(t["setter_solution"] in u for u in writes)
    assert not any(FLAG.search(u) for u in srv.users)
    assert not FLAG.search((tmp_path / "run" / "events.jsonl").read_text())
    est = [e for e in events if e["event"] == "estimate"]
    assert len(est) == 3 * len(tasks) and all(e["n"] + e["void"] == 4 for e in est)
    assert {r["player"] for r in result.table} == {"ace", "mid", "low"}


def test_the_attacker_reads_an_input_and_shows_the_session():
    a = PyJailAttacker()
    q = AttackQuery("def jail(s):\n    return s", (Try("1+1", TryVerdict.HELD, "returned: '1+1'"),), 2, 7)
    user = a.messages(q)[-1]["content"]
    assert "Input 1: '1+1'" in user and "returned: '1+1'" in user and "[[ ## tries_left ## ]]\n2" in user
    assert (
        a.parse("[[ ## input ## ]]\n__import__('os').environ['FLAG']\n\n[[ ## completed ## ]]")
        == "__import__('os').environ['FLAG']"
    )
    assert a.parse("[[ ## input ## ]]\n```python\nprint(1)\n```\n[[ ## completed ## ]]") == "print(1)"
    assert a.parse("I will not answer.") is None
    hidden = AttackQuery(None, (), 3, 1)
    assert "hidden" in a.messages(hidden)[-1]["content"]
    # the plain format it asks for: the input in a fenced block, exactly as written
    assert (
        a.read_reply('INPUT:\n```python\nvars(__import__("os"))["environ"]["FLAG"]\n```')
        == 'vars(__import__("os"))["environ"]["FLAG"]'
    )
    assert "INPUT:\n```python" in user.split("Reply in exactly this form:")[1]


def test_text_sent_in_quotes_reaches_the_game_as_a_string(tmp_path):
    """The 1.5B's slip (fake fault ``quoted``: the fenced text sent as a string literal): its jail
    is a string, not a function, and is rejected saying so; its inputs reach the jail as strings,
    so it never captures a flag, where the same model without the slip does."""
    with Recording({"ace": FakeModel(0.9), "quoted": FakeModel(0.9, {"quoted": 1.0})}) as srv:
        cfg = llm_config(
            srv.api_base,
            tmp_path / "cache",
            {"game.rounds": 1, "game.tries": 2, "estimator.n": 4},
            names=("ace", "quoted"),
            game="pyjail",
        )
        run_game(cfg, tmp_path / "run")
    assert srv.stats.by_fault["quoted"] > 0
    events = read_events(tmp_path / "run")
    mine = [e for e in events if e["event"] == "attempt" and e["player"] == "quoted"]
    assert mine and all(a["reason"] == "malformed" and "defines no top-level function" in a["detail"] for a in mine)
    assert all(a["text"].startswith(("'", '"')) for a in mine)
    est = {e["player"]: e for e in events if e["event"] == "estimate"}
    assert est["quoted"]["p"] == 0.0 and est["ace"]["p"] > 0.0

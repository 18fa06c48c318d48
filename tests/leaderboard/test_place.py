"""Placing a newcomer: adaptive banked tasks, its own tasks banked, a budget, resume, bad input."""

from __future__ import annotations

import pytest

import skate
from skate.leaderboard.bank import import_run
from skate.leaderboard.fit import refit
from skate.leaderboard.page import board_text
from skate.leaderboard.place import AddSettings, Placed, add, describe_placed
from skate.leaderboard.store import OVERALL, Store, StoreError
from tests.leaderboard.conftest import interrupt_then_resume


@pytest.fixture
def board(runs_to_bank, tmp_path):
    store = Store.open(tmp_path / "b.db")
    for r in runs_to_bank:
        import_run(store, r)
    refit(store)
    return store


def test_a_newcomer_is_placed_for_few_calls_and_its_tasks_join_the_bank(board, tmp_path):
    before = board.counts()
    got = add(board, "simulated:0.99", "top", AddSettings(runs_dir=tmp_path / "adds", budget=300, samples=4))
    assert got.rank == 1  # far stronger than the whole cohort (sim-ace: 0.9)
    assert got.calls <= 300 and got.set_tasks >= 1
    after = board.counts()
    assert after["models"] == before["models"] + 1
    assert after["tasks"] == before["tasks"] + got.set_tasks
    new = [t for t in board.tasks() if t.setter == "top"]
    assert len(new) == got.set_tasks and all(t.difficulty is not None for t in new)
    snap, rows = board.board("mathquiz")
    assert snap["why"] == "add:top" and rows[0]["model"] == "top"
    incumbents = {r["model"]: r["score"] for r in rows if r["model"] != "top"}
    again = add(board, "simulated:0.99", "top", AddSettings(runs_dir=tmp_path / "adds"))
    assert again.already and board.counts() == after
    # the incumbents keep the last fit's scores while a model is placed
    assert incumbents == {r["model"]: r["score"] for r in board.board("mathquiz")[1] if r["model"] != "top"}
    fitted = {r["model"]: r["score"] for r in board.board("mathquiz")[1]}
    assert incumbents == {m: v for m, v in fitted.items() if m != "top"}
    # one game in the bank: the overall board is the game's, and the newcomer is on it too
    overall = {r["model"]: r["score"] for r in board.board(OVERALL)[1]}
    assert overall["top"] == fitted["top"] and len(overall) == after["models"] and board.not_overall() == []


def test_the_overall_table_names_a_newcomer_it_does_not_hold_yet(board, tmp_path):
    """On a bank of several games the overall fit pools them all, so a model placed on one game's
    board joins it at the next refit; until then the overall table says so (here the overall
    snapshot is written again without the newcomer, as a bank of several games leaves it)."""
    add(board, "simulated:0.5", "mid2", AddSettings(runs_dir=tmp_path / "adds", budget=60, samples=2, set_rounds=0))
    snap, rows = board.board(OVERALL)
    with board.transaction() as conn:
        board.snapshot(conn, OVERALL, "refit", snap["fit"], [r for r in rows if r["model"] != "mid2"])
    assert board.not_overall() == ["mid2"]
    text = board_text(board)
    overall = text.split("\n\n")[0]
    assert "mid2" not in overall.split("-\n", 1)[1].split("Not in this table")[0]  # not a row ...
    assert "Not in this table until the next refit: mid2" in overall  # ... but named under it
    assert "Not in this table" not in board_text(board, "mathquiz")
    refit(board)
    assert board.not_overall() == [] and "Not in this table" not in board_text(board)


def test_an_interrupted_add_goes_on_where_it_stopped(board, tmp_path, monkeypatch):
    interrupt_then_resume(board, tmp_path, monkeypatch, at=5)


def test_bad_input_is_one_line_and_stores_nothing(board, tmp_path):
    before = board.counts()
    for model, match in [("gpt4", "unknown model 'gpt4'"), ("simulated:2", "skill in \\[0, 1\\]")]:
        with pytest.raises(StoreError, match=match):
            add(board, model, settings=AddSettings(runs_dir=tmp_path))
    with pytest.raises(StoreError, match="cannot place anyone here.*give --budget"):
        add(board, "simulated:0.5", settings=AddSettings(runs_dir=tmp_path, budget=5))
    with pytest.raises(StoreError, match="no task of game 'cop'"):
        add(board, "simulated:0.5", settings=AddSettings(runs_dir=tmp_path, game="cop"))
    assert board.counts() == before


def test_a_language_model_is_placed_through_a_real_server(tmp_path):
    """Incumbents and newcomer are models behind the project's fake OpenAI-compatible server on
    loopback: the add's calls reach the server, its neighbours answer its tasks there too."""
    from skate.llm.fake_server import FakeLLMServer, FakeModel
    from skate.runner import run_game
    from tests.llm.conftest import llm_players

    skills = {"ace": 0.9, "mid": 0.6, "low": 0.3, "new": 0.75}
    with FakeLLMServer({n: FakeModel(s) for n, s in skills.items()}) as srv:
        run_game(
            skate.config(
                game="mathquiz",
                logger="none",
                estimator="fixed_n",
                values={
                    "game.rounds": 3,
                    "report": False,
                    "print_table": False,
                    "players.simulated": [],
                    "players.llm": llm_players(srv.api_base),
                    "estimator.n": 4,
                    "llm.cache_dir": str(tmp_path / "cache"),
                    "llm.preflight": False,
                },
            ),
            tmp_path / "bank",
        )
        store = Store.open(tmp_path / "b.db")
        import_run(store, tmp_path / "bank")
        refit(store)
        before = srv.stats.requests
        got = add(
            store,
            "openai/new",
            settings=AddSettings(runs_dir=tmp_path / "adds", set_rounds=1, neighbours=2),
            edits={"llm.cache_dir": str(tmp_path / "cache"), "llm.preflight": False},
            api_base=srv.api_base,
            api_key_env="SKATE_TEST_NO_KEY",
        )
        asked = srv.stats.requests - before
    assert 0 < asked <= got.calls  # every call went to the server (several samples may share a request)
    assert got.model == "new" and got.set_tasks == 1
    assert store.models()[-1]["spec"]["api_base"] == srv.api_base
    own = [t for t in store.tasks() if t.setter == "new"]
    answered = {r.model for r in store.responses() if r.task == own[0].id}
    assert "new" in answered and len(answered) == 3  # it and its two nearest incumbents
    # The incumbents' server is gone now: placing another model without a setting game asks only
    # it (its own endpoint checked by the preflight), never an incumbent's.
    with FakeLLMServer({"late": FakeModel(0.5)}) as other:
        late = add(
            store,
            "openai/late",
            settings=AddSettings(runs_dir=tmp_path / "adds", set_rounds=0, samples=2),
            edits={"llm.cache_dir": str(tmp_path / "cache"), "llm.preflight": True},
            api_base=other.api_base,
            api_key_env="SKATE_TEST_NO_KEY",
        )
        assert other.stats.requests > 0
    assert late.tasks > 0 and late.model in {r["model"] for r in store.board("mathquiz")[1]}


def test_a_game_that_builds_its_own_tasks_places_without_a_setting_game(tmp_path):
    """SCP's built benchmark: the newcomer answers banked questions and sets none (no setter in
    that game), within its budget."""
    from skate.runner import run_game

    run_game(
        skate.config(
            game="scp",
            logger="none",
            values={"game.rounds": 1, "game.max_doc_age_days": None, "report": False, "print_table": False},
        ),
        tmp_path / "scp",
    )
    store = Store.open(tmp_path / "b.db")
    import_run(store, tmp_path / "scp")
    refit(store)
    got = add(
        store,
        "simulated:0.6",
        settings=AddSettings(runs_dir=tmp_path / "adds", budget=200, samples=2),
        edits={"game.max_doc_age_days": None},
    )
    assert got.set_tasks == 0 and 0 < got.calls <= 200
    assert not (tmp_path / "adds").exists()  # no setting game was played
    assert store.counts()["runs"] == 1


def test_an_add_is_said_in_one_line():
    placed = Placed("m", "cop", theta=0.5, sd=0.25, rank=3, tasks=40, calls=420, stopped="settled", set_tasks=2)
    assert describe_placed(placed) == (
        "m: rank 3 on the cop board, score 0.50 ± 0.49, from 40 tasks and 420 calls (settled; 2 tasks of its own banked)"
    )
    again = Placed("m", "cop", theta=0.5, sd=0.25, rank=3, tasks=0, calls=0, stopped="", already=True)
    assert describe_placed(again) == "m is on the cop board already (rank 3); nothing asked"

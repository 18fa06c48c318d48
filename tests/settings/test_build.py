"""skate.settings.build: a game's parts come out of assemble finished (nothing is set on them afterwards),
and the smaller tools compose the same builders."""

from __future__ import annotations

import contextlib

import skate
from skate.runlog.files import EventLog, read_events
from skate.settings.build import DEFAULT_SUFFIX, assemble, build_table, llm_players, open_client

MODELS = {"llm.preflight": False, "llm.cache": False}
CHOICES = {"players": "fake_local", "logger": "none", "game": "mathquiz"}


def settings(values=None, **choices: str):
    return skate.config(values={**MODELS, **(values or {})}, **{**CHOICES, **choices})


def test_a_greedy_game_s_parts_are_finished_when_assembled(tmp_path):
    log = EventLog(tmp_path / "events.jsonl")
    with contextlib.ExitStack() as cleanup:
        parts = assemble(
            settings(
                {"estimator.max_tokens": 50, "events.rating_updates": "pair", "optimizer.compare": True},
                estimator="greedy",
                optimizer="bootstrap_fewshot",
            ),
            cleanup,
            log,
        )
        # the models decode as the estimator asks, the twins with their default prompts too
        assert [p.name for p in parts.players] == [
            "ace",
            "mid",
            "low",
            *(f"{n}{DEFAULT_SUFFIX}" for n in ("ace", "mid", "low")),
        ]
        assert {(p.spec.temperature, p.spec.max_tokens) for p in parts.players} == {(0.0, 50)}
        assert parts.rating.record_pairs  # the log keeps one record per pairwise update
        assert not (tmp_path / "events.jsonl").exists()  # nothing written while building
        parts.client.on_void({"player": "ace", "model": "hosted_vllm/ace", "kind": "timeout"})
    log.close()
    assert [(e["event"], e["player"]) for e in read_events(tmp_path)] == [("llm_void", "ace")]


def test_players_keep_their_own_decoding_and_the_rating_logs_per_task_by_default(tmp_path):
    with contextlib.ExitStack() as cleanup:
        parts = assemble(settings(), cleanup, EventLog(tmp_path / "events.jsonl"))
        assert {(p.spec.temperature, p.spec.max_tokens) for p in parts.players} == {(0.7, 2048)}
        assert not parts.rating.record_pairs and [p.name for p in parts.players] == ["ace", "mid", "low"]


def test_a_tool_composes_the_builders_it_needs():
    s = settings(estimator="greedy")
    with contextlib.ExitStack() as cleanup:
        table = build_table(s, cleanup)
        assert table.game.name == "mathquiz" and table.sandbox.name == "none"
        assert open_client(skate.config(logger="none"), table, cleanup) is None  # no model
        players = llm_players(s.players.llm, table, open_client(s, table, cleanup))
        assert [p.spec.temperature for p in players] == [0.7] * 3  # no estimator here: their own decoding

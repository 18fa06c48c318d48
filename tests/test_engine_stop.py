"""stop.settled: a game ends once every adjacent pair of its ranking is ordered at the stated
confidence; run_end says why; a resumed game stops at the same round; nothing recorded is lost."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import skate
from skate.cli.play import resume
from skate.errors import ConfigError
from skate.runlog.files import comparable
from skate.runner import run_game
from skate.settings.recorded import rate_run

CHEAP = {"stop.settled": 0.95, "stop.min_rounds": 3, "game.rounds": 30, "report": False, "seed": 3}


def cheap(values=None):
    """A COP game that stops once its ranking is settled: IRT's uncertainty, the adaptive estimator."""
    return skate.config(values={**CHEAP, **(values or {})}, rating="irt", estimator="adaptive", logger="none")


def lines(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "events.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def settled_run(tmp_path_factory) -> tuple[Path, object]:
    run = tmp_path_factory.mktemp("settled") / "run"
    return run, run_game(cheap(), run)


def test_the_game_ends_once_its_ranking_is_settled_and_says_why(settled_run):
    run, result = settled_run
    events = lines(run)
    rounds = [e for e in events if e["event"] == "round_end"]
    assert 3 <= len(rounds) < 30
    assert all("order" in r and len(r["order"]) == 5 for r in rounds)  # six players, five adjacent pairs
    assert min(p["confidence"] for p in rounds[-1]["order"]) >= 0.95
    assert all(min(p["confidence"] for p in r["order"]) < 0.95 for r in rounds[2:-1])  # not sooner
    end = events[-1]
    assert end["event"] == "run_end" and end["ended"] == "settled"
    assert f"settled after round {len(rounds)} of 30" in end["ended_detail"]
    assert end["summary"]["settled"] == end["ended_detail"]
    # the ranking it settled on is the true one
    table = result.table
    assert [r["player"] for r in table] == [r["player"] for r in sorted(table, key=lambda r: -r["true_skill"])]


def test_players_it_did_not_ask_are_logged_as_skipped_not_as_failed_calls(settled_run):
    run, result = settled_run
    estimates = [e for e in lines(run) if e["event"] == "estimate"]
    skipped = [e for e in estimates if e.get("skipped")]
    assert skipped and all(e["n"] == 0 and e["p"] is None and e["void"] == 0 for e in skipped)
    assert result.summary.skipped_estimates == len(skipped)
    assert result.summary.void_estimates == 0
    assert not any(e["event"] == "player_void" for e in lines(run))
    assert result.summary.samples == sum(e["n"] for e in estimates)


def test_the_stored_run_rates_again_to_the_live_table(settled_run):
    run, result = settled_run
    name, rows = rate_run(run)
    assert name == "IRTRating"
    assert {r["player"]: r["score"] for r in rows} == pytest.approx({r["player"]: r["score"] for r in result.table})


def test_a_game_stopped_mid_way_resumes_to_the_same_settled_end(settled_run, tmp_path):
    run, _ = settled_run
    raw = (run / "events.jsonl").read_text().splitlines(keepends=True)
    second = [i for i, x in enumerate(raw) if '"round_end"' in x][1]
    cut = tmp_path / "cut"
    cut.mkdir()
    (cut / "events.jsonl").write_text("".join(raw[: second + 1]))
    assert resume(str(cut), []) == 0
    assert [comparable(e) for e in lines(cut)] == [comparable(e) for e in lines(run)]
    assert json.loads((cut / "ratings.json").read_text()) == json.loads((run / "ratings.json").read_text())


def test_min_rounds_holds_the_game_and_without_stop_every_round_is_played(tmp_path):
    run = tmp_path / "all"
    run_game(cheap({"game.rounds": 4, "stop.min_rounds": 4}), run)
    end = lines(run)[-1]
    assert sum(e["event"] == "round_end" for e in lines(run)) == 4
    assert end["ended"] == "rounds" and "ended_detail" not in end


@pytest.mark.parametrize(
    "choices, values, keys",
    [
        ({"rating": "elo"}, {"stop.settled": 0.99}, ["stop.settled", "rating=elo"]),
        ({"rating": "elo", "estimator": "adaptive"}, {}, ["estimator=adaptive", "rating=elo"]),
        ({"rating": "irt", "estimator": "decided"}, {}, ["estimator=decided", "rating=irt"]),
        ({}, {"stop.settled": 1.5}, ["stop.settled"]),
        ({}, {"stop.min_rounds": 0}, ["stop.min_rounds"]),
        ({"experiment": "added_models_xy"}, {"stop.settled": 0.99}, ["stop.settled", "stage"]),
        ({"rating": "irt"}, {"schedule.mode": "matches"}, ["schedule.mode", "rating=irt"]),
        ({"experiment": "zerosumeval", "estimator": "adaptive"}, {}, ["estimator", "schedule.mode=matches"]),
    ],
)
def test_a_stop_rule_or_estimator_its_rating_cannot_serve_fails_at_compose_time(tmp_path, choices, values, keys):
    with pytest.raises(ConfigError) as err:
        run_game(skate.config(values={**values, "report": False}, logger="none", **choices), tmp_path / "x")
    message = str(err.value)
    assert "\n" not in message
    for key in keys:
        assert key in message
    assert not (tmp_path / "x").exists() or not any((tmp_path / "x").iterdir())


def test_the_report_shows_how_sure_the_ranking_got_and_why_the_game_ended(settled_run, tmp_path):
    from skate.report import build_report

    run, _ = settled_run
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    page = build_report(copy).read_text()
    assert "ranking_confidence.png" in page and (copy / "report" / "ranking_confidence.png").exists()
    assert "The game ended early: settled after round" in page

"""Rating a stored run again: the same table as live, other backends, and the CLI."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from skate.runner import run_game
from skate.settings.recorded import rate_run
from tests.test_runner_game import config

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    result = run_game(config({"seed": 5, "game.rounds": 8}), out)
    return out, result


def test_recomputing_a_run_gives_the_live_table(stored_run):
    out, result = stored_run
    name, rows = rate_run(out)
    assert name == "TrueSkillRating"
    live = {r["player"]: (r["mu"], r["sigma"]) for r in result.table}
    again = {r["player"]: (r["mu"], r["sigma"]) for r in rows}
    assert again == pytest.approx(live)


def test_recomputing_keeps_the_runs_rating_settings_and_takes_overrides(tmp_path):
    out = tmp_path / "abs"
    result = run_game(config({"seed": 2, "game.rounds": 5, "rating.outcome": "absolute", "rating.tau": 0.2}), out)
    _, rows = rate_run(out)
    assert {r["player"]: r["mu"] for r in rows} == pytest.approx({r["player"]: r["mu"] for r in result.table})
    _, relative = rate_run(out, {"rating.outcome": "relative"})
    assert {r["player"]: r["mu"] for r in relative} != pytest.approx({r["player"]: r["mu"] for r in rows})


def test_other_backends_rate_the_same_games(stored_run):
    out, result = stored_run
    truth = [r["player"] for r in sorted(result.table, key=lambda r: -r["true_skill"])]
    _, bt = rate_run(out, {"rating": "bradley_terry", "rating.bootstrap": 200})
    assert [r["player"] for r in sorted(bt, key=lambda r: -r["score"])] == truth
    assert all(r["lo"] <= r["score"] <= r["hi"] for r in bt)
    _, elo = rate_run(out, {"rating": "elo"})
    assert [r["player"] for r in elo] == truth


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "skate", "rate", *args], capture_output=True, text=True, cwd=ROOT, timeout=300
    )


def test_cli_prints_and_saves_the_table(stored_run):
    out, _ = stored_run
    res = run_cli(str(out), "rating=bradley_terry", "rating.bootstrap=100")
    assert res.returncode == 0, res.stderr
    assert "interval" in res.stdout and all(n in res.stdout for n in ("hi", "mid", "lo"))
    saved = json.loads((out / "ratings.BradleyTerryRating.json").read_text())
    assert {r["player"] for r in saved} == {"hi", "mid", "lo"} and all("lo" in r for r in saved)


def test_overrides_may_follow_the_options(stored_run, capsys):
    from skate.cli.rate import main

    out, _ = stored_run
    assert main([str(out), "--json", "rating=elo"]) == 0  # not "unrecognized arguments: rating=elo"
    assert [r["player"] for r in json.loads(capsys.readouterr().out.splitlines()[0])] == [
        r["player"] for r in json.loads((out / "ratings.EloRating.json").read_text())
    ]


def test_cli_bad_input_says_what_to_fix(tmp_path, stored_run, capsys):
    from skate.cli.rate import main

    missing = run_cli(str(tmp_path / "nowhere"))
    assert missing.returncode == 3 and "events.jsonl" in missing.stderr
    out, _ = stored_run
    # the other bad inputs: the same main() in this process (its return value is the exit status)
    capsys.readouterr()
    assert main([str(out), "rating=glicko"]) == 2 and "glicko" in capsys.readouterr().err
    assert main([str(out), "rating=bradley_terry", "rating.alpha=0"]) == 2
    assert "rating.alpha" in capsys.readouterr().err


# ------------------------------------------------------------------ rerate: one game rated several ways as it ends
REPLAY = [
    {"name": "same"},
    {"name": "absolute", "outcome": "absolute", "average_last": 20},
    {"name": "bt", "rating": "elo"},
]


@pytest.fixture(scope="module")
def rerated_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("rerated")
    result = run_game(config({"seed": 5, "game.rounds": 8, "rerate": REPLAY}), out)
    return out, result


def test_the_game_is_rated_again_each_named_way_into_files_and_the_run_end_event(rerated_run):
    out, result = rerated_run
    end = json.loads((out / "events.jsonl").read_text().splitlines()[-1])
    assert end["event"] == "run_end" and list(end["rerated"]) == ["same", "absolute", "bt"]
    for name, rows in end["rerated"].items():
        assert json.loads((out / f"ratings.{name}.json").read_text()) == rows
        assert {"player", "score", "lo", "hi", "rank"} <= set(rows[0]) and "true_skill" in rows[0]
    # the game's own settings again: the live table
    assert end["rerated"]["same"] == pytest.approx(result.table)
    # the absolute rule on the same games, mu and sigma over the last 20 updates, as skate.rate gives it
    _, by_hand = rate_run(out, {"rating.outcome": "absolute", "rating.average_last": 20})
    absolute = {r["player"]: (r["mu"], r["sigma"]) for r in end["rerated"]["absolute"]}
    assert absolute == pytest.approx({r["player"]: (r["mu"], r["sigma"]) for r in by_hand})
    assert absolute != pytest.approx({r["player"]: (r["mu"], r["sigma"]) for r in result.table})
    assert all("sigma_last" in r for r in end["rerated"]["absolute"])
    # another backend, named by its rating option
    _, elo = rate_run(out, {"rating": "elo"})
    assert end["rerated"]["bt"] == pytest.approx(
        [{**r, "true_skill": t["true_skill"]} for r, t in zip(elo, end["rerated"]["bt"], strict=False)]
    )


@pytest.fixture(scope="module")
def fixed_n():
    """The small game with estimator=fixed_n, settled once: each bad-entry test gives it its rerate list."""
    return config(estimator="fixed_n")


@pytest.mark.parametrize(
    ("entries", "says"),
    [
        ([{"outcome": "absolute"}], "rerate[0].name"),
        ([{"name": "a"}, {"name": "a", "outcome": "absolute"}], "another rerate entry"),
        ([{"name": "a", "outcom": "absolute"}], "outcom"),
        ([{"name": "a", "outcome": "sometimes"}], "rerate[0] (a)"),
        ([{"name": "a", "rating": "glicko"}], "glicko"),
        ([{"name": "a", "draw_margin": "sigma_star"}], None),
    ],
)
def test_bad_rerate_entries_say_what_to_fix(fixed_n, entries, says, tmp_path):
    """The entries are read once, where the game is run, before anything is written."""
    import dataclasses

    from skate.errors import ConfigError

    settings = dataclasses.replace(fixed_n, rerate=entries)
    # fixed_n has no sigma* to tie the margin to
    with pytest.raises(ConfigError, match="sigma_star" if says is None else re.escape(says)):
        run_game(settings, tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_a_built_benchmark_is_rated_again_from_every_one_of_its_tasks(tmp_path):
    """A built SCP benchmark has many tasks a round, all set by the game itself: re-rating reads
    each one (it once read only the last task of each round) and gives the live table."""
    out = tmp_path / "scp"
    result = run_game(config({"game.rounds": 2, "game.questions": 12}, game="scp"), out)
    from skate.runlog.events import read_run

    stream = read_run(out).rating_stream()
    assert len(stream) == result.summary.tasks == 12
    assert all(len(t.counts) == len(t.p_correct) for t in stream)
    _, rows = rate_run(out)
    assert {r["player"]: r["mu"] for r in rows} == pytest.approx({r["player"]: r["mu"] for r in result.table})


def test_a_run_played_with_pairwise_ratings_is_rated_from_its_answers_and_order_free(stored_run):
    """rating=irt reads the graded samples every estimate recorded (runs from before it existed
    have them), rating=ttt the same outcomes as TrueSkill without their order."""
    out, result = stored_run
    truth = [r["player"] for r in sorted(result.table, key=lambda r: -r["true_skill"])]
    name, irt = rate_run(out, {"rating": "irt"})
    assert name == "IRTRating"
    assert [r["player"] for r in irt] == truth
    assert all(r["lo"] < r["score"] < r["hi"] and r["samples"] > 0 for r in irt)
    name, ttt = rate_run(out, {"rating": "ttt"})
    assert name == "TrueSkillThroughTimeRating"
    assert [r["player"] for r in ttt] == truth


def test_the_rerate_entries_are_read_once_per_run(tmp_path, monkeypatch):
    """run_game reads the rerate list (each entry checked as a rating) once: building the settings
    does not read it again."""
    import skate.settings.options as options

    checked = []
    real = options.validate_rating
    monkeypatch.setattr(options, "validate_rating", lambda cfg: checked.append(cfg.outcome) or real(cfg))
    run_game(config({"game.rounds": 1, "rerate": [{"name": "a", "outcome": "absolute"}]}), tmp_path / "run")
    from skate.runlog.files import read_events

    end = read_events(tmp_path / "run")[-1]
    assert checked == ["absolute"] and set(end["rerated"]) == {"a"}


def test_rerate_entries_are_typed_rating_settings_from_the_game_s_or_a_composed_option():
    from skate.errors import ConfigError
    from skate.settings.options import rerate_settings

    settings = config(estimator="algorithm1")
    (_, same), (_, zse), (_, tied) = rerate_settings(
        [
            {"name": "same"},
            {"name": "zse", "rating": "zerosumeval", "bootstrap": 50},
            {"name": "tied", "draw_margin": "2*sigma_star"},
        ],
        settings.rating,
        {"sigma_star": 0.1},
    )
    assert same == settings.rating and same is not settings.rating
    # rating=zerosumeval is a YAML over bradley_terry's schema: its values (not the schema's
    # defaults: seed 0, scale logit) come with it, and the entry's keys go over them
    assert type(zse).__name__ == "BradleyTerryConfig" and (zse.seed, zse.scale, zse.bootstrap) == (1, "zerosumeval", 50)
    assert tied.draw_margin == pytest.approx(0.2)
    with pytest.raises(
        ConfigError,
        match=r"rerate\[0\] \(x\): rating='glicko' is invalid: give one of the rating "
        r"options: .*zerosumeval",
    ):
        rerate_settings([{"name": "x", "rating": "glicko"}], settings.rating)

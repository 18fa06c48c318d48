"""``skate view``: writes a run's viewer and says where, with a line for what the run lacks; a
sweep's folder and a file that is no folder are refused in one line (the viewer itself:
tests/report/test_viewer.py)."""

from __future__ import annotations

import shutil

from skate.cli.compose import compose_config
from skate.cli.view import main
from skate.runner import run_game
from skate.settings.options import build_settings


def test_view_writes_the_viewer_and_says_where(tmp_path, capsys):
    run = tmp_path / "run"
    run_game(
        build_settings(
            compose_config(
                [
                    "game=mathquiz",
                    "game.rounds=1",
                    "logger=none",
                    "report=false",
                    "print_table=false",
                    "events.replies=false",
                ]
            )
        ),
        run,
    )
    assert main([str(run), "--no-open"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "note: This run's replies were not kept (events.replies=false): showing its tasks, attempts and "
        "p(correct), without the answers behind them.",
        f"viewer: {run / 'viewer' / 'index.html'}",
    ]
    assert (run / "viewer" / "index.html").is_file() and (run / "viewer" / "assets" / "tabulator.min.js").is_file()
    # a sweep's folder: pointed to its jobs
    sweep = tmp_path / "sweep"
    shutil.copytree(run, sweep / "0")
    assert main([str(sweep)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a sweep's folder: give one of its jobs" in err
    # a file
    assert main([str(run / "events.jsonl")]) == 2
    assert "is not a folder" in capsys.readouterr().err

"""skate leaderboard: import, add, refit and show from the command line, and its one-line errors."""

from __future__ import annotations

import pytest

from skate.cli import commands, usage
from skate.cli.leaderboard import main


def test_import_add_refit_show(runs_to_bank, tmp_path, capsys):
    store = str(tmp_path / "board.db")
    assert "leaderboard" in commands() and "leaderboard" in usage()
    assert main(["import", str(runs_to_bank[0]), str(runs_to_bank[1]), "--store", store]) == 0
    out = capsys.readouterr().out
    assert out.count("mathquiz,") == 2 and "refitted" in out
    # a folder that holds no run is refused in one line; the runs beside it are still looked at
    assert main(["import", str(tmp_path), str(runs_to_bank[0]), "--store", store]) == 2
    out, err = capsys.readouterr()
    assert "on the board already, nothing changed" in out
    assert err.strip().startswith("skate leaderboard: ") and "no events.jsonl" in err and err.count("\n") == 1
    assert (
        main(
            [
                "add",
                "simulated:0.05",
                "--name",
                "last",
                "--store",
                store,
                "--runs-dir",
                str(tmp_path / "adds"),
                "--set-rounds",
                "1",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert out.startswith("last: rank 7 on the mathquiz board")  # weaker than the six (sim-novice: 0.3)
    assert main(["show", "--store", store, "--game", "mathquiz"]) == 0
    table = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert table[0].startswith("mathquiz: ") and table[-1].split()[1] == "last"
    assert main(["refresh", "--store", store, "--min-per-band", "0", "--runs-dir", str(tmp_path / "fresh")]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "mathquiz: 0 tasks retired",
        "mathquiz: every band of ability has enough tasks to ask; no game played",
    ]
    assert main(["refit", "--store", store]) == 0
    assert main(["show", "--store", store]) == 0
    shown = capsys.readouterr().out
    assert shown.count("rank  model") == 2 and "overall:" in shown and "last" in shown
    # --html also writes the whole board as one page (tests/leaderboard/test_page.py opens it)
    assert main(["show", "--store", store, "--game", "mathquiz", "--html", str(tmp_path / "page")]) == 0
    page = tmp_path / "page" / "index.html"
    assert capsys.readouterr().out.splitlines()[-1] == f"wrote {page}"
    assert page.read_text().count('<tr data-model="last">') == 2  # overall and mathquiz


@pytest.mark.parametrize(
    "args, message",
    [
        (["show"], "no leaderboard at"),
        (["add", "simulated:0.5"], "no leaderboard at"),
        (["import", "nowhere"], "no events.jsonl"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("skate leaderboard: ") and message in err and "\n" not in err

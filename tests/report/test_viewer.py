"""The game viewer's data (skate/report/viewer.py): every task and attempt of a run of each game
reachable, the counts as events.jsonl has them, the samples behind each estimate, the replies
behind each sample and attempt; and a folder that is not a run, one still being written, one from
an earlier skate and one whose replies were not kept, each opened with one line, the run left as
it was. Then the page itself, opened from its file in a real headless Chromium (the ``browser``
fixture of tests/conftest.py): the tables of each game, filters and sorting, a task's answers and
replies, rejected attempts with their reasons, thinking apart, and the links in and out of it."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import skate
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.players.config import LLMPlayerConfig
from skate.report.viewer import ASSETS, ViewerError, build_viewer
from skate.runlog.files import read_events
from skate.runlog.replies import unpack_samples
from skate.runner import run_game
from tests.conftest import REQUIRED_SANDBOXES  # noqa: F401  (PyJail's game needs a jail, as every game's test)

GAMES = {
    "cop": {"game.rounds": 2},
    "mathquiz": {"game.rounds": 2},
    "pyjail": {"game.rounds": 1},
    "scp": {"game.questions": 12, "game.rounds": 1},
}
BASE = {"report": False, "print_table": False, "estimator.n": 4}
# The fake server's cohort: a model that thinks (its thinking apart from its reply), one that
# writes a broken task half the time (rejected attempts with replies behind them), and a plain one.
FAKE = {
    "deep": FakeModel(0.8, thinking="reasoning_content"),
    "sloppy": FakeModel(0.5, {"placeholder": 0.5}),
    "plain": FakeModel(0.3),
}


def play(out: Path, game: str, values: dict | None = None) -> Path:
    run_game(skate.config(values={**BASE, **(values or {})}, game=game, logger="none", estimator="fixed_n"), out)
    return out


def fake_cohort(base: str) -> list[LLMPlayerConfig]:
    return [LLMPlayerConfig(name=n, model=f"hosted_vllm/{n}", api_base=base) for n in FAKE]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A small game of each kind with the simulated cohort, and a COP game of the fake server's models."""
    tmp = tmp_path_factory.mktemp("viewer")
    out = {game: play(tmp / game, game, values) for game, values in GAMES.items()}
    with FakeLLMServer(FAKE) as srv:
        out["llm"] = play(
            tmp / "llm",
            "cop",
            {
                "game.rounds": 2,
                "players.simulated": [],
                "players.llm": fake_cohort(srv.api_base),
                "llm.cache_dir": f"{tmp}/cache",
                "llm.structured": "off",
            },
        )
    return out


def pieces(viewer: Path, kind: str) -> list:
    """The bodies of a viewer's data pieces of one kind, in order."""
    out = []
    for f in sorted((viewer / "data").glob(f"{kind}-*.js")):
        text = f.read_text(encoding="utf-8")
        m = re.fullmatch(r'skateData\("(\w+)",(\d+),(.*)\);\n', text, re.S)
        assert m and m[1] == kind and int(m[2]) == len(out)
        out.append(json.loads(m[3]))
    return out


def records(viewer: Path, kind: str) -> dict:
    return {k: v for piece in pieces(viewer, kind) for k, v in piece.items()}


def rows(viewer: Path, kind: str) -> list:
    return [r for piece in pieces(viewer, kind) for r in piece]


def of(events, kind):
    return [e for e in events if e["event"] == kind]


@pytest.mark.parametrize("game", [*GAMES, "llm"])
def test_every_task_and_attempt_is_reachable_and_counted_as_the_log_has_it(runs, game):
    run = runs[game]
    page, notes = build_viewer(run)
    assert page == run / "viewer" / "index.html" and notes == []
    viewer = page.parent
    events = read_events(run)
    (meta,) = pieces(viewer, "meta")
    tasks, attempts = of(events, "task"), of(events, "attempt")
    assert meta["counts"]["tasks"] == len(tasks) > 0 and meta["counts"]["attempts"] == len(attempts)
    assert meta["counts"]["rejected"] == sum(not a["valid"] for a in attempts)
    assert meta["counts"]["estimates"] == len(of(events, "estimate"))
    # every task: a row, and a record (in the piece the row names) with every estimate of it
    task_rows, task_records = rows(viewer, "tasks"), pieces(viewer, "task")
    assert [r["id"] for r in task_rows] == [t["task_id"] for t in tasks]
    for r, t in zip(task_rows, tasks, strict=True):
        rec = task_records[r["d"]][r["id"]]
        assert (rec["prompt"], rec["answer"], rec["setter"], rec["round"]) == (
            t["prompt"],
            t["answer"],
            t["setter"],
            t["round"],
        )
        mine = [e for e in of(events, "estimate") if e["task_id"] == t["task_id"]]
        assert [(e["player"], e["p"], e["n"]) for e in rec["estimates"]] == [
            (e["player"], e["p"], e["n"]) for e in mine
        ]
    # every attempt, rejected ones with their reason and detail, each id once
    attempt_rows, attempt_records = rows(viewer, "attempts"), pieces(viewer, "attempt")
    assert len({r["id"] for r in attempt_rows}) == len(attempts) == len(attempt_rows)
    for r, a in zip(attempt_rows, attempts, strict=True):
        rec = attempt_records[r["d"]][r["id"]]
        assert (rec["player"], rec["round"], rec["valid"], rec["reason"], rec["detail"], rec["text"]) == (
            a["player"],
            a["round"],
            a["valid"],
            a.get("reason"),
            a.get("detail", ""),
            a["text"],
        )
    # the players' pages: each one's tasks set and attempts
    by = {p["name"]: p for p in meta["players"]}
    assert {n: by[n]["tasks"] for n in by} == {n: sum(t["setter"] == n for t in tasks) for n in by}
    assert {n: by[n]["attempts"] for n in by} == {n: sum(a["player"] == n for a in attempts) for n in by}


def test_each_simulated_answer_behind_an_estimate_is_shown(runs):
    viewer = build_viewer(runs["mathquiz"])[0].parent
    for rec in records(viewer, "task").values():
        assert rec["answer"] in rec["values"]  # the task's answers, the truth among them
        for e in rec["estimates"]:
            (drawn,) = e["drawn"]  # one line an estimate
            assert len(drawn["ok"]) == e["n"] and drawn["ok"].count("1") == e["correct"]
            picked = [s["answer"] for s in unpack_samples(drawn, rec["values"]) if s["ok"] is True]
            assert all(
                rec["answer"] in p for p in picked
            )  # what the simulated player wrote; a right one holds the truth


def test_a_jail_s_record_shows_each_attack_session_and_its_tries(runs):
    viewer = build_viewer(runs["pyjail"])[0].parent
    sessions = [d for rec in records(viewer, "task").values() for e in rec["estimates"] for d in e["drawn"]]
    assert sessions and all(len(d["tries"]) == len(d["ok"]) for d in sessions)
    tries = [t for d in sessions for s in d["tries"] for t in s]
    assert tries and all({"input", "verdict"} <= set(t) for t in tries)
    assert any(t["verdict"] == "captured" for t in tries) and any(t["verdict"] != "captured" for t in tries)


def test_model_replies_are_shown_behind_answers_and_attempts_with_thinking_apart(runs):
    viewer = build_viewer(runs["llm"])[0].parent
    tasks = records(viewer, "task")
    for rec in tasks.values():
        for e in rec["estimates"]:
            keys = {f"{s['call']}:{s['index']}" for d in e["drawn"] for s in unpack_samples(d, rec["values"])}
            assert keys and keys == set(e["replies"])  # every sample's reply, none without a sample
            assert all(r["text"] for r in e["replies"].values())
            thinks = [r for r in e["replies"].values() if "thinking" in r]
            assert bool(thinks) == (e["player"] == "deep")
            assert all(r["thinking"] not in r["text"] for r in thinks)
    attempts = records(viewer, "attempt")
    rejected = [a for a in attempts.values() if not a["valid"]]
    assert rejected and all(a["replies"] and a["replies"][0]["text"] for a in rejected)
    assert all(a["shown"] is not None for a in attempts.values())


def tree(folder: Path) -> dict:
    """Every file of a folder but its viewer, with its bytes' digest and its modification time."""
    return {
        str(p.relative_to(folder)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "viewer" not in p.relative_to(folder).parts
    }


def view(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "skate", "view", str(folder), "--no-open"], capture_output=True, text=True, timeout=120
    )


def test_a_folder_that_is_not_a_run_gets_one_line(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ViewerError, match="has no events.jsonl: give the folder of a run"):
        build_viewer(tmp_path)
    done = view(tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "has no events.jsonl" in done.stderr
    missing = view(tmp_path / "nowhere")
    assert missing.returncode == 2 and "is not a folder" in missing.stderr
    (tmp_path / "events.jsonl").write_text('{"event": "round_start", "round": 1}\n')
    with pytest.raises(ViewerError, match="does not start with run_start"):
        build_viewer(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["events.jsonl", "notes.txt"]


def copy_run(src: Path, dst: Path) -> Path:
    dst.mkdir()
    for f in src.iterdir():
        if f.is_file():
            (dst / f.name).write_bytes(f.read_bytes())
    return dst


def test_a_run_still_being_written_shows_its_finished_rounds(runs, tmp_path):
    run = copy_run(runs["cop"], tmp_path / "live")
    lines = (run / "events.jsonl").read_text().splitlines(keepends=True)
    first_round = next(i for i, line in enumerate(lines) if '"round_end"' in line)
    (run / "events.jsonl").write_text("".join(lines[: first_round + 3]) + lines[first_round + 3][:20])  # torn
    before = tree(run)
    done = view(run)
    assert done.returncode == 0, done.stderr
    (note,) = [line for line in done.stdout.splitlines() if line.startswith("note: ")]
    assert "has not ended" in note and "1 finished round " in note
    assert tree(run) == before
    (meta,) = pieces(run / "viewer", "meta")
    assert meta["notes"] == [note.removeprefix("note: ")] and meta["played"] == 1


def test_a_run_from_an_earlier_skate_and_one_without_replies_say_so(runs, tmp_path):
    old = copy_run(runs["mathquiz"], tmp_path / "old")
    (old / "replies.jsonl").unlink()
    lines = (old / "events.jsonl").read_text().splitlines(keepends=True)
    first = json.loads(lines[0])
    del first["config"]["events"]["replies"]
    (old / "events.jsonl").write_text(json.dumps(first) + "\n" + "".join(lines[1:]))
    before = tree(old)
    _, notes = build_viewer(old)
    assert notes == [
        "This run was recorded by an earlier skate, before replies were kept: showing its tasks, "
        "attempts and p(correct), without the answers behind them."
    ]
    assert tree(old) == before
    assert len(rows(old / "viewer", "tasks")) == len(of(read_events(old), "task"))
    off = play(tmp_path / "off", "mathquiz", {**GAMES["mathquiz"], "events.replies": False})
    assert not (off / "replies.jsonl").exists()
    _, notes = build_viewer(off)
    assert notes == [
        "This run's replies were not kept (events.replies=false): showing its tasks, attempts and "
        "p(correct), without the answers behind them."
    ]


def test_writing_it_again_replaces_only_the_viewer(runs):
    run = runs["cop"]
    build_viewer(run)
    before = tree(run)
    (run / "viewer" / "stale.txt").write_text("from an earlier viewer")
    build_viewer(run)
    assert not (run / "viewer" / "stale.txt").exists() and tree(run) == before
    assert not [p for p in run.iterdir() if p.name.startswith(".viewer")]


def test_the_vendored_table_library_is_the_one_its_note_names():
    note = (ASSETS / "VENDORED.md").read_text()
    for name in ("tabulator.min.js", "tabulator.min.css"):
        digest = hashlib.sha256((ASSETS / name).read_bytes()).hexdigest()
        assert f"| `{name}` |" in note and digest in note
    assert (ASSETS / "tabulator.LICENSE").read_text().startswith("The MIT License")
    assert "Tabulator v6.5.3" in (ASSETS / "tabulator.min.js").read_text()[:100]


def test_the_report_writes_the_viewer_and_links_it(runs):
    from skate.report import build_report

    page = build_report(runs["mathquiz"])
    assert 'href="../viewer/index.html"' in page.read_text()
    (meta,) = pieces(runs["mathquiz"] / "viewer", "meta")
    assert meta["report"] is True  # and the viewer links the report back


# ------------------------------------------------------------------------------ in the browser
@pytest.fixture
def open_viewer(browser):
    """Open a run's viewer from its file at ``hash``; every error and every request for anything
    outside its viewer folder is gathered in ``problems``."""
    opened = []

    def go(run: Path, hash: str = "", wait: str = "all"):
        viewer = run / "viewer"
        if not (viewer / "index.html").exists():
            build_viewer(run)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        problems: list[str] = []
        page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
        page.on("pageerror", lambda e: problems.append(f"error: {e}"))
        page.on("request", lambda r: r.url.startswith(viewer.as_uri() + "/") or problems.append(f"request: {r.url}"))
        page.goto((viewer / "index.html").as_uri() + hash)
        page.wait_for_selector(f"body[data-ready={wait}]", timeout=15_000)
        opened.append(page)
        return page, problems

    yield go
    for page in opened:
        page.close()


def table_ids(page, which: str) -> list[str]:
    return page.eval_on_selector_all(
        f"#{which}-table .tabulator-row .tabulator-cell:first-child", "cells => cells.map(c => c.textContent)"
    )


def row_count(page, which: str) -> int:
    return page.evaluate(f"S.tables.{which}.getDataCount('active')")


@pytest.mark.parametrize("game", [*GAMES, "llm"])
def test_each_game_s_viewer_opens_with_its_tables_and_a_task_s_answers(runs, open_viewer, game):
    page, problems = open_viewer(runs[game])
    events = read_events(runs[game])
    tasks, attempts = of(events, "task"), of(events, "attempt")
    assert row_count(page, "tasks") == len(tasks) and row_count(page, "attempts") == len(attempts)
    assert page.locator("#summary").text_content().startswith(f"{len(tasks):,} tasks")
    # open the first task from its row: each player's p, and the answers behind them
    first = tasks[0]
    page.locator("#tasks-table .tabulator-row a", has_text=first["task_id"]).first.click()
    task = page.locator(f'article.task[data-task="{first["task_id"]}"]')
    task.wait_for(timeout=10_000)
    assert task.locator("pre.prompt").text_content() == first["prompt"]
    assert task.locator("pre.truth").text_content() == first["answer"]
    estimates = [e for e in of(events, "estimate") if e["task_id"] == first["task_id"]]
    shown = task.locator("table.estimates tr[data-player]")
    assert shown.count() == len(estimates)
    box = task.locator("details.player-answers").first
    assert box.locator("details.sample").count() == 0  # drawn when opened
    box.locator("> summary").click()
    page.wait_for_selector('details.player-answers[data-filled="1"]')
    samples = box.locator("details.sample")
    assert samples.count() == estimates[0]["n"]
    assert problems == []


def test_filters_and_sorting_narrow_and_order_the_tasks(runs, open_viewer):
    page, problems = open_viewer(runs["cop"])
    events = read_events(runs["cop"])
    tasks = of(events, "task")
    setter = tasks[0]["setter"]
    page.select_option("#task-filters select[name=setter]", setter)
    mine = [t["task_id"] for t in tasks if t["setter"] == setter]
    assert sorted(table_ids(page, "tasks")) == sorted(mine)
    assert page.url.endswith("#tasks?setter=" + setter)  # a link to this view
    page.select_option("#task-filters select[name=setter]", "")
    page.select_option("#task-filters select[name=round]", "2")
    assert sorted(table_ids(page, "tasks")) == sorted(t["task_id"] for t in tasks if t["round"] == 2)
    page.select_option("#task-filters select[name=round]", "")
    # by mean p, highest first: two clicks on its header
    header = page.locator('#tasks-table .tabulator-col[tabulator-field="mean"] .tabulator-col-title')
    header.click()
    header.click()
    means = page.evaluate("S.tables.tasks.getData('active').map(r => r.mean)")
    assert means == sorted(means, reverse=True)
    # text, and an answerer's own p as a column
    page.fill("#task-filters input[name=text]", tasks[1]["task_id"])
    assert table_ids(page, "tasks") == [tasks[1]["task_id"]]
    page.fill("#task-filters input[name=text]", "")
    answerer = of(events, "estimate")[0]["player"]
    page.select_option("#task-filters select[name=answerer]", answerer)
    assert page.locator('#tasks-table .tabulator-col[tabulator-field="p"]').is_visible()
    assert problems == []


def test_rejected_attempts_show_their_reason_and_the_reply_behind_them(runs, open_viewer):
    page, problems = open_viewer(runs["llm"])
    attempts = of(read_events(runs["llm"]), "attempt")
    rejected = [a for a in attempts if not a["valid"]]
    page.locator("#tabs a[data-view=attempts]").click()
    page.select_option("#attempt-filters select[name=status]", "rejected")
    assert row_count(page, "attempts") == len(rejected) > 0
    reason = rejected[0]["reason"]
    page.select_option("#attempt-filters select[name=status]", "rejected: " + reason)
    assert row_count(page, "attempts") == sum(a["reason"] == reason for a in rejected)
    page.locator("#attempts-table .tabulator-row a").first.click()
    attempt = page.locator("article.attempt")
    attempt.wait_for(timeout=10_000)
    assert reason in attempt.locator("h2").text_content()
    assert attempt.locator("pre.why").text_content() == rejected[0]["detail"]
    assert attempt.locator(".reply pre.reply-text").first.text_content()  # what the model wrote
    assert "what the setter was shown" in attempt.text_content()
    # a retry: the rejections of its earlier attempts that round, each linked
    retry = next(
        (
            a
            for a in attempts
            if a["attempt"] > 1
            and any(
                b["round"] == a["round"]
                and b["player"] == a["player"]
                and b["attempt"] < a["attempt"]
                and not b["valid"]
                for b in attempts
            )
        ),
        None,
    )
    assert retry is not None
    page.evaluate(f"location.hash = 'attempt=r{retry['round']:03d}-{retry['player']}-a{retry['attempt']}'")
    told = page.locator("article.attempt ul.told li")
    told.first.wait_for()
    assert told.count() == retry["attempt"] - 1
    assert problems == []


def test_a_model_that_thinks_shows_its_thinking_apart_from_its_reply(runs, open_viewer):
    viewer = build_viewer(runs["llm"])[0].parent
    task = next(
        t for t in records(viewer, "task").values() if any(e["player"] == "deep" and e["drawn"] for e in t["estimates"])
    )
    page, problems = open_viewer(runs["llm"], "#task=" + task["id"])
    box = page.locator('details.player-answers[data-player="deep"]')
    box.locator("> summary").click()
    page.wait_for_selector('details.player-answers[data-player="deep"][data-filled="1"]')
    sample = box.locator("details.sample").first
    sample.locator("> summary").click()
    thinking = sample.locator("details.thinking pre.thinking")
    reply = sample.locator("pre.reply-text")
    assert thinking.count() == 1 and reply.count() == 1
    thought, said = thinking.text_content(), reply.text_content()
    assert "Draft:" in thought and said and thought not in said and "Draft:" not in said
    plain = page.locator('details.player-answers[data-player="plain"]')
    plain.locator("> summary").click()
    page.wait_for_selector('details.player-answers[data-player="plain"][data-filled="1"]')
    assert plain.locator("details.sample").count() > 0 and plain.locator("details.thinking").count() == 0
    assert problems == []


def test_a_player_s_page_and_the_matrix_lead_to_the_tasks_behind_a_cell(runs, open_viewer):
    page, problems = open_viewer(runs["mathquiz"], "#matrix")
    events = read_events(runs["mathquiz"])
    tasks = of(events, "task")
    setter, answerer = tasks[0]["setter"], of(events, "estimate")[-1]["player"]
    page.locator(f'table.matrix tr[data-answerer="{answerer}"] td[data-setter="{setter}"] a').click()
    page.wait_for_selector("#view-tasks:not([hidden])")
    assert sorted(table_ids(page, "tasks")) == sorted(t["task_id"] for t in tasks if t["setter"] == setter)
    page.goto(page.url.split("#")[0] + "#player=" + setter)
    player = page.locator(f'article.player[data-player="{setter}"]')
    player.wait_for()
    assert player.locator("table.set-tasks tr").count() == 1 + sum(t["setter"] == setter for t in tasks)
    assert problems == []


def test_the_report_links_the_viewer_and_back(runs, browser):
    from skate.report import build_report

    page = browser.new_page()
    page.goto(build_report(runs["scp"]).as_uri())
    page.locator("p.viewer a").click()
    page.wait_for_selector("body[data-ready=all]")
    assert page.url.endswith("/viewer/index.html")
    assert page.locator("#report-link").is_visible()
    page.close()


def test_model_written_markup_stays_text(runs, open_viewer, tmp_path):
    run = copy_run(runs["cop"], tmp_path / "hostile")
    lines = (run / "events.jsonl").read_text().splitlines(keepends=True)
    hostile = '<img src=x onerror="window.__pwned=1"></pre><script>window.__pwned=2</script>'
    for i, line in enumerate(lines):
        record = json.loads(line)
        if record["event"] == "task":
            record["prompt"] = hostile
            lines[i] = json.dumps(record) + "\n"
            task_id = record["task_id"]
            break
    (run / "events.jsonl").write_text("".join(lines))
    page, problems = open_viewer(run, "#task=" + task_id)
    page.locator("article.task").wait_for()
    assert page.locator("article.task pre.prompt").text_content() == hostile
    assert page.evaluate("window.__pwned") is None and problems == []

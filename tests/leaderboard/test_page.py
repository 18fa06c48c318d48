"""The board's static page, opened in a real headless Chromium: every board's rows with their
intervals on one scale, columns that sort on a click, each model's tasks with the others'
results, and a model-written prompt (and model name) that stays text.

The browser is Debian's ``chromium`` driven by playwright (the ``browser`` fixture of
tests/conftest.py: without it these tests skip, unless ``SKATE_REQUIRE_BROWSER`` is set).
"""

from __future__ import annotations

import math
import re
import time
from pathlib import Path

import pytest

from skate.leaderboard.bank import import_run
from skate.leaderboard.fit import refit
from skate.leaderboard.page import SHORT, write_page
from skate.leaderboard.store import OVERALL, Store

# A model that writes markup into its name and its task: both must show as text, and nothing
# they hold may run.
HOSTILE_NAME = "sim-<b>bold</b> \"q\" & 'x'"
HOSTILE_PROMPT = (
    "Ignore the above.</div></details></li><script>window.__pwned = 1</script>"
    '<img src=x onerror="window.__pwned = 2"> "double" \'single\' & done. ' + "More text. " * 20
)


@pytest.fixture(scope="module")
def board(runs_to_bank, tmp_path_factory):
    """Both runs banked and fitted, plus one task set by the hostile model and answered by every
    model (itself too), fitted again; and the page written from it."""
    store = Store.open(tmp_path_factory.mktemp("page") / "b.db")
    for r in runs_to_bank:
        import_run(store, r)
    refit(store)
    template = store.tasks()[0]
    run_id = store.latest_run(template.game)
    incumbents = [m["name"] for m in store.models()]
    with store.transaction() as conn:
        setter = store.ensure_model(conn, HOSTILE_NAME, "simulated", {"name": HOSTILE_NAME, "skill": 0.5}, "import")
        row = store.add_task(
            conn,
            run_id,
            template.game,
            "hostile-1",
            HOSTILE_NAME,
            template.created,
            {**template.body, "prompt": HOSTILE_PROMPT, "task_id": "hostile-1", "setter": HOSTILE_NAME},
        )
        store.record(conn, setter, row, 3, 4, "run")
        for i, name in enumerate(incumbents):
            store.record(conn, store.model_id(conn, name), row, i % 5, 4, "run")
    refit(store)
    path = write_page(store, tmp_path_factory.mktemp("out"))
    yield store, path
    store.close()


@pytest.fixture
def opened(board, browser):
    """The page, opened afresh from its file, and every problem seen meanwhile: errors in the
    console or thrown by a script, and any request for something other than the page itself."""
    _, path = board
    url = path.as_uri()
    page = browser.new_page()
    problems: list[str] = []
    page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"error: {e}"))
    page.on("request", lambda r: r.url != url and problems.append(f"request: {r.url}"))
    page.goto(url)
    yield page, problems
    page.close()


ROWS = """table => Array.from(table.tBodies[0].rows, tr => ({
    model: tr.querySelector("td.model").textContent,
    rank: tr.querySelector("td.rank").textContent,
    score: parseFloat(tr.querySelector("td.score").dataset.sort),
    bounds: tr.querySelector("td.interval .bounds").textContent,
    width: parseFloat(tr.querySelector("td.interval").dataset.sort),
    x0: parseFloat(tr.querySelector("svg.bar rect").getAttribute("x")),
    w: parseFloat(tr.querySelector("svg.bar rect").getAttribute("width")),
    tasks: parseInt(tr.querySelector("td.tasks").textContent)}))"""


def table(page, game: str):
    return page.locator(f'section.board[data-game="{game}"] table')


def test_the_page_loads_alone_and_runs_only_its_own_script(opened, board):
    page, problems = opened
    store, path = board
    assert page.title() == "skate leaderboard"
    assert page.evaluate("document.scripts.length") == 1
    # what it holds and when it was fitted
    counts = store.counts()
    summary = page.locator("#summary").text_content()
    assert f"{counts['models']} models, {counts['tasks']} tasks" in summary
    latest = max(store.board(g)[0]["at"] for g in [OVERALL, *store.games()])
    assert page.locator("#summary time").get_attribute("datetime") == time.strftime(
        "%Y-%m-%dT%H:%M:%SZ", time.gmtime(latest)
    )
    assert problems == []


def test_every_board_lists_each_of_its_models_with_its_interval_on_one_scale(opened, board):
    page, problems = opened
    store, _ = board
    games = [OVERALL, *store.games()]
    assert [page.locator("section.board").nth(i).get_attribute("data-game") for i in range(len(games))] == games
    for game in games:
        _, want = store.board(game)
        got = table(page, game).evaluate(ROWS)
        assert HOSTILE_NAME in [r["model"] for r in want]
        assert [r["model"] for r in got] == [r["model"] for r in want]  # by rank, as fitted
        for g, w in zip(got, want, strict=True):
            assert g["bounds"] == f"[{w['lo']:.2f}, {w['hi']:.2f}]"
            assert g["tasks"] == w["tasks"] and g["rank"] == str(w["rank"])
            assert math.isclose(g["score"], w["score"])
        # each bar's ends are one linear map of its bounds, the same for every row of the board
        lo = min(w["lo"] for w in want)
        hi = max(w["hi"] for w in want)
        x_lo = min(g["x0"] for g in got)
        x_hi = max(g["x0"] + g["w"] for g in got)
        scale = (x_hi - x_lo) / (hi - lo)
        assert scale > 0
        for g, w in zip(got, want, strict=True):
            assert g["x0"] == pytest.approx(x_lo + (w["lo"] - lo) * scale, abs=0.05)
            assert g["x0"] + g["w"] == pytest.approx(x_lo + (w["hi"] - lo) * scale, abs=0.05)
    assert problems == []


def test_a_click_on_a_header_sorts_by_it_ascending_then_descending(opened, board):
    page, problems = opened
    store, _ = board
    game = store.games()[0]
    scores = {r["model"]: r["score"] for r in store.board(game)[1]}
    t = table(page, game)
    heads = t.locator("thead th")
    assert t.locator("th", has_text="rank").get_attribute("aria-sort") == "ascending"
    for direction in ("ascending", "descending"):
        t.get_by_role("button", name="score").click()
        rows = t.evaluate(ROWS)
        got = [r["score"] for r in rows]
        assert got == sorted(got, reverse=direction == "descending") and len(got) == len(scores)
        assert (
            rows[0]["model"] == min(scores, key=scores.get) if direction == "ascending" else max(scores, key=scores.get)
        )
        assert {r["model"]: r["score"] for r in rows} == pytest.approx(scores)  # rows moved whole
        assert [heads.nth(i).get_attribute("aria-sort") for i in range(5)] == [
            "none",
            "none",
            direction,
            "none",
            "none",
        ]
    t.get_by_role("button", name="interval").click()
    widths = [r["width"] for r in t.evaluate(ROWS)]
    assert widths == sorted(widths)
    assert t.locator("th", has_text="score").get_attribute("aria-sort") == "none"
    assert problems == []


def test_a_model_written_prompt_and_name_stay_text(opened, board):
    page, problems = opened
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("img").count() == 0 and page.locator("b").count() == 0
    task = page.locator("li.task", has_text="hostile-1")
    assert task.count() == 1
    full = task.locator(".full")
    assert full.text_content() == HOSTILE_PROMPT
    # a long prompt starts shortened; its whole text opens on a click
    assert task.locator("summary").text_content() == HOSTILE_PROMPT[:SHORT].rstrip() + "…"
    assert not full.is_visible()
    task.locator("summary").click()
    assert full.is_visible()
    assert page.locator("section.model h3").all_text_contents().count(HOSTILE_NAME) == 1
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert problems == []


SECTIONS = """() => Array.from(document.querySelectorAll("section.model"), s => ({
    model: s.querySelector("h3").textContent,
    tasks: Array.from(s.querySelectorAll("li.task"), li => ({
        id: parseInt(li.dataset.task),
        results: Array.from(li.querySelectorAll("ul.results li[data-model]"),
                            r => [r.querySelector(".who").textContent, r.querySelector(".score").textContent])}))}))"""


def test_each_model_lists_the_tasks_it_set_with_how_the_others_did(opened, board):
    page, problems = opened
    store, _ = board
    shown = {s["model"]: s["tasks"] for s in page.evaluate(SECTIONS)}
    assert set(shown) == {m["name"] for m in store.models()}
    tasks = store.tasks()
    responses = store.responses()
    difficulty = {t.id: t.difficulty for t in tasks}
    for name, listed in shown.items():
        mine = [t for t in tasks if t.setter == name]
        assert sorted(t["id"] for t in listed) == sorted(t.id for t in mine)
        # hardest first (one game here)
        assert [difficulty[t["id"]] for t in listed] == sorted((difficulty[t["id"]] for t in listed), reverse=True)
        rank = {r["model"]: r["rank"] for r in store.board(mine[0].game)[1]} if mine else {}
        for t in listed:
            want = {(r.model, f"{r.correct}/{r.samples}") for r in responses if r.task == t["id"] and r.model != name}
            assert {tuple(r) for r in t["results"]} == want and want
            ranks = [rank[m] for m, _ in t["results"]]
            assert ranks == sorted(ranks)  # the best ranked first
    # the hostile task: every incumbent's result, not its setter's own
    (hostile,) = shown[HOSTILE_NAME]
    assert {m for m, _ in hostile["results"]} == {m["name"] for m in store.models()} - {HOSTILE_NAME}
    assert problems == []


def test_the_file_escapes_every_text_and_loads_nothing(board):
    """Without a browser too: the written file holds the hostile texts only escaped."""
    _, path = board
    text = path.read_text(encoding="utf-8")
    assert "<script>window.__pwned" not in text and "<b>bold</b>" not in text
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in text
    # The one address out of the page: each banked task's link to its run's game viewer (a link: nothing loads)
    links = re.findall(r'<a class="viewer" href="(file://[^"#]+/viewer/index\.html)#task=[^"]+">', text)
    assert links and len(links) == text.count("://")
    text = re.sub(r'<a class="viewer" href="file://[^"]+">', "", text)
    assert text.count("<script") == 1 and "://" not in text
    assert re.search(r"<[a-z][^<>]*\s(src|href)=", text.replace('href="#model-', "")) is None


def test_a_banked_task_links_to_its_run_s_viewer_on_that_task(board, browser):
    store, path = board
    page = browser.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(f"error: {e}"))
    page.goto(path.as_uri())
    banked = next(t for t in store.tasks() if t.task_id != "hostile-1")
    row = page.locator(f'li.task[data-task="{banked.id}"]')
    row.locator("a.viewer").click()
    page.wait_for_selector(f'article.task[data-task="{banked.task_id}"]', timeout=10_000)
    assert page.url.startswith(Path(store.run_paths()[banked.run_id], "viewer", "index.html").as_uri())
    assert page.locator("article.task h2").text_content().startswith(f"Task {banked.task_id}")
    assert problems == []
    page.close()

"""The report's question clusters (SKATE Fig. 8) and its ratings notes, on synthetic event logs:
tasks of three known topics (lists, dicts, strings) are found again by the hashing embedder and
k-means, each cluster is named by its topic's terms, each setter's shares add up to 1 and match
the counts; degenerate games (none, two tasks, one setter) give a page with a clear caption; a
ratings row with an ``unbounded`` note is flagged on the page and in the W&B table."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from skate.embedders import HashingEmbedder
from skate.report import build_report
from skate.report.clusters import choose_k, embedder_of, task_clusters
from skate.report.data import load_run
from skate.report.page import ratings_table
from skate.runlog.events import Estimated, RunEnded, RunStarted, TaskSet
from skate.runlog.files import EventLog
from skate.runlog.records import BENCHMARK

PLAYERS = ("ann", "bob", "cy")
HASHING = {"_target_": "skate.embedders.HashingEmbedder", "dim": 1024, "threshold": 0.2}
NOTE = "rating unbounded: 0 wins in 12 matches; the prior (rating.alpha=0.01) holds it at 755"


def topic_tasks(per: int = 8, seed: int = 0) -> list[tuple[str, str]]:
    """(topic, program) pairs: ``per`` programs about lists, dicts and strings each, in turn. The
    variable names are shared across topics, so only what the programs do tells them apart."""
    rng = np.random.default_rng(seed)
    names = ["alpha", "beta", "gamma", "delta", "omega", "theta", "kappa", "sigma", "rho", "tau"]
    out = []
    for i in range(per):
        v = names[i % len(names)]
        a, b, c = (int(x) for x in rng.integers(1, 9, 3))
        out.append(
            (
                "lists",
                f"{v}_items = [{a}, {b}, {c}]\n{v}_items.append({a + b})\n"
                f"{v}_items.sort(reverse=True)\n{v}_items.extend({v}_items[:{c % 3}])\n"
                f"print({v}_items.pop(), len({v}_items))",
            )
        )
        out.append(
            (
                "dicts",
                f"{v}_table = {{'k{a}': {b}, 'z': {c}}}\n{v}_table.update(w={a})\n"
                f"for key, val in sorted({v}_table.items()):\n    {v}_table.setdefault(key + '!', val)\n"
                f"print({v}_table.get('k{a}'), list({v}_table.keys())[:2])",
            )
        )
        out.append(
            (
                "strings",
                f"{v}_text = 'word{a} and more'\n{v}_text = {v}_text.upper().replace('W', 'v')\n"
                f"print({v}_text.split()[::-1], {v}_text.strip().lower().startswith('v'))",
            )
        )
    return out


def write_game(
    out: Path,
    tasks: list[tuple[str, str]],
    setters: list[str],
    players=PLAYERS,
    embedder: dict | None = HASHING,
    ratings: list[dict] | None = None,
) -> Path:
    """A finished run's events: each task set by its setter, every player's estimate of it."""
    rng = np.random.default_rng(1)
    out.mkdir(parents=True, exist_ok=True)
    config = {"embedder": embedder} if embedder is not None else {}
    with EventLog(out / "events.jsonl") as log:
        log.write(
            RunStarted(
                game="cop",
                rounds=len(tasks),
                players=[{"name": p, "kind": "simulated"} for p in players],
                aug="hist_perf",
                config=config,
            )
        )
        for i, ((_, prompt), setter) in enumerate(zip(tasks, setters, strict=True)):
            log.write(TaskSet(task_id=f"t{i}", round=i // len(players) + 1, setter=setter, prompt=prompt, answer="0"))
            for player in players:
                p = float(rng.integers(0, 11)) / 10
                log.write(Estimated(task_id=f"t{i}", round=1, player=player, p=p, n=10, correct=round(10 * p)))
        log.write(RunEnded(ratings=ratings if ratings is not None else [], summary={"tasks": len(tasks)}))
    return out


def mixed_setters(n: int, seed: int = 3) -> list[str]:
    """A setter for each of ``n`` tasks, drawn at random (so no setter keeps to one topic)."""
    rng = np.random.default_rng(seed)
    return [PLAYERS[int(i)] for i in rng.integers(0, len(PLAYERS), n)]


@pytest.fixture(scope="module")
def topics_run(tmp_path_factory) -> tuple[Path, list[tuple[str, str]], list[str]]:
    tasks = topic_tasks()
    setters = mixed_setters(len(tasks))
    ratings = [
        {"player": "ann", "score": 30.1, "rank": 1, "mu": 30.1, "sigma": 2.0},
        {"player": "bob", "score": 25.0, "rank": 2, "mu": 25.0, "sigma": 2.0},
        {"player": "cy", "score": 12.5, "rank": 3, "mu": 12.5, "sigma": 4.1, "unbounded": NOTE},
    ]
    out = write_game(tmp_path_factory.mktemp("topics"), tasks, setters, ratings=ratings)
    return out, tasks, setters


@pytest.fixture(scope="module")
def topics_page(topics_run) -> str:
    return build_report(topics_run[0]).read_text()


def test_k_means_finds_the_three_topics_and_names_each_by_its_terms(topics_run):
    out, tasks, setters = topics_run
    c = task_clusters(load_run(out))
    assert c.k == 3 and c.tried == list(range(2, 9)) and c.silhouette > 0.3
    assert c.embedder == "the run's embedder (HashingEmbedder)"
    topic = [t for t, _ in tasks]
    cluster_of = dict(zip(c.tasks["task_id"], c.tasks["cluster"], strict=True))
    found = {t: {cluster_of[f"t{i}"] for i, ti in enumerate(topic) if ti == t} for t in ("lists", "dicts", "strings")}
    assert all(len(v) == 1 for v in found.values())  # each topic in one cluster ...
    assert len({next(iter(v)) for v in found.values()}) == 3  # ... and each in its own
    terms = dict(zip(c.table["cluster"], c.table["terms"], strict=True))
    assert "append" in terms[next(iter(found["lists"]))]
    assert "items" in terms[next(iter(found["dicts"]))] or "setdefault" in terms[next(iter(found["dicts"]))]
    assert "upper" in terms[next(iter(found["strings"]))] or "split" in terms[next(iter(found["strings"]))]
    assert list(c.table["tasks"]) == [8, 8, 8] and list(c.table["cluster"]) == [1, 2, 3]


def test_each_setter_s_shares_add_up_to_one_and_match_the_counts(topics_run):
    out, tasks, setters = topics_run
    c = task_clusters(load_run(out))
    assert c.setters == list(PLAYERS)
    assert list(c.table.columns) == ["cluster", "terms", "tasks", "example", *PLAYERS]
    for setter in PLAYERS:
        assert c.table[setter].sum() == pytest.approx(1.0)
    cluster_of = dict(zip(c.tasks["task_id"], c.tasks["cluster"], strict=True))
    for _, row in c.table.iterrows():  # share = the setter's tasks in the cluster / the setter's tasks
        for setter in PLAYERS:
            mine = [i for i, s in enumerate(setters) if s == setter]
            inside = sum(1 for i in mine if cluster_of[f"t{i}"] == row["cluster"])
            assert row[setter] == pytest.approx(inside / len(mine))
    again = task_clusters(load_run(out))  # fixed random_state: the same clusters every time
    pd.testing.assert_frame_equal(again.table, c.table)
    assert list(again.tasks["cluster"]) == list(c.tasks["cluster"])


def test_the_page_embeds_the_figure_and_the_table_and_exports_them(topics_run, topics_page):
    out, _, _ = topics_run
    shown = dict(
        re.findall(r'<img alt="([a-z_]+\.png)" src="data:image/png;base64,[^"]*"><figcaption>([^<]*)<', topics_page)
    )
    assert (
        "Fig. 8" in shown["question_clusters.png"] and "k=3: the best mean silhouette" in shown["question_clusters.png"]
    )
    assert (out / "report" / "question_clusters.png").stat().st_size > 10000
    assert "<h2>Question clusters (SKATE Fig. 8)</h2>" in topics_page and "append" in topics_page
    table = pd.read_csv(out / "report" / "question_clusters.csv")
    assert list(table["tasks"]) == [8, 8, 8] and table[list(PLAYERS)].sum().tolist() == pytest.approx([1, 1, 1])
    assigned = pd.read_csv(out / "report" / "task_clusters.csv")
    assert len(assigned) == 24 and set(assigned["cluster"]) == {1, 2, 3}
    assert "<code>question_clusters.csv</code>" in topics_page


def test_an_unbounded_rating_is_flagged_on_the_page_and_the_others_are_not(topics_page):
    ratings = topics_page.split("<h2>Ratings</h2>", 1)[1].split("<h2>", 1)[0]
    assert '<td>cy<sup><a href="#unbounded-1">1</a></sup></td>' in ratings
    assert '<li id="unbounded-1">cy: ' + NOTE.replace("'", "&#x27;") in ratings
    assert "<td>ann</td>" in ratings and "<td>bob</td>" in ratings  # nothing extra on the others
    assert ">unbounded<" not in ratings  # a footnote, not a column
    assert ratings.count("<sup>") == 1


def test_a_ratings_table_without_notes_is_unchanged_and_text_is_escaped():
    plain = ratings_table([{"player": "a<b>", "score": 1.23456, "rank": 1}, {"player": "c", "score": None, "rank": 2}])
    assert "a&lt;b&gt;" in plain and "1.235" in plain and "–" in plain
    assert "<sup>" not in plain and "<ol" not in plain
    two = ratings_table(
        [
            {"player": "x", "unbounded": "no losses"},
            {"player": "y", "unbounded": None},
            {"player": "z", "unbounded": "no wins <1>"},
        ]
    )
    assert '<li id="unbounded-1">x: no losses</li><li id="unbounded-2">z: no wins &lt;1&gt;</li>' in two
    assert "<td>y</td>" in two


@pytest.mark.parametrize("case", ["empty", "two tasks", "one setter", "built benchmark"])
def test_degenerate_games_give_a_page_with_a_clear_caption(tmp_path, case):
    tasks = topic_tasks(per=2)
    if case == "empty":
        tasks, setters = [], []
    elif case == "two tasks":
        tasks, setters = tasks[:2], ["ann", "bob"]
    elif case == "one setter":
        setters = ["ann"] * len(tasks)
    else:
        setters = [BENCHMARK] * len(tasks)
    out = write_game(tmp_path / "run", tasks, setters)
    c = task_clusters(load_run(out))
    page = build_report(out).read_text()
    section = page.split("<h2>Question clusters (SKATE Fig. 8)</h2>", 1)[1]
    if case == "empty":
        assert c.k == 0 and "no valid task: nothing to cluster" in section
        assert not (out / "report" / "question_clusters.png").exists()
        assert not (out / "report" / "question_clusters.csv").exists()
    elif case == "two tasks":
        assert c.k == 1 and c.silhouette is None and list(c.table["tasks"]) == [2]
        assert "Only 2 valid tasks: too few to cluster" in section
        assert c.table[["ann", "bob"]].iloc[0].tolist() == [1.0, 1.0]
    elif case == "one setter":
        assert c.setters == ["ann"] and c.table["ann"].sum() == pytest.approx(1.0)
        assert "One setter (ann)" in section and 'alt="question_clusters.png"' in section
    else:
        assert c.setters == [BENCHMARK] and c.table[BENCHMARK].sum() == pytest.approx(1.0)
        assert "No player set these tasks (a built benchmark)" in section


def test_identical_tasks_make_one_group():
    vectors = HashingEmbedder().embed(["print(1)"] * 5)
    labels, silhouette, tried = choose_k(vectors)
    assert labels.tolist() == [0] * 5 and silhouette is None and tried == []


def test_the_run_s_embedder_is_built_from_its_config_and_one_that_calls_a_model_is_replaced(tmp_path, monkeypatch):
    small = {**HASHING, "dim": 64}
    d = load_run(write_game(tmp_path / "a", topic_tasks(per=1), ["ann", "bob", "cy"], embedder=small))
    emb, named = embedder_of(d)
    assert isinstance(emb, HashingEmbedder) and emb.dim == 64 and named == "the run's embedder (HashingEmbedder)"
    monkeypatch.setenv("SKATE_TEST_EMBEDDING_KEY", "not-a-key")  # built (no call is made), then set aside
    d.start["config"]["embedder"] = {
        "_target_": "skate.embedders.OpenAIEmbedder",
        "model": "openai/text-embedding-3-small",
        "threshold": 0.336,
        "api_key_env": "SKATE_TEST_EMBEDDING_KEY",
    }
    emb, named = embedder_of(d)
    assert isinstance(emb, HashingEmbedder) and "calls a model" in named
    d.start["config"]["embedder"] = {"_target_": "skate.embedders.HashingEmbedder", "dim": 4}  # too small: refused
    emb, named = embedder_of(d)
    assert isinstance(emb, HashingEmbedder) and "cannot run here" in named and "embedder.dim=4" in named
    d.start["config"] = {}
    assert "names no embedder" in embedder_of(d)[1]
    assert "HashingEmbedder" not in task_clusters(d).embedder  # the caption says which one was used


def test_the_wandb_ratings_table_puts_the_unbounded_note_last_and_leaves_the_others_empty():
    import wandb

    from skate.loggers.wandb_logger import ratings_table as wandb_ratings

    t = wandb_ratings(
        wandb, [{"player": "a", "rank": 1, "score": 3.0}, {"player": "b", "rank": 2, "score": 1.0, "unbounded": NOTE}]
    )
    assert t.columns == ["player", "rank", "score", "unbounded"]
    assert [row[-1] for row in t.data] == ["", NOTE]
    assert wandb_ratings(wandb, [{"player": "a", "rank": 1}]).columns == ["player", "rank"]


def test_a_game_without_a_report_never_loads_scikit_learn_or_matplotlib(tmp_path):
    """``report=false``: skate.report (and the sweep callback) stay light, so neither the
    clustering's scikit-learn nor the plots' matplotlib is imported."""
    import subprocess
    import sys

    code = (
        "import sys\nimport skate\nfrom skate.runner import run_game\n"
        "import skate.cli.callbacks\n"
        f"run_game(skate.config(values={{'game.rounds': 1, 'report': False}}, logger='none'), {str(tmp_path / 'run')!r})\n"
        "print(sorted(m for m in ('sklearn', 'matplotlib', 'skate.report.clusters') if m in sys.modules))"
    )
    res = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip().splitlines()[-1] == "[]"
    assert (tmp_path / "run" / "events.jsonl").exists() and not (tmp_path / "run" / "report").exists()


def test_a_minilm_run_is_clustered_with_minilm(tmp_path):
    """embedder=minilm (when its weights are installed here): the report embeds with it too."""
    from skate.embedders import EmbedderUnavailable, build_embedder
    from skate.embedders.config import MiniLMEmbedderConfig

    minilm = {
        "_target_": "skate.embedders.MiniLMEmbedder",
        "threshold": 0.334,
        "model_dir": "",
        "batch_size": 16,
        "threads": 1,
    }
    try:
        build_embedder(MiniLMEmbedderConfig(**minilm))  # the settings the run records
    except EmbedderUnavailable as exc:
        pytest.skip(f"MiniLM cannot run here: {exc}")
    tasks = topic_tasks(per=7)  # 21 tasks: enough to cluster (MIN_TASKS)
    c = task_clusters(load_run(write_game(tmp_path / "run", tasks, mixed_setters(len(tasks)), embedder=minilm)))
    assert c.embedder == "the run's embedder (MiniLMEmbedder)" and len(c.tasks) == 21 and c.k >= 2

"""Whole SCP games through the runner: the built benchmark ranks the simulated cohort by true
skill, is reproducible, plays a benchmark file and a folder of one's own documents, refuses
configs it cannot play; player-set games have real setters whose questions restore the text."""

from __future__ import annotations

import copy
import dataclasses
import json
import random
import re
from collections import defaultdict

import pytest
from scipy.stats import kendalltau

import skate
from skate.errors import ConfigError
from skate.games.scp.questions import LETTERS, check, normalise
from skate.games.scp.rules import SCPGame, question_of
from skate.players.config import SimPlayerConfig
from skate.runlog.files import read_events
from skate.runlog.records import BENCHMARK, FailReason, Task
from skate.runner import run_game

CHOICES = {"game": "scp", "logger": "none", "estimator": "fixed_n"}
TASK_FIELDS = ("event", "ts", "task_id", "round", "setter", "prompt", "answer", "attempts")


def config(values=None, **choices: str):
    return skate.config(values={"report": False, **(values or {})}, **{**CHOICES, **choices})


def kinds(events, kind):
    return [e for e in events if e["event"] == kind]


def task_of(event) -> Task:
    """The task a ``task`` event records (the game's data is the event's extra fields)."""
    return Task(
        task_id=event["task_id"],
        round=event["round"],
        setter=event["setter"],
        prompt=event["prompt"],
        answer=event["answer"],
        data={k: v for k, v in event.items() if k not in TASK_FIELDS},
    )


def mean_p(events, players, domain):
    """Each player's mean p(correct) on the tasks of ``domain`` (and on the others)."""
    groups = {t["task_id"]: t["groups"] for t in kinds(events, "task")}
    ps = defaultdict(list)
    for e in kinds(events, "estimate"):
        ps[(e["player"], groups[e["task_id"]]["domain"] == domain)].append(e["p"])
    return {(p, inside): sum(ps[(p, inside)]) / len(ps[(p, inside)]) for p in players for inside in (True, False)}


# --------------------------------------------------------------------------- a folder of documents

TOPICS = {
    "astronomy": (
        ["comet", "nebula", "telescope", "orbit", "galaxy", "pulsar", "moon", "asteroid"],
        ["observers", "astronomers", "students", "surveys", "probes"],
    ),
    "cooking": (
        ["bread", "sauce", "oven", "dough", "pepper", "broth", "butter", "onion"],
        ["bakers", "cooks", "diners", "apprentices", "grocers"],
    ),
}
VERBS = ["describe", "measure", "follow", "record", "compare", "explain", "favour", "revisit"]
ADJS = ["bright", "distant", "careful", "quiet", "early", "patient", "humble", "curious", "faint", "steady"]
TIMES = ["before dawn", "every winter", "after the rains", "on long evenings", "in the old manuals"]


def document(domain: str, seed: int, paragraphs: int = 12) -> str:
    """A plain-text document: a title, then paragraphs of four distinct sentences each."""
    rng = random.Random(f"{domain}:{seed}")
    nouns, people = TOPICS[domain]

    def sentence() -> str:
        return (
            f"{rng.choice(ADJS).capitalize()} {rng.choice(people)} {rng.choice(VERBS)} the "
            f"{rng.choice(ADJS)} {rng.choice(nouns)} and the {rng.choice(nouns)} {rng.choice(TIMES)}, "
            f"entry {rng.randrange(10**6)}."
        )

    body = "\n\n".join(" ".join(sentence() for _ in range(4)) for _ in range(paragraphs))
    return f"Notes on {domain}, volume {seed}\n\n{body}\n"


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("docs")
    for domain in TOPICS:
        (folder / domain).mkdir()
        for k, suffix in enumerate((".txt", ".md")):
            (folder / domain / f"{domain}-{k}{suffix}").write_text(document(domain, k), encoding="utf-8")
    return folder


# --------------------------------------------------------------------------- the built benchmark


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("scp-built")
    result = run_game(
        config({"game.questions": 120, "game.rounds": 6, "estimator.n": 16, "seed": 1, "report": True}), out
    )
    return out, result, read_events(out)


def test_the_built_benchmark_ranks_the_cohort_by_true_skill(built):
    _, result, _ = built
    rows = result.table
    assert len(rows) == 6
    tau = kendalltau([r["score"] for r in rows], [r["true_skill"] for r in rows]).statistic
    assert tau >= 0.86, [(r["player"], r["true_skill"]) for r in rows]


def test_every_built_task_comes_from_the_benchmark_with_its_provenance(built):
    _, _, events = built
    assert events[0]["game"] == "scp" and events[0]["config"]["game"]["mode"] == "built"
    tasks = kinds(events, "task")
    assert len(tasks) == 120 and len({t["question_id"] for t in tasks}) == 120
    assert not kinds(events, "attempt")  # no one set anything
    types, domains = set(), set()
    for t in tasks:
        assert t["setter"] == BENCHMARK and t["attempts"] == 0
        assert t["groups"] == {"type": t["type"], "domain": t["domain"]}
        types.add(t["type"])
        domains.add(t["domain"])
        assert t["question_id"] == f"{t['type']}/{t['doc']}/{t['position']}/{t['seed']}"
        assert t["doc"].endswith(".rst") and t["position"] >= 1 and t["seed"] == 0
        assert len(t["options"]) == 4 and t["answer"] in t["options"] and t["original"]
        q = question_of(task_of(t))
        assert check(q) == [] and q.options[q.answer] == t["answer"]
        assert t["prompt"] and not re.search(r"^1\. ", t["prompt"], re.MULTILINE)  # options are not in the text
    assert types == {"sequencing", "cloze", "prediction"} and len(domains) == 5
    starts = kinds(events, "round_start")
    assert len(starts) == 6 and all(s["setters"] == [] and len(s["answerers"]) == 6 for s in starts)
    assert sum(e["tasks"] for e in kinds(events, "round_end")) == 120


def test_every_player_is_estimated_on_every_built_task(built):
    _, result, events = built
    players = {r["player"] for r in result.table}
    seen = defaultdict(set)
    for e in kinds(events, "estimate"):
        seen[e["task_id"]].add(e["player"])
        assert e["n"] == 16 and 0 <= e["p"] <= 1
    assert set(seen) == {t["task_id"] for t in kinds(events, "task")}
    assert all(s == players for s in seen.values())


def test_the_report_is_written(built):
    out, _, _ = built
    assert (out / "report" / "index.html").exists()
    assert "scp" in (out / "report" / "index.html").read_text(encoding="utf-8")


def test_same_config_and_seed_same_game(tmp_path):
    cfg = config({"game.per_doc": 1, "game.questions": 12, "game.rounds": 2, "estimator.n": 6, "seed": 3})
    a = run_game(copy.deepcopy(cfg), tmp_path / "a")
    b = run_game(copy.deepcopy(cfg), tmp_path / "b")
    assert a.table == b.table

    def body(path):
        return [
            {k: v for k, v in e.items() if k != "ts"}
            for e in read_events(path)
            if e["event"] not in ("run_start", "run_end")
        ]

    assert body(tmp_path / "a") == body(tmp_path / "b")
    run_game(dataclasses.replace(cfg, seed=4), tmp_path / "c")
    assert body(tmp_path / "c") != body(tmp_path / "a")  # the seed matters


# --------------------------------------------------------------------------- a benchmark file

TWO = {"players.simulated": [SimPlayerConfig(name="hi", skill=0.8), SimPlayerConfig(name="lo", skill=0.4)]}


@pytest.fixture(scope="module")
def bench_file(tmp_path_factory):
    from skate.cli.scp import main

    path = tmp_path_factory.mktemp("bench") / "bench.jsonl"
    assert main(["build", "shipped", "--out", str(path), "--per-doc", "1"]) == 0
    return path


def test_a_benchmark_file_is_played_question_by_question(tmp_path, bench_file):
    lines = [json.loads(x) for x in bench_file.read_text(encoding="utf-8").splitlines() if x.strip()]
    run_game(config({"game.benchmark": str(bench_file), "game.rounds": 3, "estimator.n": 2, **TWO}), tmp_path)
    tasks = kinds(read_events(tmp_path), "task")
    assert len(tasks) == len(lines) >= 90  # 98 at one question of each type per document (issue 25)
    by_id = {r["id"]: r for r in lines}
    assert {t["question_id"] for t in tasks} == set(by_id)
    for t in tasks:
        record = by_id[t["question_id"]]
        assert t["options"] == record["options"] and t["answer"] == record["options"][record["answer"]]
        assert record["question"].startswith(t["prompt"])  # the text without the numbered options


def test_a_malformed_benchmark_line_is_a_config_error_naming_it(tmp_path, bench_file):
    lines = bench_file.read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([*lines[:2], '{"id": "x", "type": "cloze",', *lines[2:]]) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.jsonl, line 3"):
        run_game(config({"game.benchmark": str(bad), "game.rounds": 2, "estimator.n": 2, **TWO}), tmp_path / "run")


@pytest.mark.parametrize("change", [{"answer": "2"}, {"options": None}])
def test_a_benchmark_line_with_a_wrongly_typed_field_is_a_config_error_naming_it(tmp_path, bench_file, change):
    lines = bench_file.read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        "\n".join([lines[0], json.dumps({**json.loads(lines[1]), **change}), *lines[2:]]) + "\n", encoding="utf-8"
    )
    with pytest.raises(ConfigError, match=r"bad\.jsonl, line 2"):
        run_game(config({"game.benchmark": str(bad), "game.rounds": 2, "estimator.n": 2, **TWO}), tmp_path / "run")


def test_configs_a_built_game_cannot_play_are_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    cases = [
        ({"game.docs": str(tmp_path / "empty")}, r"game=scp: .*empty holds no documents"),
        ({"game.docs": str(tmp_path / "missing")}, r"game\.docs=.*missing' is invalid: no such folder"),
        (
            {"game.per_doc": 1, "game.questions": 5, "game.rounds": 6},
            r"game\.rounds=6 is more than the 5 questions.*lower game\.rounds",
        ),
        ({"game.benchmark": str(tmp_path / "nope.jsonl")}, r"game\.benchmark=.*no such file"),
        (
            {"rating.outcome": "setter_vs_solver"},
            (
                r"rating\.outcome='setter_vs_solver' is invalid: game=scp "
                r"game\.mode=built builds its own tasks"
            ),
        ),
        ({"schedule.mode": "matches"}, r"schedule\.mode='matches' is invalid: .*no setters to pair.*use rounds"),
    ]
    for changes, says in cases:
        with pytest.raises(ConfigError, match=says):
            run_game(config({"game.rounds": 2, **changes}), tmp_path / "run")
    with pytest.raises(ConfigError, match=r"setter_vs_solver.*game=scp game\.mode=built"):
        run_game(config(rating="zerosumeval"), tmp_path / "run")
    # with setters to rate and pair, the same rating and schedule are fine
    config({"game.mode": "player_set"}, rating="zerosumeval")
    config({"game.mode": "player_set", "schedule.mode": "matches"}, rating="zerosumeval")


# --------------------------------------------------------------------------- player-set


@pytest.fixture(scope="module")
def player_set(tmp_path_factory):
    out = tmp_path_factory.mktemp("scp-player-set")
    result = run_game(config({"game.mode": "player_set", "game.rounds": 6, "estimator.n": 12, "seed": 2}), out)
    return out, result, read_events(out)


def test_player_set_tasks_have_real_setters_and_logged_attempts(player_set):
    _, result, events = player_set
    names = {r["player"] for r in result.table}
    tasks = kinds(events, "task")
    attempts = kinds(events, "attempt")
    assert len(tasks) >= 30  # 6 setters x 6 rounds, a few may forfeit
    assert all(t["setter"] in names and t["task_id"] == f"r{t['round']:03d}-{t['setter']}" for t in tasks)
    assert sum(a["valid"] for a in attempts) == len(tasks)
    rejections = [a for a in attempts if not a["valid"]]
    assert rejections
    for a in rejections:
        assert a["reason"] in {r.value for r in FailReason} and a["detail"] and a["text"]
    estimates = kinds(events, "estimate")
    assert len(estimates) == 6 * len(tasks)
    assert len({t["type"] for t in tasks}) == 3


def test_player_set_ranking_is_sane(player_set):
    _, result, _ = player_set
    order = [r["player"] for r in result.table]
    assert order.index("sim-ace") < order.index("sim-novice")
    assert order.index("sim-strong") < order.index("sim-weak")


def test_player_set_questions_are_cut_from_the_original_text(player_set):
    _, _, events = player_set
    game = SCPGame(mode="player_set")
    for t in kinds(events, "task"):
        paras = game.paragraphs_of(t["doc"])
        pos = t["position"]
        q = question_of(task_of(t))
        assert check(q) == [], t["task_id"]
        if t["type"] == "prediction":
            assert t["original"] == paras[pos + 1] and t["context"] == paras[pos]
            assert t["answer"] == t["original"]
            continue
        n = game.sizes[t["type"]][0]
        assert t["original"] == "\n\n".join(paras[pos : pos + n])
        order = [LETTERS.index(x) for x in t["answer"].split()]
        if t["type"] == "sequencing":
            restored = " ".join(t["chunks"][k] for k in order)
        else:
            restored = t["masked"]
            for hole, k in enumerate(order, 1):
                restored = restored.replace(f"[MASK_{hole}]", t["candidates"][k])
        assert normalise(restored) == normalise(t["original"])


# --------------------------------------------------------------------------- documents of one's own


def test_a_folder_of_documents_plays_with_its_domains(tmp_path, docs):
    run_game(config({"game.docs": str(docs), "game.rounds": 2, "estimator.n": 6, **TWO}), tmp_path)
    tasks = kinds(read_events(tmp_path), "task")
    assert len(tasks) >= 20
    assert {t["groups"]["domain"] for t in tasks} == {"astronomy", "cooking"}
    for t in tasks:
        assert t["doc"].startswith(t["domain"] + "/")
        assert check(question_of(task_of(t))) == []


def test_a_domain_offset_lowers_the_score_on_that_domain(tmp_path):
    players = [
        SimPlayerConfig(name="twin", skill=0.6, noise=0),
        SimPlayerConfig(name="no-typing", skill=0.6, noise=0, topic_skill={"typing": -0.3}),
    ]
    run_game(
        config({"game.questions": 100, "game.rounds": 2, "estimator.n": 16, "players.simulated": players}), tmp_path
    )
    p = mean_p(read_events(tmp_path), ("twin", "no-typing"), "typing")
    assert p[("no-typing", True)] < p[("twin", True)] - 0.15, p
    assert p[("no-typing", False)] == pytest.approx(p[("twin", False)], abs=0.05), p


def test_a_custom_corpus_domain_can_carry_an_offset(tmp_path, docs):
    players = [
        SimPlayerConfig(name="twin", skill=0.5, noise=0),
        SimPlayerConfig(name="no-cooking", skill=0.5, noise=0, topic_skill={"cooking": -0.3}),
    ]
    run_game(
        config({"game.docs": str(docs), "game.rounds": 2, "estimator.n": 20, "players.simulated": players}), tmp_path
    )
    p = mean_p(read_events(tmp_path), ("twin", "no-cooking"), "cooking")
    assert p[("no-cooking", True)] < p[("twin", True)] - 0.15, p
    assert p[("no-cooking", False)] == pytest.approx(p[("twin", False)], abs=0.08), p

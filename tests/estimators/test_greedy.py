"""estimator=greedy: ArxivRoll's evaluation as it ran (one answer per question, the same query
for every player, language models at temperature 0 within max_tokens), experiment=arxivroll, and
the report's accuracy ± standard error and agreement between groups."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import skate
from skate.errors import ConfigError
from skate.estimators.base import Sampler, task_rng
from skate.estimators.greedy import Greedy
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.report.page import group_tables, load_run, value_correlations, with_se
from skate.runlog.events import Estimated, TaskSet, read_run
from skate.runlog.records import VOID, Task
from skate.runner import run_game
from skate.settings.build import build_game
from tests.llm.conftest import llm_players


class Recorder:
    """An answer function that keeps every query it is shown and picks the first option."""

    def __init__(self, reply=0):
        self.seen, self.reply = [], reply

    def __call__(self, queries, rng):
        self.seen += list(queries)
        return [self.reply] * len(queries)


def test_every_player_sees_the_same_query_once(tmp_path):
    cfg = skate.config(
        game="cop", estimator="greedy", logger="none", values={"report": False, "game.rounds": 1, "seed": 3}
    )
    run_game(cfg, tmp_path / "run")
    game = build_game(cfg.game)
    run = read_run(tmp_path / "run")
    ests = run.of(Estimated)
    assert ests and all(e.n + e.void == 1 and e.p in (0.0, 1.0) for e in ests)  # one answer, right or wrong
    t = run.of(TaskSet)[0]
    task = Task(t.task_id, t.round, t.setter, t.prompt, t.answer, dict(t.extra))
    a, b = Recorder(), Recorder()
    for rec, seed in ((a, 1), (b, 2)):  # two players, two answer streams: one query
        Sampler(game, task, rec, fixed_queries=True)(1, np.random.default_rng(seed))
    assert a.seen == b.seen and len(a.seen) == 1
    c = Recorder()
    Sampler(game, task, c)(3, np.random.default_rng(1))  # the sampled estimators reshuffle per sample
    assert len({q.options for q in c.seen}) > 1
    assert task_rng(task).integers(10**9) == task_rng(task).integers(10**9)


def test_a_void_answer_is_void_never_wrong():
    est = Greedy().estimate(lambda n, rng: (0, 0, 1), np.random.default_rng(0))
    assert est.n == 0 and est.void == 1 and math.isnan(est.p)
    right = Greedy().estimate(lambda n, rng: (1, 0, 0), np.random.default_rng(0))
    assert (right.p, right.n, right.correct) == (1.0, 1, 1)
    assert VOID is not None


def test_models_answer_at_temperature_zero_within_max_tokens(tmp_path):
    with FakeLLMServer({"ace": FakeModel(0.9), "low": FakeModel(0.3)}) as srv:
        cfg = skate.config(
            game="mathquiz",
            estimator="greedy",
            logger="none",
            values={
                "game.rounds": 1,
                "estimator.max_tokens": 50,
                "report": False,
                "players.simulated": [],
                "llm.preflight": False,
                "players.llm": llm_players(srv.api_base, ("ace", "low")),
                "llm.cache_dir": str(tmp_path / "c"),
            },
        )
        run_game(cfg, tmp_path / "run")
        answers = [r for r in srv.log if r["max_tokens"] == 50]
    assert answers and all(r["temperature"] == 0.0 and r["n"] == 1 for r in answers)
    ests = read_run(tmp_path / "run").of(Estimated)
    assert all(e.n + e.void == 1 for e in ests)


def test_only_games_with_one_answer_to_one_query_take_it():
    with pytest.raises(ConfigError, match="estimator='greedy' is invalid: .* game=pyjail's answers are executed"):
        skate.config(game="pyjail", estimator="greedy")
    with pytest.raises(ConfigError, match="estimator.max_tokens"):
        skate.config(estimator="greedy", values={"estimator.max_tokens": 0})


def test_the_arxivroll_preset_reports_accuracy_with_errors_and_how_the_types_agree(tmp_path):
    cfg = skate.config(experiment="arxivroll", logger="none", values={"game.questions": 48, "seed": 0})
    assert (cfg.game.name, cfg.game.mode, cfg.estimator.max_tokens, cfg.game.reasoning) == ("scp", "built", 50, False)
    run_game(cfg, tmp_path / "run")
    d = load_run(tmp_path / "run")
    (title, wide), *_ = group_tables(d)
    shown = with_se(d, title, wide)
    acc = json.loads(
        json.dumps(
            d.p.loc[d.groups.index[d.groups[title.removeprefix("by ")] == wide.columns[1]], "sim-ace"].dropna().tolist()
        )
    )
    mean, se = np.mean(acc), np.std(acc, ddof=1) / np.sqrt(len(acc))
    assert shown.loc[shown["player"] == "sim-ace", wide.columns[1]].item() == f"{mean:.3f} ± {se:.3f}"
    agree = value_correlations(d)
    types = agree[agree["key"] == "type"]
    assert {(r.a, r.b) for r in types.itertuples()} == {
        ("cloze", "prediction"),
        ("cloze", "sequencing"),
        ("prediction", "sequencing"),
    }
    assert types[["pearson", "spearman", "kendall"]].notna().all().all()
    page = (tmp_path / "run" / "report" / "index.html").read_text()
    assert "How the groups agree" in page and " ± " in page
    assert (tmp_path / "run" / "report" / "group_correlations.csv").exists()

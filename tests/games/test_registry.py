"""The game registry, and the recipe in docs/adding-a-game.md: adding a game is one package and one YAML.

The last test writes a whole new game (a package and its YAML) into a temporary folder, puts the
folder on the game packages' path and Hydra's config search path, and plays it through the
unchanged engine, estimators, ratings, event log, ``skate.rate`` and report, with simulated
players and with language-model players served by the fake server.
"""

from __future__ import annotations

import sys
import textwrap

import pytest

import skate.games
from skate.config import compose_config
from skate.games import get_game, load_games

GAME = '''
"""``game=echo``: the setter picks a word; a solver must say it back, reversed."""

from dataclasses import dataclass

import dspy
import numpy as np

from skate.answers.choice import normalize_text
from skate.answers.exact import ExactQuery
from skate.games import FakePlayer, Game, GameConfig, GameSpec, register, seeded_random
from skate.llm.modules import FreeFormAnswerer, GameModules, SetterModule, sections
from skate.players.simulated import Simulation
from skate.records import FailReason, Rejection

WORDS = ("ox", "cat", "lamp", "table", "garden", "kangaroo", "blackboard", "hippopotamus")


@dataclass
class EchoConfig(GameConfig):
    _target_: str = "skate.games.echo.EchoGame"
    name: str = "echo"
    max_len: int = 20


@register
class EchoGame(Game):
    spec = GameSpec(name="echo", answer_format="exact_match", kinds=("short", "long"))
    config_schema = EchoConfig

    def __init__(self, name="echo", rounds=5, attempts=2, max_len=20):
        super().__init__(name, rounds, attempts)
        self.max_len = max_len

    def validate(self, proposal, checks):
        word = str(proposal).strip()
        if not word.isalpha() or len(word) > self.max_len:
            return Rejection(FailReason.MALFORMED, f"give one word of at most {self.max_len} letters")
        return checks.task(prompt=f"Reverse the word {word}", answer=word[::-1])

    def make_query(self, task, rng):
        return ExactQuery(task.prompt)

    def grade(self, task, query, reply):
        return normalize_text(str(reply)) == task.answer

    def simulation(self, env):
        return EchoSimulation()

    def modules(self, env):
        return GameModules(EchoSetter(), FreeFormAnswerer(Reverse, "prompt", lambda t: t.strip() or None))

    @classmethod
    def fake_player(cls):
        return FakeEcho()


class EchoSimulation(Simulation):
    kinds = ("short", "long")

    def kind_of(self, text):
        return "long" if len(text.split()[-1]) > 5 else "short"

    def difficulty(self, text):
        return min(1.0, len(text.split()[-1]) / 12)

    def write(self, player, ctx, kind, target, rng):
        return min(WORDS, key=lambda w: abs(len(w) / 12 - target) + rng.random() * 0.1)

    def flaw(self, player, ctx, proposal, rng):
        return proposal + "!"

    def answer(self, player, queries, rng):
        out = []
        for q in queries:
            word = q.prompt.split()[-1]
            out.append(word[::-1] if rng.random() < player.p_know(q.prompt) else word)
        return out


class SetWord(dspy.Signature):
    """Pick a word for the others to reverse."""

    situation: str = dspy.InputField()
    word: str = dspy.OutputField()


class Reverse(dspy.Signature):
    """Reverse the word."""

    prompt: str = dspy.InputField()
    answer: str = dspy.OutputField()


class EchoSetter(SetterModule):
    def __init__(self):
        super().__init__(SetWord)

    def inputs(self, ctx):
        return {"situation": f"round {ctx.round}"}

    def parse(self, text):
        return sections(text).get("word", "")


class FakeEcho(FakePlayer):
    def claims(self, inputs):
        return set(inputs) in ({"situation"}, {"prompt"})

    def reply(self, req):
        rnd = seeded_random(req.model, req.seed, req.index)
        if "situation" in req.inputs:
            return f"[[ ## word ## ]]\\n{rnd.choice(WORDS)}\\n\\n[[ ## completed ## ]]"
        word = req.inputs["prompt"].split()[-1]
        right = rnd.random() < req.skill
        return f"[[ ## answer ## ]]\\n{word[::-1] if right else word}\\n\\n[[ ## completed ## ]]"
'''

YAML = '''
defaults:
  - echo_schema
  - _self_

rounds: 4
attempts: 2
max_len: 20
'''


def test_the_registry_finds_every_game_package():
    games = load_games()
    assert {"cop", "mathquiz"} <= set(games)
    for name, cls in games.items():
        assert cls.spec.name == name and get_game(name) is cls
        assert cls.spec.answer_format and cls.spec.kinds


def test_an_unknown_game_is_a_clear_error():
    with pytest.raises(KeyError, match="no game called 'chess'; known games"):
        get_game("chess")


@pytest.fixture
def echo_game(tmp_path, monkeypatch):
    pkg = tmp_path / "games" / "echo"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(textwrap.dedent(GAME))
    conf = tmp_path / "conf" / "game"
    conf.mkdir(parents=True)
    (conf / "echo.yaml").write_text(YAML)
    monkeypatch.setattr(skate.games, "__path__", [*skate.games.__path__, str(tmp_path / "games")])
    yield f"hydra.searchpath=[file://{tmp_path / 'conf'}]"
    skate.games._GAMES.pop("echo", None)  # the game leaves with its folder
    sys.modules.pop("skate.games.echo", None)


def test_a_new_game_is_one_package_and_one_yaml(echo_game, tmp_path):
    from skate.rate import rate_run
    from skate.report import build_report
    from skate.runner import run_game
    from skate.store import read_events

    players = "players.simulated=[{name: hi, skill: 0.9}, {name: mid, skill: 0.55}, {name: lo, skill: 0.2}]"
    cfg = compose_config([echo_game, "game=echo", players, "logger=none", "report=false", "estimator=fixed_n"])
    assert cfg.game.max_len == 20 and "echo" in load_games()
    result = run_game(cfg, tmp_path / "run")
    assert [r["player"] for r in result.table] == ["hi", "mid", "lo"]
    events = read_events(tmp_path / "run")
    assert events[0]["game"] == "echo" and any(e["event"] == "task" for e in events)
    _, rows = rate_run(tmp_path / "run", ["rating=bradley_terry", "rating.bootstrap=20"])
    assert {r["player"] for r in rows} == {"hi", "mid", "lo"}
    assert build_report(tmp_path / "run").exists()


def test_a_new_game_is_played_by_language_models_through_the_fake_server(echo_game, tmp_path):
    from skate.llm.fake_server import FakeLLMServer, FakeModel
    from skate.runner import run_game
    from tests.llm.conftest import llm_config

    with FakeLLMServer({"ace": FakeModel(0.95), "low": FakeModel(0.2)}) as srv:
        cfg = llm_config(srv.api_base, tmp_path / "cache", echo_game, "game=echo", names=("ace", "low"))
        result = run_game(cfg, tmp_path / "run")
    assert [r["player"] for r in result.table] == ["ace", "low"]
    assert result.summary["tasks"] >= 4

"""The game registry, and the recipe in docs/adding-a-game.md: adding a game is one package.

The tests below write a whole new game (one package, nothing else: no YAML, no edit to
``.importlinter`` or the docs' nav) into a temporary folder, put the folder on the game packages'
path (where ``skate/games/`` is) and play it as ``python -m skate game=echo`` does, then through
the unchanged engine, estimators, ratings, event log, ``skate.rate``, report and export, with
simulated players and with language-model players served by the fake server.
tests/test_layers.py holds the same package to the import contracts.
"""

from __future__ import annotations

import importlib.metadata
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import skate
import skate.games
from skate.errors import ConfigError
from skate.games import AnswerFormat, Game, GameSpec, get_game, load_games, register
from skate.players.config import SimPlayerConfig

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
from skate.runlog.records import FailReason, Rejection

WORDS = ("ox", "cat", "lamp", "table", "garden", "kangaroo", "blackboard", "hippopotamus")


@dataclass
class EchoConfig(GameConfig):
    _target_: str = "skate.games.echo.EchoGame"
    name: str = "echo"
    rounds: int = 4  # a short game (the schema is the one place its defaults live)
    max_len: int = 20


@register
class EchoGame(Game):
    spec = GameSpec(name="echo", answer_format="exact_match", kinds=("short", "long"))
    config_schema = EchoConfig

    def validate(self, proposal, checks):
        word, most = str(proposal).strip(), self.config.max_len  # built from its settings: EchoConfig
        if not word.isalpha() or len(word) > most:
            return Rejection(FailReason.MALFORMED, f"give one word of at most {most} letters")
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

PLAYERS = "players.simulated=[{name: hi, skill: 0.9}, {name: mid, skill: 0.55}, {name: lo, skill: 0.2}]"  # the CLI's
SIMULATED = [
    SimPlayerConfig(name="hi", skill=0.9),
    SimPlayerConfig(name="mid", skill=0.55),
    SimPlayerConfig(name="lo", skill=0.2),
]

# python -m skate, with the temporary folder among the game packages' folders.
MAIN = """
import sys
import skate.games
skate.games.__path__.append(sys.argv.pop(1))
from skate.__main__ import main
main()
"""


def test_the_registry_finds_every_game_package():
    games = load_games()
    assert {"cop", "mathquiz"} <= set(games)
    for name, cls in games.items():
        assert cls.spec.name == name and get_game(name) is cls
        assert isinstance(cls.spec.answer_format, AnswerFormat) and cls.spec.kinds


def test_a_games_commands_are_words_mapped_to_a_function_and_a_line_of_help():
    class Odd(Game):
        spec = GameSpec(name="odd", answer_format="exact_match")

    for bad in (
        {"odd=1": ("m:f", "x")},
        {"-odd": ("m:f", "x")},
        {"odd": ("m.f", "x")},
        {"odd": ("m:f", "")},
        {"odd": "m:f"},
    ):
        with pytest.raises(ValueError, match=r"^Odd: command '.*' must be a word mapped to"):
            register(Odd, commands=bad)
    assert "odd" not in load_games()


def test_a_game_installed_from_elsewhere_that_cannot_be_imported_is_named(monkeypatch):
    broken = importlib.metadata.EntryPoint(name="broken", value="no_such_game_module", group="skate.games")
    monkeypatch.setattr(skate.games, "_installed", [])
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: [broken] if group == "skate.games" else [])
    with pytest.raises(
        ImportError,
        match=r"^the game 'broken' \(no_such_game_module, a skate.games entry point "
        r"of an installed distribution\) cannot be imported: No module named",
    ):
        load_games()


def test_an_answer_format_is_one_of_the_enum_and_a_wrong_one_says_which_to_use():
    assert GameSpec(name="echo", answer_format="exact_match").answer_format is AnswerFormat.exact_match
    with pytest.raises(
        ValueError,
        match=r"^game 'echo': answer_format='free text' is not one of multiple_choice, "
        r"exact_match, executed$",
    ):
        GameSpec(name="echo", answer_format="free text")


def test_a_game_gone_is_no_option_any_more(echo_game):
    assert skate.config(game="echo").game.name == "echo"
    skate.games._GAMES.pop("echo")
    with pytest.raises(ConfigError, match="^game=echo is not an option of game: choose one of cop, mathquiz,"):
        skate.config(game="echo")


def test_an_unknown_game_is_a_clear_error():
    with pytest.raises(KeyError, match="no game called 'chess'; known games"):
        get_game("chess")


@pytest.fixture
def echo_game(tmp_path, monkeypatch):
    """The new game as docs/adding-a-game.md says: one package beside the others, and nothing else."""
    pkg = tmp_path / "games" / "echo"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(textwrap.dedent(GAME))
    monkeypatch.setattr(skate.games, "__path__", [*skate.games.__path__, str(tmp_path / "games")])
    yield tmp_path / "games"
    # The game leaves with its folder. No Hydra store holds it: these tests make their settings with
    # skate.config, and run the command line in a subprocess.
    skate.games._GAMES.pop("echo", None)
    sys.modules.pop("skate.games.echo", None)


def skate_main(games: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", MAIN, str(games), *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_python_dash_m_skate_plays_a_new_game_from_its_package_alone(echo_game, tmp_path):
    run = tmp_path / "run"
    res = skate_main(
        echo_game,
        "game=echo",
        "game.rounds=3",
        PLAYERS,
        "logger=none",
        "report=false",
        "estimator=fixed_n",
        f"hydra.run.dir={run}",
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert "rank  player" in res.stdout and str(run) in res.stdout
    start = json.loads((run / "events.jsonl").read_text().splitlines()[0])
    assert start["game"] == "echo" and start["config"]["game"]["max_len"] == 20
    assert {r["player"] for r in json.loads((run / "ratings.json").read_text())} == {"hi", "mid", "lo"}
    res = skate_main(echo_game, "game=ech", f"hydra.run.dir={tmp_path / 'r2'}", cwd=tmp_path)
    assert res.returncode == 2 and res.stderr.strip().splitlines() == [
        "skate: config error: game=ech is not an option of game: did you mean game=echo? choose one of cop, echo, "
        "mathquiz, pyjail, scp"
    ]
    res = skate_main(echo_game, "play", "--help", cwd=tmp_path)
    assert "game: cop, echo, mathquiz, pyjail, scp\n" in res.stdout  # its schema is no other option


def test_a_new_game_is_one_package(echo_game, tmp_path):
    import jsonschema

    from skate.cli.export import main as export
    from skate.report import build_report
    from skate.runlog.files import read_events
    from skate.runner import run_game
    from skate.settings.recorded import rate_run

    cfg = skate.config(
        values={"players.simulated": SIMULATED, "report": False}, game="echo", logger="none", estimator="fixed_n"
    )
    assert cfg.game.max_len == 20 and cfg.game.rounds == 4 and "echo" in load_games()
    result = run_game(cfg, tmp_path / "run")
    assert [r["player"] for r in result.table] == ["hi", "mid", "lo"]
    events = read_events(tmp_path / "run")
    assert events[0]["game"] == "echo" and any(e["event"] == "task" for e in events)
    _, rows = rate_run(tmp_path / "run", {"rating": "bradley_terry", "rating.bootstrap": 20})
    assert {r["player"] for r in rows} == {"hi", "mid", "lo"}
    assert build_report(tmp_path / "run").exists()
    assert export([str(tmp_path / "run"), "--to", "jsonl", "--out", str(tmp_path / "x")]) == 0
    schema = json.loads((tmp_path / "x" / "tasks.schema.json").read_text())
    assert schema["properties"]["game"]["enum"] == ["cop", "echo", "mathquiz", "scp"]  # pyjail's tasks run code
    records = [json.loads(line) for line in (tmp_path / "x" / "tasks.jsonl").read_text().splitlines()]
    assert records and {r["game"] for r in records} == {"echo"}
    for r in records:
        jsonschema.validate(r, schema)


def test_a_game_yaml_is_needed_only_to_override_its_schema(echo_game, tmp_path, monkeypatch):
    from skate.paths import CONF_DIR
    from skate.settings import options

    conf = tmp_path / "conf"
    shutil.copytree(CONF_DIR, conf)
    (conf / "game").mkdir(exist_ok=True)
    (conf / "game" / "echo.yaml").write_text("defaults:\n  - /schema/game/echo@_here_\n  - _self_\n\nmax_len: 7\n")
    monkeypatch.setattr(options, "CONF_DIR", str(conf))
    cfg = skate.config(values={"game.rounds": 2}, game="echo")
    assert cfg.game.max_len == 7 and cfg.game.rounds == 2 and cfg.game.name == "echo"
    with pytest.raises(ConfigError, match="game.max_lenn"):
        skate.config(values={"game.max_lenn": 3}, game="echo")  # the YAML's option is typed by the schema


def test_a_new_game_is_played_by_language_models_through_the_fake_server(echo_game, tmp_path):
    from skate.llm.fake_server import FakeLLMServer, FakeModel
    from skate.runner import run_game
    from tests.llm.conftest import llm_config

    with FakeLLMServer({"ace": FakeModel(0.95), "low": FakeModel(0.2)}) as srv:
        cfg = llm_config(srv.api_base, tmp_path / "cache", names=("ace", "low"), game="echo")
        result = run_game(cfg, tmp_path / "run")
    assert [r["player"] for r in result.table] == ["ace", "low"]
    assert result.summary.tasks >= 4

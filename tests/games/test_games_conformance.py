"""Conformance: every registered game (``load_games()``) passes the same checks, the way OpenSpiel
tests every game. A newly registered game is picked up here with no edit.

For each game, and each of its modes (SCP: the built benchmark and player-set questions):

* **sets and validates**: simulated setters propose, the game's checks make each proposal a
  :class:`~skate.runlog.records.Task` or a :class:`~skate.runlog.records.Rejection` that says why; a game that
  builds its own tasks hands them out round by round;
* **answers and grades**: a simulated player's samples are graded; the right answer grades
  correct, a wrong one incorrect, an unreadable or junk one incorrect (never an exception), a
  failed model call void;
* **bad input**: every malformed proposal is rejected as ``malformed`` with a reason; an unknown
  game key fails as the settings are made, naming it, an out-of-range one is a one-line
  ConfigError naming it before anything is written;
* **plays** a tiny game end to end through the real runner with simulated players, and another
  with language-model players against the fake OpenAI-compatible server on loopback (one of them
  a model whose every reply is unreadable);
* **re-rates** each finished run with ``skate.rate``: the default gives the run's own table, IRT
  the table the run wrote for its ``rerate`` entry;
* **resumes**: each run cut after round 1 and resumed is the uninterrupted run.

Where games legitimately differ, the test asks the game: ``players_set`` (no setter, no
validation to drive), ``spec.answer_format`` (what a right and a wrong reply are), whether it
overrides :meth:`~skate.games.base.Game.play` (a sample is an exchange, not one query and one
graded reply), ``check_sandbox``.

Runs are shared through module-scoped fixtures (one unit setup, one simulated run, one language
model run per game and mode), and kept tiny: 3 players, 2 rounds, a few samples.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import skate
from skate.cli.play import resume
from skate.errors import ConfigError
from skate.games import AnswerFormat, Checks, Game, GameEnv, load_games
from skate.llm.fake_server import FakeLLMServer, FakeModel
from skate.llm.transport import close_pools
from skate.loop import Summary
from skate.optimize.items import setter_demos
from skate.players.config import SimPlayerConfig
from skate.players.simulated import build_simulated
from skate.runlog.files import comparable, read_events
from skate.runlog.records import BENCHMARK, VOID, FailReason, Rejection, SetterContext, Task
from skate.runner import run_game
from skate.settings.build import build_game
from skate.settings.config import SkateConfig
from skate.settings.recorded import rate_run, run_settings
from tests.llm.conftest import llm_config

# ---------------------------------------------------------------------------- what is played
# The least of each game that keeps every assertion meaningful (a game not named here is played
# with its own defaults, made small by the overrides every game has).
SMALL = {
    "pyjail": {"game.tries": 2},  # every try of every session is a real sandboxed execution
    "scp": {"game.questions": 6},  # built mode: 3 questions a round over the 2 rounds
}
# Other modes a game is played in, besides its default.
MODES = {"scp": [("player_set", {"game.mode": "player_set"})]}

SIM_PLAYERS = [
    SimPlayerConfig(name="hi", skill=0.95),
    SimPlayerConfig(name="mid", skill=0.6),
    SimPlayerConfig(name="lo", skill=0.1),
]
N = 4  # answer samples per (task, player)
BASE = {"game.rounds": 2, "seed": 0, "report": False, "estimator.n": N, "rerate": [{"name": "irt", "rating": "irt"}]}
CHOICES = {"logger": "none", "estimator": "fixed_n"}
# The fake server's cohort: a strong and a weak model, and one whose every reply is unreadable.
MODELS = {"ace": FakeModel(0.95), "low": FakeModel(0.1), "mute": FakeModel(0.5, faults={"no_option": 1.0})}
UNREADABLE = "I am not sure; it could be several of these."  # what the mute model says to everything


@dataclass(frozen=True)
class Variant:
    id: str
    game: str
    items: tuple[tuple[str, Any], ...]  # its values, as (key, value) pairs

    @property
    def values(self) -> dict[str, Any]:
        return dict(self.items)


def variants() -> list[Variant]:
    out = []
    for name in sorted(load_games()):
        base = tuple(SMALL.get(name, {}).items())
        out.append(Variant(name, name, base))
        out += [Variant(f"{name}-{mode}", name, (*base, *extra.items())) for mode, extra in MODES.get(name, ())]
    return out


VARIANTS = variants()


@pytest.fixture(scope="module", params=VARIANTS, ids=[v.id for v in VARIANTS])
def variant(request) -> Variant:
    return request.param


def settings_of(variant: Variant, extra: dict[str, Any] | None = None) -> SkateConfig:
    return skate.config(
        values={**BASE, "players.simulated": SIM_PLAYERS, **variant.values, **(extra or {})},
        game=variant.game,
        **CHOICES,
    )


@pytest.fixture(scope="module")
def settings(variant) -> SkateConfig:
    """The variant's settings, made once (copy them before a run)."""
    return settings_of(variant)


def lines(run: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run / "events.jsonl").read_text().splitlines()]


def without_truth(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A table as the rating gives it (the runner adds the simulated players' true skill)."""
    return [{k: v for k, v in r.items() if k != "true_skill"} for r in rows]


# ---------------------------------------------------------------------------- right and wrong
def right_reply(game: Game, task: Task, query: Any) -> Any:
    """The reply that answers ``query`` of ``task`` correctly, by the game's answer format."""
    fmt = game.spec.answer_format
    if fmt == AnswerFormat.multiple_choice:
        hits = [i for i, option in enumerate(query.options) if option == task.answer]
        assert len(hits) == 1, f"the answer must be shown exactly once among the options: {query.options}"
        return hits[0]
    if fmt == AnswerFormat.exact_match:
        return task.answer
    if fmt == AnswerFormat.executed:  # the input its setter proved the task with
        return task.data["setter_solution"]
    pytest.fail(
        f"game={game.name}: no conformance oracle for answer format {fmt!r}: teach right_reply and "
        "wrong_reply in this file what a right and a wrong reply are"
    )


def wrong_reply(game: Game, task: Task, query: Any) -> Any:
    fmt = game.spec.answer_format
    if fmt == AnswerFormat.multiple_choice:
        return next(i for i, option in enumerate(query.options) if option != task.answer)
    if fmt == AnswerFormat.exact_match:
        return task.answer + "1"
    if fmt == AnswerFormat.executed:
        return "1"
    pytest.fail(f"game={game.name}: no conformance oracle for answer format {fmt!r}")


def replying(game: Game, task: Task, how) -> Any:
    """An answerer that replies ``how(game, task, query)`` to every query (recording them)."""
    seen: list[Any] = []

    def answer(queries, rng):
        seen.extend(queries)
        return [how(game, task, q) for q in queries]

    answer.seen = seen
    return answer


def plays_its_own_samples(game: Game) -> bool:
    """A game whose sample is an exchange (it overrides ``play``) rather than one query and one
    graded reply (``make_query`` / ``grade``)."""
    return type(game).play is not Game.play


# ---------------------------------------------------------------------------- one game, by hand
@dataclass
class Setting:
    """One round of one game set by the simulated cohort, through the game's own interface."""

    game: Game
    cfg: SkateConfig
    env: GameEnv
    players: list
    tasks: list[Task] = field(default_factory=list)
    rejections: list[tuple[Any, Rejection]] = field(default_factory=list)
    proposals: list[tuple[Any, SetterContext, Any]] = field(default_factory=list)  # (player, ctx, proposal)


def checks(setting: Setting, player: Any, ctx: SetterContext, seed: int = 0) -> Checks:
    return Checks(
        round=ctx.round,
        setter=player.name,
        assignment=ctx.assignment,
        sandbox=setting.env.sandbox,
        rng=np.random.default_rng([seed, ctx.round, ctx.attempt]),
        solve=player.answer,
    )


@pytest.fixture(scope="module")
def setting(settings, sandbox) -> Setting:
    cfg = copy.deepcopy(settings)
    game = build_game(cfg.game)
    refusal = game.check_sandbox(sandbox)
    if refusal:  # no hardened sandbox on this machine (tests/conftest.py warned): the game says no
        pytest.skip(f"game={game.name} refuses the test sandbox {sandbox.name}: {refusal}")
    env = GameEnv(sandbox=sandbox, seed=0)
    players = build_simulated(cfg.players.simulated, game.simulation(env), 0)
    out = Setting(game, cfg, env, players)
    if not game.players_set(cfg.game):
        return out
    names = tuple(p.name for p in players)
    for i, player in enumerate(players):
        rng = np.random.default_rng([1, i])
        assignment = game.assignment(player.name, 1, rng)
        for attempt in range(1, game.attempts + 1):
            ctx = SetterContext(
                player=player.name,
                players=names,
                round=1,
                rounds=game.rounds,
                attempt=attempt,
                attempts_left=game.attempts - attempt + 1,
                failed=(),
                history=(),
                strategy="hist_perf",
                assignment=assignment,
            )
            proposal = player.set_task(ctx, rng)
            out.proposals.append((player, ctx, proposal))
            result = game.validate(proposal, checks(out, player, ctx))
            if isinstance(result, Task):
                out.tasks.append(result)
                break
            out.rejections.append((proposal, result))
    return out


def tasks_of(setting: Setting) -> list[Task]:
    """Tasks to answer: the ones the cohort set, or those the game built for round 1."""
    return setting.tasks if setting.game.players_set(setting.cfg.game) else list(setting.game.provided_tasks(1))


def test_it_sets_tasks_and_validates_each_proposal_into_a_task_or_a_reason(setting):
    game, cfg = setting.game, setting.cfg
    assert game.name == cfg.game.name and game.spec.kinds and game.spec.answer_format
    if not game.players_set(cfg.game):  # the game builds its tasks itself: every round has some
        seen = set()
        for rnd in range(1, game.rounds + 1):
            provided = list(game.provided_tasks(rnd))
            assert provided, f"round {rnd} has no task"
            for t in provided:
                assert isinstance(t, Task) and t.setter == BENCHMARK and t.round == rnd
                assert t.prompt and t.answer and t.task_id not in seen
                seen.add(t.task_id)
        assert not setting.proposals
        return
    assert game.provided_tasks(1) is None
    assert setting.tasks, f"no simulated setter set a valid task: {[r for _, r in setting.rejections]}"
    for t in setting.tasks:
        assert t.task_id == f"r001-{t.setter}" and t.round == 1 and t.setter in {p.name for p in setting.players}
        assert isinstance(t.prompt, str) and t.prompt.strip() and isinstance(t.answer, str)
        assert isinstance(game.novelty_text(t), str) and game.novelty_text(t).strip()
    for _proposal, rejection in setting.rejections:
        assert isinstance(rejection.reason, FailReason) and rejection.detail.strip()
    for _, _, proposal in setting.proposals:
        assert isinstance(game.proposal_text(proposal), str)


def test_validation_is_a_function_of_the_proposal_and_the_checks(setting):
    """The same proposal under the same checks gives the same verdict (a resumed run relies on it)."""
    if not setting.proposals:
        pytest.skip("the game builds its own tasks: nothing is validated")
    player, ctx, proposal = setting.proposals[0]
    a = setting.game.validate(proposal, checks(setting, player, ctx, seed=5))
    b = setting.game.validate(proposal, checks(setting, player, ctx, seed=5))
    assert type(a) is type(b)
    if isinstance(a, Task):
        assert (a.task_id, a.prompt, a.answer) == (b.task_id, b.prompt, b.answer)
    else:
        assert a.reason is b.reason


def test_a_flawed_proposal_is_rejected_with_its_reason(setting):
    """What the game's simulation writes as a careless setter's defect is turned away, and the
    rejection says why (the setter's next attempt is told)."""
    if not setting.proposals:
        pytest.skip("the game builds its own tasks: no setter can make a mistake")
    sim = setting.players[0].sim
    for k, (player, ctx, proposal) in enumerate(setting.proposals[:3]):
        flawed = sim.flaw(player, ctx, proposal, np.random.default_rng([7, k]))
        result = setting.game.validate(flawed, checks(setting, player, ctx))
        assert isinstance(result, Rejection), f"a flawed proposal was accepted: {setting.game.proposal_text(flawed)!r}"
        assert isinstance(result.reason, FailReason) and result.detail.strip()


def test_every_malformed_proposal_is_rejected_as_malformed_with_a_reason(setting):
    game = setting.game
    modules = game.modules(setting.env)
    player = setting.players[0]
    ctx = SetterContext(
        player=player.name,
        players=(player.name,),
        round=1,
        rounds=game.rounds,
        attempt=1,
        attempts_left=game.attempts,
        failed=(),
        history=(),
        strategy="hist_perf",
        assignment=game.assignment(player.name, 1, np.random.default_rng(0)),
    )
    why = "the reply held no task at all"
    bad = {
        "None": None,
        "empty string": "",
        "a number": 42,
        "an object": object(),
        "a list": [],
        "an unreadable reply": modules.setter.read_reply(UNREADABLE),
        "an empty reply": modules.setter.read_reply(""),
        "the setter's unreadable proposal": modules.setter.unreadable(why),
    }
    for what, proposal in bad.items():
        result = game.validate(proposal, checks(setting, player, ctx))
        assert isinstance(result, Rejection), what
        assert result.reason is FailReason.MALFORMED, (what, result)
        assert result.detail.strip(), what
        assert isinstance(game.proposal_text(proposal), str), what
    assert why in game.validate(bad["the setter's unreadable proposal"], checks(setting, player, ctx)).detail


def _stripped(proposal: Any) -> Any:
    """A proposal as its reply gives it back: no note, text fields without a trailing newline."""
    texts = {
        f.name: getattr(proposal, f.name).rstrip("\n")
        for f in dataclasses.fields(proposal)
        if isinstance(getattr(proposal, f.name), str)
    }
    return dataclasses.replace(proposal, **{**texts, "note": ""})


def test_a_setters_demonstration_reads_back_as_the_valid_task_it_shows(setting):
    """What prompt optimisation shows a setter as a labelled demonstration (a practice task or a
    simulated setter's task, written in the setter's reply format by its ``label``) is read back
    by the setter's ``parse`` as the same proposal, and that proposal is valid for its assignment."""
    game, env = setting.game, setting.env
    if not game.players_set(setting.cfg.game):
        pytest.skip("the game builds its own tasks: no setter to show one")
    demos = setter_demos(game, env, 2, np.random.default_rng(0), sources=("practice", "simulated"))
    assert len(demos) == 2, "the game gave no demonstration for its setters"
    module = game.modules(env).setter
    strong = build_simulated(SIM_PLAYERS[:1], game.simulation(env), 0)[0]
    for demo in demos:
        reply = module.adapter.format_assistant_message_content(module.predict.signature, module.label(demo.proposal))
        back = module.read_reply(reply)
        assert _stripped(back) == _stripped(demo.proposal), reply
        if demo.source == "practice":  # a simulated one was validated as it was made
            ctx = SetterContext(
                player=strong.name,
                players=(strong.name,),
                round=1,
                rounds=1,
                attempt=1,
                attempts_left=1,
                failed=(),
                history=(),
                strategy="no_info",
                assignment=demo.assignment,
            )
            right = replying(game, Task("t", 1, strong.name, "", str(demo.assignment.get("target", ""))), right_reply)
            solve = right if game.spec.answer_format == AnswerFormat.exact_match else strong.answer
            result = game.validate(
                back,
                Checks(
                    round=1,
                    setter=strong.name,
                    assignment=demo.assignment,
                    sandbox=env.sandbox,
                    rng=np.random.default_rng(0),
                    solve=solve,
                ),
            )
            assert isinstance(result, Task), (result, ctx)


def test_it_answers_with_simulated_players_and_grades_each_sample(setting):
    game, rng = setting.game, np.random.default_rng(3)
    for task in tasks_of(setting)[:2]:
        for player in setting.players:
            verdicts = game.play(task, player.answer, N, rng, setting.env.sandbox)
            assert len(verdicts) == N
            assert all(v is True or v is False or v is None for v in verdicts), verdicts


def test_a_right_answer_grades_correct_and_a_wrong_one_incorrect(setting):
    game, rng, sandbox = setting.game, np.random.default_rng(4), setting.env.sandbox
    tasks = tasks_of(setting)[:2]
    assert tasks
    for task in tasks:
        right = replying(game, task, right_reply)
        assert game.play(task, right, 2, rng, sandbox) == [True, True]
        assert right.seen
        assert game.play(task, replying(game, task, wrong_reply), 2, rng, sandbox) == [False, False]
        if not plays_its_own_samples(game):  # one query, one graded reply
            query = game.make_query(task, rng)
            assert game.grade(task, query, right_reply(game, task, query)) is True
            assert game.grade(task, query, wrong_reply(game, task, query)) is False


JUNK = ["", "no idea ☃", -1, 99, 3.5, "\x00"]


def test_an_unreadable_or_junk_answer_grades_incorrect_not_an_exception(setting):
    game, rng, sandbox = setting.game, np.random.default_rng(5), setting.env.sandbox
    task = tasks_of(setting)[0]
    modules = game.modules(setting.env)
    unreadable = modules.answerer.read_reply(UNREADABLE)
    assert unreadable is None, f"the answerer read {unreadable!r} from a reply that names no answer"
    assert game.play(task, lambda qs, r: [unreadable] * len(qs), 2, rng, sandbox) == [None, None]

    def junk(queries, r):
        return [JUNK[k % len(JUNK)] for k in range(len(queries))]

    assert not any(game.play(task, junk, len(JUNK), rng, sandbox))  # every sample wrong or unreadable
    if not plays_its_own_samples(game):
        query = game.make_query(task, rng)
        for reply in JUNK:
            assert game.grade(task, query, reply) is False, reply


def test_a_failed_model_call_is_void_not_wrong(setting):
    game = setting.game
    task = tasks_of(setting)[0]
    verdicts = game.play(task, lambda qs, r: [VOID] * len(qs), 3, np.random.default_rng(6), setting.env.sandbox)
    assert verdicts == [VOID] * 3


# ---------------------------------------------------------------------------- config
def test_a_bad_game_key_fails_before_the_run_naming_the_key(settings, variant, tmp_path):
    """A key the game does not have fails when the settings are made (a ConfigError, its first
    line naming the key); a value out of range is one line of ConfigError naming the key, raised
    by the checks before anything is written."""
    with pytest.raises(ConfigError) as err:
        settings_of(variant, {"game.no_such_key": 1})
    assert "game.no_such_key" in str(err.value).splitlines()[0]
    for key in ("rounds", "attempts"):  # every game's own check_config, before anything is written
        cfg = dataclasses.replace(settings, game=dataclasses.replace(settings.game, **{key: 0}))
        with pytest.raises(ConfigError) as err:
            skate.play(cfg, tmp_path / key)
        message = str(err.value)
        assert "\n" not in message and message.startswith(f"game.{key}=0 is invalid")
        assert not (tmp_path / key).exists() or not any((tmp_path / key).iterdir())


def test_the_modes_cover_games_the_players_set_and_games_the_game_builds():
    games = load_games()
    kinds = {games[v.game].players_set(settings_of(v).game) for v in VARIANTS if v.game in MODES}
    assert kinds == {True, False}


# ---------------------------------------------------------------------------- whole games
@dataclass
class Run:
    dir: Path
    table: list[dict[str, Any]]
    summary: Summary
    events: list[dict[str, Any]]


@pytest.fixture(scope="module")
def sim_run(variant, settings, tmp_path_factory) -> Run:
    run = tmp_path_factory.mktemp(f"sim-{variant.id}") / "run"
    result = run_game(copy.deepcopy(settings), run)
    return Run(run, result.table, result.summary, read_events(run))


def check_run(run: Run, variant: Variant, players: set[str]) -> dict[str, list[float]]:
    """What every finished run of every game shows; returns each player's p(correct) values."""
    game = load_games()[variant.game]
    events = run.events
    start, end = events[0], events[-1]
    assert start["event"] == "run_start" and start["game"] == variant.game and start["rounds"] == 2
    assert end["event"] == "run_end" and end["ended"] == "rounds"
    assert [e["round"] for e in events if e["event"] == "round_end"] == [1, 2]
    assert {r["player"] for r in run.table} == players
    tasks = [e for e in events if e["event"] == "task"]
    assert tasks and run.summary.tasks == len(tasks)
    players_set = game.players_set(run_settings(start, check=False).game)  # as the run recorded it
    for t in tasks:
        assert (t["setter"] in players) if players_set else (t["setter"] == BENCHMARK)
    attempts = [e for e in events if e["event"] == "attempt"]
    assert bool(attempts) == players_set
    for a in attempts:
        assert a["valid"] or (a["reason"] in set(FailReason) and a["detail"])
    p: dict[str, list[float]] = defaultdict(list)
    by_task: dict[str, set[str]] = defaultdict(set)
    for e in events:
        if e["event"] == "estimate":
            assert e["n"] + e["void"] == int(start["config"]["estimator"]["n"])
            assert e["p"] is None or 0.0 <= e["p"] <= 1.0
            by_task[e["task_id"]].add(e["player"])
            if e["p"] is not None:
                p[e["player"]].append(e["p"])
    assert by_task == {t["task_id"]: players for t in tasks}  # every player answered every task
    return p


def test_a_simulated_game_plays_end_to_end_through_the_runner(sim_run, variant):
    p = check_run(sim_run, variant, {"hi", "mid", "lo"})
    assert sim_run.summary.void_estimates == 0
    assert np.mean(p["hi"]) > np.mean(p["lo"]), dict(p)  # skill shows in the answers
    assert (sim_run.dir / "ratings.json").exists()


def check_rerated(run: Run, *others: str) -> None:
    """``skate.rate`` with no rating named gives the run's own table; with ``rating=<other>``, the
    table the run wrote for its ``rerate`` entry of that name."""
    _, rows = rate_run(run.dir)
    assert rows == without_truth(run.table)
    for other in others:
        _, again = rate_run(run.dir, {"rating": other})
        assert again == without_truth(json.loads((run.dir / f"ratings.{other}.json").read_text()))
        assert {r["player"] for r in again} == {r["player"] for r in run.table}


def test_the_simulated_run_rates_again_to_its_own_table(sim_run):
    check_rerated(sim_run, "irt")


def cut_after_round_one(run: Path, dest: Path) -> Path:
    raw = (run / "events.jsonl").read_text().splitlines(keepends=True)
    first = next(i for i, x in enumerate(raw) if '"round_end"' in x)
    assert first + 1 < len(raw)
    dest.mkdir(parents=True)
    (dest / "events.jsonl").write_text("".join(raw[: first + 1]))
    return dest


def check_resumed(cut: Path, run: Path) -> None:
    assert resume(str(cut), []) == 0
    assert [comparable(e) for e in lines(cut)] == [comparable(e) for e in lines(run)]
    for table in ("ratings.json", "ratings.irt.json"):
        assert json.loads((cut / table).read_text()) == json.loads((run / table).read_text())


def test_a_simulated_run_cut_after_round_one_resumes_to_the_uninterrupted_run(sim_run, tmp_path):
    check_resumed(cut_after_round_one(sim_run.dir, tmp_path / "cut"), sim_run.dir)


# ---------------------------------------------------------------------------- language models
@pytest.fixture(scope="module")
def server():
    with FakeLLMServer(dict(MODELS)) as srv:
        yield srv
    close_pools()


@pytest.fixture(scope="module")
def llm_run(variant, server, tmp_path_factory) -> Run:
    base = tmp_path_factory.mktemp(f"llm-{variant.id}")
    before = server.stats.requests
    cfg = llm_config(
        server.api_base,
        base / "cache",
        {**variant.values, "game.rounds": 2, "estimator.n": 3, "rerate": [{"name": "irt", "rating": "irt"}]},
        names=tuple(MODELS),
        game=variant.game,
    )
    result = run_game(cfg, base / "run")
    assert server.stats.requests > before
    return Run(base / "run", result.table, result.summary, read_events(base / "run"))


def test_language_model_players_play_it_against_the_fake_server(llm_run, variant):
    p = check_run(llm_run, variant, set(MODELS))
    events = llm_run.events
    assert llm_run.summary.void_estimates == 0 and llm_run.summary.usage["total"]["calls"] > 0
    assert np.mean(p["ace"]) > np.mean(p["low"]), dict(p)
    # The model whose every reply is unreadable: each of its proposals is malformed, each of its
    # answers graded wrong (counted unparsable, not void), and the game goes on.
    mute = [e for e in events if e["event"] == "estimate" and e["player"] == "mute"]
    assert mute and all(e["p"] == 0.0 and e["unparsable"] == e["n"] == 3 and e["void"] == 0 for e in mute)
    attempts = [e for e in events if e["event"] == "attempt" and e["player"] == "mute"]
    assert all(not a["valid"] and a["reason"] == FailReason.MALFORMED for a in attempts)
    if attempts:  # the players set this game's tasks
        assert len(attempts) == 2 * int(events[0]["config"]["game"]["attempts"])
        assert not any(t["setter"] == "mute" for t in events if t["event"] == "task")
        assert any(t["setter"] in ("ace", "low") for t in events if t["event"] == "task")


def test_the_language_model_run_rates_again_to_its_own_table(llm_run):
    check_rerated(llm_run)


def test_a_language_model_run_cut_after_round_one_resumes_to_the_uninterrupted_run(llm_run, server, tmp_path):
    check_resumed(cut_after_round_one(llm_run.dir, tmp_path / "cut"), llm_run.dir)

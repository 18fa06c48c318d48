"""``skate leaderboard add``: place a new model on a game's board for a few percent of a
tournament's calls.

1. **Banked tasks, chosen adaptively.** With every banked task's difficulty fixed (the last
   fit's), the newcomer's ability is re-estimated after each task
   (:func:`skate.leaderboard.fit.ability`), and the next task is drawn at random among the
   :attr:`AddSettings.pick_among` unretired tasks nearest that estimate in difficulty (the most
   informative for a Rasch item), of those shown to fewer than :attr:`AddSettings.max_placed`
   models being added: no task becomes the whole test of every newcomer.
2. **It stops** once its order against the incumbent just above and the one just below it is
   settled at :attr:`AddSettings.confidence` (after at least :attr:`AddSettings.min_tasks`
   tasks), or when the next task would pass its budget of calls (answer samples plus setter
   attempts), or when the bank has no task left for it.
3. **Its own tasks.** It then sets tasks in the usual way (a short staged game in which only it
   sets, answered by itself and the :attr:`AddSettings.neighbours` incumbents nearest to it; none
   in a game that builds its own tasks, such as SCP's built benchmark),
   which are banked: each new task's difficulty is estimated from the incumbents' answers with
   their abilities fixed, and the newcomer's ability is estimated once more over every task it
   answered.
4. The board gains a snapshot with its row: the latest board's (with the rows of models added
   meanwhile by other adds) plus its own; the incumbents' scores do not move (a full
   ``skate leaderboard refit`` refits everyone, anchored to the board's scale).

Every response is stored as it comes, so an interrupted add, run again, goes on where it stopped
(its setting game resumes from its run folder); two adds at once only share the store's rows
through its transactions. Each step is stored with the writes that end the one before
(:data:`~skate.leaderboard.store.ADD_STEPS`): a banked task's response with the add's calls; the
end of placement; its own game banked with its tasks' difficulties, its calls and the next step;
its snapshot with ``done``. The random draws of the nth banked task come from the seed, the game,
the model and n, so a process killed anywhere and run again ends with the store an uninterrupted
add leaves (unless a task was tried and not stored: all its samples void, or its last place taken
by another add meanwhile).
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np

from skate.estimators.base import Sampler
from skate.estimators.fixed_n import FixedN
from skate.games import get_game
from skate.leaderboard.bank import import_run, run_key
from skate.leaderboard.fit import LEVEL, Ability, ability, above, difficulty, effective
from skate.leaderboard.settings import AddSettings
from skate.leaderboard.store import OVERALL, Store, StoreError, digest
from skate.ratings.base import rank_by_score
from skate.runlog.events import EVENTS_FILE, AttemptMade, Estimated, read_run
from skate.runlog.files import held_run
from skate.runner import run_game
from skate.settings.build import (
    Table,
    build_estimator,
    build_table,
    llm_players,
    open_client,
    prepare_models,
    simulated_players,
)
from skate.settings.config import SkateConfig, record_of
from skate.settings.recorded import run_settings


@dataclass
class Placed:
    model: str
    game: str
    theta: float
    sd: float
    rank: int
    tasks: int
    calls: int
    stopped: str  # why placement ended
    set_tasks: int = 0
    already: bool = False


def describe_placed(got: Placed) -> str:
    """Where an add placed its model, one line: its rank and score (± 1.96 sd), from how many tasks
    and calls, why it stopped and how many of its own tasks were banked."""
    if got.already:
        return f"{got.model} is on the {got.game} board already (rank {got.rank}); nothing asked"
    return (
        f"{got.model}: rank {got.rank} on the {got.game} board, score {got.theta:.2f} ± {1.96 * got.sd:.2f}, "
        f"from {got.tasks} tasks and {got.calls} calls ({got.stopped}; {got.set_tasks} tasks of its own banked)"
    )


STANDBY = "(stand-by)"  # the placement's second player (a game needs two), never asked


def model_entry(model: str, name: str | None, **fields: Any) -> tuple[str, dict[str, Any]]:
    """The player entry (kind, config) of ``model``: ``provider/model`` (a language model, with
    any other key of its ``players.llm`` entry in ``fields``: ``api_base``, ``api_key_env``, ...)
    or ``simulated:SKILL`` (a simulated player of that skill, for trying the board)."""
    fields = {k: v for k, v in fields.items() if v not in (None, "")}
    if model.startswith("simulated:"):
        try:
            skill = float(model.split(":", 1)[1])
        except ValueError:
            skill = math.nan
        if not 0.0 <= skill <= 1.0:
            raise StoreError(f"{model!r}: give simulated:SKILL with a skill in [0, 1], e.g. simulated:0.6")
        if fields:
            raise StoreError(f"{', '.join(sorted(fields))}: a simulated player calls no model; leave them out")
        return "simulated", {"name": name or f"sim-{skill:g}", "skill": skill}
    if "/" not in model or model.startswith("/") or model.endswith("/"):
        raise StoreError(
            f"unknown model {model!r}: give provider/model (e.g. hosted_vllm/qwen2.5-coder-1.5b) or simulated:SKILL"
        )
    return "llm", {"name": name or model.rsplit("/", 1)[1], "model": model, **fields}


def game_of(store: Store, game: str | None) -> str:
    games = store.games()
    if not games:
        raise StoreError(f"the board in {store.where} has no tasks: import a finished run first")
    if game is None:
        if len(games) > 1:
            raise StoreError(f"the board has several games ({', '.join(games)}): name one with --game")
        return games[0]
    if game not in games:
        raise StoreError(f"the board has no task of game {game!r} (it has {', '.join(games)})")
    return game


def game_settings(
    store: Store,
    game: str,
    entries: list[tuple[str, dict[str, Any]]],
    edits: Mapping[str, Any] | None = None,
    stages: list[dict[str, Any]] | None = None,
) -> SkateConfig:
    """Settings to play ``game`` as its last imported run did, with these players only, and ``edits``
    (``{"seed": 3, "llm.cache_dir": ...}``, as :func:`skate.settings.recorded.run_settings` takes them)."""
    run_id = store.latest_run(game)
    assert run_id is not None
    record, version = store.run_config(run_id)
    # Bad settings (a board's player that does not fit this skate's) raise one line (ConfigError).
    return run_settings(
        {"config": record, "config_version": version},
        {
            "logger": "none",
            "players.simulated": [e for k, e in entries if k == "simulated"],
            "players.llm": [e for k, e in entries if k == "llm"],
            "players.roles": {},
            "stages": list(stages or []),
            "stop.settled": None,
            "report": False,
            "print_table": False,
            **(edits or {}),
        },
    )


def _board(store: Store, game: str, without: str) -> list[dict[str, Any]]:
    snap, rows = store.board(game)
    if snap is None:
        raise StoreError(f"the board has no fit of game {game!r} yet: run skate leaderboard refit")
    return [r for r in rows if r["model"] != without and r["score"] is not None]


def _neighbours(est: Ability, board: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The incumbent just above the estimate and the one just below (one at either end)."""
    higher = [r for r in board if r["score"] >= est.theta]
    lower = [r for r in board if r["score"] < est.theta]
    out = []
    if higher:
        out.append(min(higher, key=lambda r: r["score"]))
    if lower:
        out.append(max(lower, key=lambda r: r["score"]))
    return out


def settled(est: Ability, board: list[dict[str, Any]], confidence: float) -> bool:
    """Whether its order against the incumbent just above and the one just below is this sure."""
    return all(
        max(p := above((est.theta, est.sd), (r["score"], r["sd"] or 0.0)), 1 - p) >= confidence
        for r in _neighbours(est, board)
    )


def setting_cost(game: Any, settings: AddSettings) -> int:
    """The most calls its setting game may make (``game``: the game's settings): every attempt of
    every round, and every sample of each of its tasks by it and its neighbours."""
    return settings.set_rounds * (int(game.attempts) + (settings.neighbours + 1) * settings.set_samples)


def add(
    store: Store,
    model: str,
    name: str | None = None,
    settings: AddSettings | None = None,
    edits: Mapping[str, Any] | None = None,
    **fields: Any,
) -> Placed:
    """Place ``model`` on the board of ``settings.game`` (see the module's docstring); ``edits``: the
    games' settings changed (``{"llm.cache_dir": ...}``, :func:`game_settings`); ``fields``: the rest
    of a language model's ``players.llm`` entry (``api_base``, ``api_key_env``, ...)."""
    settings = settings or AddSettings()
    game = game_of(store, settings.game)
    kind, entry = model_entry(model, name, **fields)
    name = entry["name"]
    edits = dict(edits or {})
    board = _board(store, game, without=name)
    if not board:
        raise StoreError(f"the board of {game} has no rated model to place {name} against")
    # A game's settings need two players: a simulated stand-in stands by, never asked. (Not an
    # incumbent: building a language-model incumbent would call its endpoint, which this machine
    # may not reach, for a placement that asks only the newcomer.)
    s = game_settings(store, game, [(kind, entry), ("simulated", {"name": STANDBY, "skill": 0.5})], edits)
    spec = record_of(s)["players"][kind][0]  # the entry as the settings fill it: what plays it again
    # A game that builds its own tasks (SCP's built benchmark) has no setters: nothing of its own to set.
    sets = bool(settings.set_rounds) and get_game(game).players_set(s.game)
    reserve = setting_cost(s.game, settings) if sets else 0
    floor = settings.min_tasks * (settings.samples or 1) + reserve
    if settings.budget < floor:
        raise StoreError(
            f"a budget of {settings.budget} calls cannot place anyone here: {settings.min_tasks} "
            f"banked tasks of {settings.samples or 1} samples at least and its setting game need {floor}; "
            f"give --budget {floor} or more"
        )
    state = store.add_state(name, game)
    if state is not None and state["status"] == "done":
        snap_rows = store.board(game)[1]
        row = next((r for r in snap_rows if r["model"] == name), None)
        return Placed(
            name,
            game,
            row["score"] if row else math.nan,
            row["sd"] if row else math.nan,
            row["rank"] if row else 0,
            row["tasks"] if row else 0,
            int(state["calls"]),
            state["detail"],
            already=True,
        )
    with store.transaction() as conn:
        mid = store.ensure_model(conn, name, kind, spec, "add")
        store.start_add(conn, mid, game, settings.budget)
    state = store.add_state(name, game) or {}
    folder = Path(settings.runs_dir) / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}-{game}"
    if state["status"] == "placing":
        with contextlib.ExitStack() as cleanup:
            # The game's table and players; each model decodes as the estimator asks (the game's own,
            # unless --samples) and is checked first.
            table = build_table(s, cleanup)
            estimator = FixedN(n=settings.samples) if settings.samples else build_estimator(s)
            client = open_client(s, table, cleanup)
            players = [
                *simulated_players(s, table),
                *llm_players(
                    s.players.llm, table, client, getattr(estimator, "decoding", None), s.players.setter_repair
                ),
            ]
            prepare_models(s, table, client, players)
            player = next(p for p in players if p.name == name)
            stopped = _place(
                store,
                game,
                mid,
                name,
                table,
                estimator,
                player,
                board,
                settings,
                int(state["calls"]),
                settings.budget - reserve,
            )
        with store.transaction() as conn:
            store.update_add(conn, mid, game, status="setting" if sets else "banked", detail=stopped)
        state = store.add_state(name, game) or {}
    if state["status"] == "setting":
        _set_tasks(store, game, name, mid, (kind, entry), board, settings, edits, folder)
    est = _estimate(store, name, game, board)
    rank = _snapshot(store, game, name, mid, est)
    state = store.add_state(name, game) or {}
    return Placed(
        name,
        game,
        est.theta,
        est.sd,
        rank,
        est.tasks,
        int(state["calls"]),
        state["detail"],
        _own_tasks(store, folder) if sets else 0,
    )


def _place(
    store: Store,
    game: str,
    mid: int,
    name: str,
    table: Table,
    estimator: Any,
    player: Any,
    board: list[dict[str, Any]],
    settings: AddSettings,
    calls: int,
    budget: int,
) -> str:
    """The adaptive loop over banked tasks; why it stopped. The nth task it asks (counting those
    it answered before an interruption) draws from its own generator, seeded by the seed, the
    game, the model and n: run again after an interruption, it asks what it would have asked."""
    tried: set[int] = set()
    most = settings.samples or _most_samples(estimator)
    answered = store.model_responses(name, game)
    items, prior = _items(answered), _prior(board)  # read once; each new answer is added below
    step, who = len(answered), int(digest(f"{game}/{name}")[:8], 16)
    while True:
        est = ability([items[t] for t in sorted(items)], **prior)  # in task order, as read back
        if est.tasks >= settings.min_tasks and settled(est, board, settings.confidence):
            return f"order against its neighbours settled at {settings.confidence:g}"
        if calls + most > budget:
            return f"budget: {calls} calls"
        cands = [
            t
            for t in store.candidates(game, name, est.theta, settings.max_placed, settings.pick_among + len(tried))
            if t.id not in tried
        ]
        near = [
            (t, b)
            for t in cands[: settings.pick_among]  # a candidate's difficulty is known
            if (b := t.difficulty) is not None and abs(b - est.theta) <= settings.window
        ]
        if not near:
            return f"no banked task left within {settings.window:g} of its estimate"
        rng = np.random.default_rng([settings.seed, who, step])
        t, b = near[int(rng.integers(len(near)))]
        tried.add(t.id)
        step += 1
        got = estimator.estimate(Sampler(table.game, t.task(), player.answer, table.sandbox), rng)
        calls += got.n + got.void
        with store.transaction() as conn:
            if got.n > 0 and store.record(conn, mid, t.id, got.correct, got.n, "add", settings.max_placed):
                items[t.id] = (b, *effective(got.correct, got.n), t.difficulty_sd)
            store.update_add(conn, mid, game, calls=got.n + got.void)


def _most_samples(estimator: Any) -> int:
    """The most samples ``estimator`` may draw on one task (a cap it declares, else its n)."""
    for key in ("max_samples", "n"):
        if isinstance(getattr(estimator, key, None), int):
            return int(getattr(estimator, key))
    return 1


def _items(
    answered: list[tuple[int, int, int, float | None, float | None]],
) -> dict[int, tuple[float, float, float, float | None]]:
    """By task row id: (difficulty, correct, samples as the fits count them, difficulty's sd) of
    every task it answered (:meth:`Store.model_responses`) whose difficulty is known."""
    return {t: (b, *effective(k, n), sd) for t, k, n, b, sd in answered if b is not None}


def _prior(board: list[dict[str, Any]]) -> dict[str, float]:
    """The board's spread of abilities, the newcomer's prior (the population prior of adaptive
    testing): ``ability``'s prior_mean and prior_sd."""
    scores = [r["score"] for r in board]
    mean = sum(scores) / len(scores)
    spread = math.sqrt(sum((x - mean) ** 2 for x in scores) / max(1, len(scores) - 1)) if len(scores) > 1 else 1.0
    return {"prior_mean": mean, "prior_sd": max(spread, 0.5)}


def _estimate(store: Store, name: str, game: str, board: list[dict[str, Any]]) -> Ability:
    """Its ability from every task it answered whose difficulty is known, under the board's prior."""
    return ability(list(_items(store.model_responses(name, game)).values()), **_prior(board))


def _set_tasks(
    store: Store,
    game: str,
    name: str,
    mid: int,
    entry: tuple[str, dict[str, Any]],
    board: list[dict[str, Any]],
    settings: AddSettings,
    edits: Mapping[str, Any],
    folder: Path,
) -> None:
    """Its setting game in ``folder``: it sets, it and its nearest incumbents answer. Then, in
    one transaction, the run is banked, its tasks' difficulties estimated, its calls counted and
    the add's next step stored."""
    est = _estimate(store, name, game, board)
    near = sorted(board, key=lambda r: abs(r["score"] - est.theta))[: settings.neighbours]
    specs = {m["name"]: (m["kind"], m["spec"]) for m in store.models()}
    entries = [entry, *(specs[r["model"]] for r in near)]
    stage = [{"name": "add", "join": [], "setters": [name], "rounds": settings.set_rounds}]
    s = game_settings(
        store,
        game,
        entries,
        {"seed": settings.seed, "estimator": "fixed_n", "estimator.n": settings.set_samples, **edits},
        stages=stage,
    )
    held = held_run(folder)
    if held is None or not held.finished:
        run_game(s, folder, resume=held is not None)
    calls = run_calls(folder)
    # New tasks: difficulty from the incumbents' answers, their abilities fixed.
    theta = {r["model"]: r["score"] for r in board}
    with store.transaction() as conn:
        got = import_run(store, folder, conn=conn)
        spread = float((store.board(game, conn)[0] or {}).get("fit", {}).get("difficulty_sd") or 1.0)
        fresh = {t.id for t in store.tasks(game, run_id=got.run_id, conn=conn) if t.difficulty is None}
        answers: dict[int, list[tuple[float, float, float]]] = {}
        for r in store.responses(game, conn):
            if r.model in theta and r.task in fresh:
                answers.setdefault(r.task, []).append((theta[r.model], *effective(r.correct, r.samples)))
        store.set_difficulty(conn, {t: difficulty(items, spread) for t, items in answers.items()})
        store.update_add(conn, mid, game, calls=calls, status="banked")


def _own_tasks(store: Store, folder: Path) -> int:
    """The tasks of its setting game (played in ``folder``) in the bank."""
    if not (folder / EVENTS_FILE).exists():
        return 0
    with store.engine.connect() as conn:
        run_id = store.run_key(conn, run_key(folder))
    return len(store.tasks(run_id=run_id)) if run_id is not None else 0


def run_calls(folder: Path) -> int:
    """Answer samples and setter attempts a run made (voids included: each was a call)."""
    run = read_run(folder)
    return len(run.of(AttemptMade)) + sum(int(e.n) + int(e.void or 0) for e in run.of(Estimated))


def _snapshot(store: Store, game: str, name: str, mid: int, est: Ability) -> int:
    """The game's latest board with its row added (every other row as it is), and the add done,
    in one transaction; its rank. On a bank
    of this one game the overall board is the game's (the same responses, the same scale), so the
    row joins it too; with several games it joins the overall fit at the next refit, and the
    overall table says so meanwhile (:meth:`Store.not_overall`)."""
    z = NormalDist().inv_cdf(0.5 + LEVEL / 2)
    row = {
        "model": name,
        "score": est.theta,
        "lo": est.theta - z * est.sd,
        "hi": est.theta + z * est.sd,
        "sd": est.sd,
        "tasks": est.tasks,
    }
    rank: int | None = None
    with store.transaction() as conn:
        # The latest boards read in the write transaction, not the ones this add started from:
        # another add may have put its row there meanwhile, and this snapshot must keep it.
        boards = [game, OVERALL] if store.games(conn) == [game] else [game]
        for board in boards:
            snap, latest = store.board(board, conn)
            if board == OVERALL and snap is None:
                continue
            rows = [dict(r) for r in latest if r["model"] != name] + [dict(row)]
            ranks = rank_by_score([(r["model"], r["score"]) for r in rows])
            for r in rows:
                r["rank"] = ranks[r["model"]]
            store.snapshot(conn, board, f"add:{name}", {**(snap or {}).get("fit", {}), "added": name}, rows)
            if board == game:
                rank = ranks[name]
        store.update_add(conn, mid, game, status="done")
    if rank is None:  # pragma: no cover - its row has a score, so it has a rank on its game's board
        raise RuntimeError(f"{name} has no rank on the {game} board")
    return rank

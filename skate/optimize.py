"""Prompt optimisation with DSPy, per player, per game, per role (ZeroSumEval §3.4).

Before the game, each language-model player's modules (:mod:`skate.llm.modules`) can be compiled
by a DSPy optimiser (``optimizer=bootstrap_fewshot | bootstrap_fewshot_random_search |
mipro_v2``), each model optimising its own prompts on its own replies. Every call the optimiser
makes goes through the run's :class:`~skate.llm.client.LLMClient` by way of the bridge
(:class:`skate.llm.bridge.SkateLM`): same cache, retries, void handling, concurrency, usage, cost
and budget as the game.

Training items and metrics are verifiable, from the game itself:

answerer
    Tasks with known answers: the game's practice tasks (:meth:`skate.games.base.Game.practice_tasks`:
    COP from CRUXEval, MathQuiz and SCP from their generators) and the valid tasks of finished
    runs of the same game (``optimizer.runs``). One query each from the game's ``make_query``;
    the metric is the game's ``grade`` of the reply. Labelled demonstrations carry the right
    reply (the option or number the game grades as right).
setter
    Setting situations of round 1 (the game's own assignment for each). The metric parses the
    proposal and runs the game's real ``validate`` (sandbox, distractors, self-solvability where
    the game needs it), then uniqueness against a fixed training history (the practice tasks).
    A valid, unique task scores 0.5, plus 0.5 × (the setter answers it right) × (1 − the share
    of the other language-model players that do), one sample each: tasks it solves and others
    do not score highest.

``train`` items are the optimiser's, ``val`` more are held out: the metric on them before and
after is logged (event ``optimize``, W&B, the CLI's table). A compiled program is saved under
``optimizer.store`` keyed by the model's endpoint identity, the role, the game and its config,
the optimiser and its settings, the training items' content, the metric's version and the
module's signature, and reused with no model call when all of these match.

``python -m skate.optimize game=... players=... optimizer=...`` runs only this step.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import inspect
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import skate.llm  # noqa: F401  (environment defaults before dspy is imported)
import dspy

from skate import events as ev
from skate.games.base import Checks, Game, GameEnv
from skate.llm.bridge import SkateLM
from skate.llm.client import BudgetExceeded, LLMClient
from skate.llm.modules import AnswererModule, SetterModule, _Module
from skate.llm.optimizers import (OPTIMIZERS, ROLES, OptimizeError, OptimizerConfig, OptimizerName, Plan,  # noqa: F401
                                   Role, _split, check_plan, compare_table, format_results, plans)
from skate.embedders import NoveltyIndex
from skate.records import Rejection, SetterContext, Task

log = logging.getLogger(__name__)

# Bump when a role's metric changes meaning: stored programs compiled under the old one are stale.
METRIC_VERSION = {"answerer": 1, "setter": 1}
OPTIMIZE_SUFFIX = "@optimize"  # the usage key of a player's optimisation calls


@contextlib.contextmanager
def quiet():
    """DSPy's optimisers print progress bars and notes to stdout/stderr: keep them in the debug log."""
    out = io.StringIO()
    old = os.environ.get("TQDM_DISABLE")
    os.environ["TQDM_DISABLE"] = "1"
    loggers = [logging.getLogger(n) for n in ("dspy", "optuna")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.WARNING)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):  # tqdm writes to stderr
            yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)
        if old is None:
            os.environ.pop("TQDM_DISABLE", None)
        else:
            os.environ["TQDM_DISABLE"] = old
        if out.getvalue().strip():
            log.debug("DSPy said:\n%s", out.getvalue())


def compile_program(name: str, settings: Mapping[str, Any], student: _Module, metric: Callable,
                    trainset: list[dspy.Example], seed: int) -> _Module:
    """``student`` compiled by the named DSPy optimiser (a new module; the student is untouched)."""
    settings = dict(settings)
    threads = int(settings.get("num_threads", 1) or 1)
    if name == "bootstrap_fewshot":
        cls: type = dspy.BootstrapFewShot
        settings.pop("num_threads", None)
    elif name == "bootstrap_fewshot_random_search":
        cls = dspy.BootstrapFewShotWithRandomSearch
    elif name == "mipro_v2":
        cls = dspy.MIPROv2
        settings.setdefault("seed", seed)

    else:
        raise OptimizeError(f"optimizer.name={name!r} is invalid: use none, bootstrap_fewshot, "
                            "bootstrap_fewshot_random_search or mipro_v2")
    init, comp = _split(cls, settings)
    if "num_threads" in inspect.signature(cls.__init__).parameters:
        init["num_threads"] = threads
    if name == "mipro_v2":  # else it captures the global LM when constructed, not the bridge
        init["prompt_model"] = init["task_model"] = dspy.settings.lm
    optimizer = cls(metric=metric, **init)
    kwargs: dict[str, Any] = {"trainset": trainset, **comp}
    params = inspect.signature(cls.compile).parameters
    if "requires_permission_to_run" in params:
        kwargs.setdefault("requires_permission_to_run", False)
    return optimizer.compile(student, **kwargs)


# --------------------------------------------------------------------------- items and metrics
def render_prediction(pred: Any) -> str:
    """A prediction as the reply text a module's ``parse`` reads (``[[ ## field ## ]]`` sections)."""
    parts = []
    for key, value in dict(pred.items()).items():
        text = json.dumps(value) if isinstance(value, (list, dict)) else str(value)
        parts.append(f"[[ ## {key} ## ]]\n{text}")
    return "\n\n".join([*parts, "[[ ## completed ## ]]"])


def reference_reply(game: Game, task: Task, query: Any) -> Any:
    """The reply the game grades as right for ``query``: an option's index, or the answer itself."""
    options = getattr(query, "options", None)
    if options is not None:
        for i in range(len(options)):
            if game.grade(task, query, i):
                return i
        return None
    return task.answer if game.grade(task, query, task.answer) else None


def tasks_from_runs(runs: Sequence[str], game: Game) -> list[Task]:
    """The valid tasks (with their checked answers) of finished runs of the same game."""
    out: list[Task] = []
    for run in runs:
        log_ = ev.read_run(Path(run).expanduser(), "a finished run of the same game", keep_updates=0)
        if log_.start.game != game.name:
            raise OptimizeError(f"optimizer.runs: {run} is a game of {log_.start.game}, not {game.name}")
        for t in log_.of(ev.TaskSet):
            out.append(t.task())
    return out


class Items:
    """Training and held-out examples for one role, with what the metric needs per example."""

    def __init__(self) -> None:
        self.train: list[dspy.Example] = []
        self.val: list[dspy.Example] = []
        self.by_id: dict[str, Any] = {}

    def add(self, fields: dict[str, Any], labels: dict[str, Any], payload: Any, held_out: bool) -> None:
        key = str(len(self.by_id))
        self.by_id[key] = payload
        ex = dspy.Example(**fields, **labels, skate_id=key).with_inputs(*fields)
        (self.val if held_out else self.train).append(ex)

    def content(self) -> list[dict[str, Any]]:
        """What the training items say (the store key depends on it)."""
        return [{k: v for k, v in ex.items() if k != "skate_id"} for ex in self.train]


def answerer_items(game: Game, module: AnswererModule, n_train: int, n_val: int, runs: Sequence[str],
                   rng: np.random.Generator) -> Items:
    tasks = list(game.practice_tasks(n_train + n_val, rng))
    tasks += tasks_from_runs(runs, game)
    items = Items()
    order = rng.permutation(len(tasks))
    for pos in order:
        task = tasks[int(pos)]
        query = game.make_query(task, rng)
        right = reference_reply(game, task, query)
        if right is None:
            continue
        held_out = len(items.val) < n_val
        if not held_out and len(items.train) >= n_train:
            break
        items.add(module.inputs(query), module.label(right), (task, query), held_out)
    return items


def answerer_metric(game: Game, module: AnswererModule, items: Items) -> Callable:
    def metric(example: Any, pred: Any, trace: Any = None) -> bool:
        task, query = items.by_id[example.skate_id]
        reply = module.parse(render_prediction(pred))
        return bool(reply is not None and game.grade(task, query, reply))

    return metric


def setter_items(game: Game, module: SetterModule, player: str, names: tuple[str, ...], strategy: str,
                 n_train: int, n_val: int, rng: np.random.Generator) -> Items:
    items = Items()
    for k in range(n_train + n_val):
        assignment = game.assignment(player, 1, np.random.default_rng([int(rng.integers(2**31)), k]))
        ctx = SetterContext(player=player, players=names, round=1, rounds=game.rounds, attempt=1,
                            attempts_left=game.attempts, failed=(), history=(), strategy=strategy,
                            assignment=assignment)
        items.add(module.inputs(ctx), {}, ctx, held_out=k < n_val)
    return items


def setter_metric(game: Game, module: SetterModule, player: Any, others: Sequence[Any], items: Items,
                  env: GameEnv, novelty: Any, seed: int) -> Callable:
    lock = threading.Lock()

    def one(p: Any, task: Task, rng: np.random.Generator) -> float:
        (verdict,) = game.play(task, p.answer, 1, rng, env.sandbox)
        return 1.0 if verdict is True else 0.0

    def metric(example: Any, pred: Any, trace: Any = None) -> float:
        ctx: SetterContext = items.by_id[example.skate_id]
        rng = np.random.default_rng([seed, int(example.skate_id)])
        proposal = module.parse(render_prediction(pred))
        checks = Checks(round=ctx.round, setter=player.name, assignment=ctx.assignment, sandbox=env.sandbox,
                        rng=rng, solve=player.answer)
        result = game.validate(proposal, checks)
        if isinstance(result, Rejection) or not isinstance(result, Task):
            return 0.0
        with lock:
            unique, _, _ = novelty.check(player.name, game.novelty_text(result))
        if not unique:
            return 0.0
        own = one(player, result, rng)
        rivals = [one(o, result, rng) for o in others]
        return 0.5 + 0.5 * own * (1.0 - (sum(rivals) / len(rivals) if rivals else 0.0))

    return metric


def evaluate(program: _Module, examples: Sequence[dspy.Example], metric: Callable, threads: int) -> float | None:
    """The mean metric of ``program`` over ``examples`` (a failed call scores 0)."""
    if not examples:
        return None
    from concurrent.futures import ThreadPoolExecutor

    def score(ex: dspy.Example) -> float:
        try:
            return float(metric(ex, program(**ex.inputs())))
        except BudgetExceeded:
            raise
        except Exception as exc:  # noqa: BLE001 - a void call or an unreadable reply scores 0
            log.debug("evaluation of %s failed: %s", ex.get("skate_id"), exc)
            return 0.0

    lm, adapter = dspy.settings.lm, dspy.settings.adapter  # the caller's context, for the workers

    def run(ex: dspy.Example) -> float:
        with dspy.context(lm=lm, adapter=adapter):
            return score(ex)

    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        return float(np.mean(list(pool.map(run, examples))))


# --------------------------------------------------------------------------- the store
def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str, ensure_ascii=False).encode()).hexdigest()


def program_key(spec: Any, role: str, game: Game, game_config: Mapping[str, Any], plan: Plan,
                items: Items, module: _Module) -> str:
    sig = module.predict.signature
    return _digest({"model": spec.request_identity(), "role": role, "game": game.name, "game_config": game_config,
                    "optimizer": plan.optimizer, "settings": plan.settings, "train": items.content(),
                    "val": len(items.val), "metric": METRIC_VERSION[role],
                    "signature": {"instructions": sig.instructions, "fields": list(sig.fields)}})


class ProgramStore:
    """Compiled programs on disk, one JSON file per key."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder).expanduser()

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def load(self, key: str) -> dict[str, Any] | None:
        try:
            return json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def save(self, key: str, record: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.path(key).with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(record, indent=1, ensure_ascii=False, default=str), encoding="utf-8")
        tmp.replace(self.path(key))


# --------------------------------------------------------------------------- the step
def _usage(client: LLMClient) -> dict[str, float]:
    u = client.total()
    return {"calls": u.calls, "prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens,
            "cost_usd": u.cost_usd}


def optimize_players(game: Game, players: Sequence[Any], client: LLMClient, opt: OptimizerConfig, env: GameEnv,
                     embedder: Any, game_config: Mapping[str, Any] | None = None,
                     strategy: str = "hist_perf", write: Callable[[ev.Event], None] | None = None,
                     targets: Sequence[str] | None = None) -> list[ev.Optimized]:
    """Optimise the modules of each language-model player in ``players`` (those named in
    ``targets``, default all) as ``opt`` (the ``optimizer`` settings) say; return one event per
    player and role, each also passed to ``write``. Stops early, keeping what is done, when the
    budget runs out."""
    store = ProgramStore(str(opt.store))
    names = tuple(p.name for p in players)
    out: list[ev.Optimized] = []
    stopped = ""
    for player in players:
        if targets is not None and player.name not in targets:
            continue
        for role, plan in plans(opt, player.name).items():
            module: _Module = player.answerer if role == "answerer" else player.setter
            rng = np.random.default_rng([opt.seed, len(out)])
            started, before_usage = time.perf_counter(), _usage(client)
            record = ev.Optimized(player=player.name, model=player.spec.model, role=role, optimizer=plan.optimizer)
            if stopped:
                record.stopped = stopped
                out.append(record)
                if write:
                    write(record)
                continue
            threads = int(plan.settings.get("num_threads", 4) or 1)
            if role == "answerer":
                items = answerer_items(game, module, opt.train, opt.val, list(opt.runs), rng)
                metric = answerer_metric(game, module, items)
            else:
                items = setter_items(game, module, player.name, names, strategy, opt.train, opt.val, rng)
                novelty = NoveltyIndex(embedder)
                for t in game.practice_tasks(opt.train, np.random.default_rng(opt.seed)):
                    _, _, vec = novelty.check(player.name, game.novelty_text(t))
                    novelty.add(player.name, vec)
                others = [p for p in players if p.name != player.name]
                metric = setter_metric(game, module, player, others, items, env, novelty, opt.seed)
            record.train, record.val = len(items.train), len(items.val)
            if not items.train:
                record.stopped = f"no training items for the {role} of {game.name}"
                log.warning("%s: %s", player.name, record.stopped)
                out.append(record)
                if write:
                    write(record)
                continue
            key = program_key(player.spec, role, game, game_config or {}, plan, items, module)
            record.key = key
            saved = store.load(key)
            # Its own usage key: the run's usage shows what optimising cost each player.
            bridge = SkateLM(client, player.spec, f"{player.name}{OPTIMIZE_SUFFIX}", seed=opt.seed)
            try:
                with dspy.context(lm=bridge, adapter=module.adapter):
                    if saved is not None:
                        module.predict.load_state(saved["state"])
                        record.reused = True
                        record.metric_before = saved.get("metric_before")
                        record.metric_after = saved.get("metric_after")
                    else:
                        record.metric_before = evaluate(module, items.val, metric, threads)
                        with bridge.guard(), quiet():  # a budget hit inside the optimiser is not swallowed
                            compiled = compile_program(plan.optimizer, plan.settings, module, metric, items.train,
                                                       opt.seed)
                        state = compiled.predict.dump_state()
                        module.predict.load_state(state)
                        record.metric_after = evaluate(module, items.val, metric, threads)
                        store.save(key, {"key": key, "state": state, "player": player.name, "model": player.spec.model,
                                         "role": role, "game": game.name, "optimizer": plan.optimizer,
                                         "settings": plan.settings, "metric_before": record.metric_before,
                                         "metric_after": record.metric_after, "train": len(items.train),
                                         "val": len(items.val)})
            except BudgetExceeded as exc:
                stopped = record.stopped = f"budget: {exc}"
                log.warning("prompt optimisation stopped: %s", exc)
            record.demos = len(module.predict.demos)
            used = _usage(client)
            record.calls = int(used["calls"] - before_usage["calls"])
            record.prompt_tokens = int(used["prompt_tokens"] - before_usage["prompt_tokens"])
            record.completion_tokens = int(used["completion_tokens"] - before_usage["completion_tokens"])
            record.cost_usd = round(used["cost_usd"] - before_usage["cost_usd"], 6)
            record.elapsed_s = round(time.perf_counter() - started, 2)
            out.append(record)
            if write:
                write(record)
    return out


__all__ = ["METRIC_VERSION", "OptimizeError", "ProgramStore", "compare_table", "compile_program", "format_results",
           "optimize_players", "plans", "render_prediction"]


if __name__ == "__main__":  # python -m skate.optimize: a thin alias of `skate optimize`
    from skate.cli.optimize import main

    main()

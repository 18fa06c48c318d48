"""Prompt optimisation with DSPy, per player, per game, per role (ZeroSumEval §3.4).

Before the game, each language-model player's modules (:mod:`skate.llm.modules`) can be compiled
by a DSPy optimiser (``optimizer=bootstrap_fewshot | bootstrap_fewshot_random_search |
mipro_v2``), each model optimising its own prompts on its own replies. Every call the optimiser
makes goes through the run's :class:`~skate.llm.client.LLMClient` by way of the bridge
(:class:`skate.llm.bridge.SkateLM`): same cache, retries, void handling, concurrency, usage, cost
and budget as the game.

The training items and their metrics, one set per role and verifiable from the game itself, are in
:mod:`skate.optimize.items`.

``train`` items are the optimiser's, ``val`` more are held out: the metric on them before and
after is logged (event ``optimize``, W&B, the CLI's table). A compiled program is saved under
``optimizer.store`` keyed by the model's identity (:func:`model_identity`: a server on this
machine by its model, not its port), the role, the game and its config,
the optimiser and its settings, the training items' content, the metric's version and the
module's signature, and reused with no model call when all of these match.

``skate optimize game=... players=... optimizer=...`` runs only this step (:mod:`skate.optimize.standalone`).
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import io
import json
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import dspy
import numpy as np
from dspy.utils.exceptions import AdapterParseError

import skate.llm  # noqa: F401  (environment defaults before dspy is imported)
from skate.embedders import NoveltyIndex
from skate.games.base import Game, GameEnv
from skate.llm.bridge import SkateLM
from skate.llm.client import LLMClient
from skate.llm.modules import ITEM_SEED, _Module
from skate.llm.usage import BudgetExceeded
from skate.optimize.config import OptimizeError, OptimizerConfig, Plan, _split, plans
from skate.optimize.items import (
    Items,
    SetterMetric,
    answerer_items,
    answerer_metric,
    evaluate,
    setter_demos,
    setter_items,
    setter_metric,
)
from skate.runlog import events as ev

log = logging.getLogger(__name__)


class Unreadable(Exception):
    """The optimiser could not read a model's reply to one of its own requests (MIPROv2's
    instruction proposer): that player's role is left unoptimised, the others go on."""


# Bump when a role's metric changes meaning: stored programs compiled under the old one are stale.
METRIC_VERSION = {"answerer": 1, "setter": 2}
# What a stored program keeps of its optimisation's measures (reported again when it is reused).
SAVED_MEASURES = (
    "metric_before",
    "metric_after",
    "valid_before",
    "valid_after",
    "separating_before",
    "separating_after",
    "labelled",
    "demos_dropped",
    "tasks_before",
    "tasks_after",
    "rejected_before",
    "rejected_after",
)
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


def compile_program(
    name: str,
    settings: Mapping[str, Any],
    student: _Module,
    metric: Callable,
    trainset: list[dspy.Example],
    seed: int,
    prompt_lm: Any = None,
) -> _Module:
    """``student`` compiled by the named DSPy optimiser (a new module; the student is untouched).
    ``prompt_lm`` writes MIPROv2's instructions (default: the context's LM, which answers the
    student's own calls)."""
    settings = dict(settings)
    threads = int(settings.get("num_threads", 1) or 1)
    if name == "bootstrap_fewshot":
        cls: type[Any] = dspy.BootstrapFewShot
        settings.pop("num_threads", None)
    elif name == "bootstrap_fewshot_random_search":
        cls = dspy.BootstrapFewShotWithRandomSearch
    elif name == "mipro_v2":
        cls = dspy.MIPROv2
        settings.setdefault("seed", seed)

    else:
        raise OptimizeError(
            f"optimizer.name={name!r} is invalid: use none, bootstrap_fewshot, "
            "bootstrap_fewshot_random_search or mipro_v2"
        )
    init, comp = _split(cls, settings)
    if "num_threads" in inspect.signature(cls.__init__).parameters:
        init["num_threads"] = threads
    if name == "mipro_v2":  # else it captures the global LM when constructed, not the bridge
        init["task_model"] = dspy.settings.lm
        init["prompt_model"] = prompt_lm or dspy.settings.lm
    optimizer = cls(metric=metric, **init)
    kwargs: dict[str, Any] = {"trainset": trainset, **comp}
    params = inspect.signature(cls.compile).parameters
    if "requires_permission_to_run" in params:
        kwargs.setdefault("requires_permission_to_run", False)
    return optimizer.compile(student, **kwargs)


# --------------------------------------------------------------------------- context
CHARS_PER_TOKEN = 3.0  # a cautious guess (English prose is about 4, code about 3): no tokenizer here


def prompt_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """About how many tokens ``messages`` take (rounded up; over-, not under-estimated)."""
    return int(sum(len(str(m.get("content", ""))) + 8 for m in messages) / CHARS_PER_TOKEN) + 1


def fit_demos(module: _Module, spec: Any, examples: Sequence[dspy.Example]) -> int:
    """Drop ``module``'s last demonstrations until its longest request over ``examples`` leaves
    room for a reply in the model's context (``spec.context_tokens``; nothing to do where it is
    unknown). Returns how many were dropped."""
    window = getattr(spec, "context_tokens", None)
    if not window or not examples or not module.predict.demos:
        return 0
    room = int(window) - int(spec.max_tokens)
    dropped = 0

    def longest() -> int:
        return max(
            prompt_tokens(module._format(module.predict, {k: v for k, v in ex.inputs().items() if k != ITEM_SEED}))
            for ex in examples
        )

    while module.predict.demos and longest() > room:
        module.predict.demos = module.predict.demos[:-1]
        dropped += 1
    return dropped


# --------------------------------------------------------------------------- the store
def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str, ensure_ascii=False).encode()).hexdigest()


LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


def model_identity(spec: Any) -> dict[str, Any]:
    """The model a program is compiled for: its request identity, with a server on this machine
    named by the model alone, not its port (``skate local`` serves each model on a free port, a
    new one every time)."""
    identity = dict(spec.request_identity())
    base = str(identity.get("api_base") or "")
    host = base.split("://", 1)[-1].split("/", 1)[0].rsplit(":", 1)[0]
    if host in LOOPBACK:
        identity["api_base"] = "loopback"
    return identity


def program_key(
    spec: Any, role: str, game: Game, game_config: Mapping[str, Any], plan: Plan, items: Items, module: _Module
) -> str:
    sig = module.predict.signature
    return _digest(
        {
            "model": model_identity(spec),
            "role": role,
            "game": game.name,
            "game_config": game_config,
            "optimizer": plan.optimizer,
            "settings": plan.settings,
            "train": items.content(),
            "val": len(items.val),
            "metric": METRIC_VERSION[role],
            "signature": {"instructions": sig.instructions, "fields": list(sig.fields)},
        }
    )


STORE_FORMAT = 2  # what a stored program's file holds; another is compiled anew


class ProgramStore:
    """Compiled programs on disk, one JSON file per key."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder).expanduser()

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def load(self, key: str) -> dict[str, Any] | None:
        """The program stored under ``key``; None when there is none, or (said in one line) when
        the file cannot be read or another version of skate wrote it: it is compiled anew."""
        path = self.path(key)
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("the stored program %s cannot be read (%s): compiling it anew over it", path, exc)
            return None
        if (
            not isinstance(record, dict)
            or record.get("format") != STORE_FORMAT
            or not isinstance(record.get("state"), dict)
        ):
            log.warning(
                "the stored program %s was written by another version of skate: compiling it anew over it", path
            )
            return None
        return record

    def save(self, key: str, record: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.path(key).with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(
            json.dumps({"format": STORE_FORMAT, **record}, indent=1, ensure_ascii=False, default=str), encoding="utf-8"
        )
        tmp.replace(self.path(key))


# --------------------------------------------------------------------------- the step
def _usage(client: LLMClient) -> dict[str, float]:
    u = client.total()
    return {
        "calls": u.calls,
        "prompt_tokens": u.prompt_tokens,
        "completion_tokens": u.completion_tokens,
        "cost_usd": u.cost_usd,
    }


def optimize_players(
    game: Game,
    players: Sequence[Any],
    client: LLMClient,
    opt: OptimizerConfig,
    env: GameEnv,
    embedder: Any,
    game_config: Mapping[str, Any] | None = None,
    strategy: str = "hist_perf",
    write: Callable[[ev.Event], None] | None = None,
    targets: Sequence[str] | None = None,
) -> list[ev.Optimized]:
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
            options: dict[str, Any] = {}
            setter: SetterMetric | None = None
            if role == "answerer":
                items = answerer_items(game, module, opt.train, opt.val, list(opt.runs), rng)
                metric: Callable = answerer_metric(game, module, items)
            else:
                demos = (
                    setter_demos(
                        game,
                        env,
                        opt.train,
                        np.random.default_rng([opt.seed, 7]),
                        list(opt.runs),
                        [str(x) for x in opt.demos],
                        tuple(opt.demo_difficulty),
                    )
                    if opt.demos
                    else []
                )
                items = setter_items(game, module, player.name, names, strategy, opt.train, opt.val, rng, demos)
                record.labelled = items.labelled
                novelty = NoveltyIndex(embedder)
                # The uniqueness test's history: the practice tasks, and the demonstrations (a
                # setter that copies one back has written nothing new).
                history = game.practice_tasks(opt.train, np.random.default_rng(opt.seed))
                novelty.seed(
                    player.name,
                    [game.novelty_text(t) for t in history] + [game.proposal_text(d.proposal) for d in demos],
                )
                others = [p for p in players if p.name != player.name]
                metric = setter = setter_metric(game, module, player, others, items, env, novelty, opt.seed)
                options = player.setting_options()  # as the game sends its setting requests
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
            fresh = module.predict.dump_state()  # the default prompts, should a stored state not load
            # Its own usage key: the run's usage shows what optimising cost each player.
            bridge = SkateLM(client, player.spec, f"{player.name}{OPTIMIZE_SUFFIX}", seed=opt.seed, options=options)
            # MIPROv2's instruction writer answers in DSPy's own format: none of the role's stops.
            proposer = SkateLM(client, player.spec, f"{player.name}{OPTIMIZE_SUFFIX}", seed=opt.seed)
            try:
                with dspy.context(lm=bridge, adapter=module.adapter):
                    if saved is not None:
                        try:
                            module.predict.load_state(saved["state"])
                        except Exception as exc:  # noqa: BLE001 - DSPy's own check of a state it cannot take
                            log.warning(
                                "the stored program %s does not fit this version (%s): compiling it anew",
                                store.path(key),
                                exc,
                            )
                            module.predict.load_state(fresh)
                            saved = None
                    if saved is not None:
                        record.reused = True
                        for k in SAVED_MEASURES:
                            if saved.get(k) is not None:
                                setattr(record, k, saved[k])
                        # Compiled for a longer context than this model's: it must fit.
                        record.demos_dropped += fit_demos(module, player.spec, [*items.val, *items.train])
                    else:
                        record.metric_before = evaluate(module, items.val, metric, threads)
                        if setter is not None:
                            record.valid_before, record.separating_before = setter.shares(items.val)
                            record.tasks_before = setter.examples(items.val)
                            record.rejected_before = setter.reasons(items.val)
                        try:
                            with bridge.guard(), quiet():  # a budget hit inside the optimiser is not swallowed
                                compiled = compile_program(
                                    plan.optimizer,
                                    plan.settings,
                                    module,
                                    metric,
                                    items.train,
                                    opt.seed,
                                    prompt_lm=proposer,
                                )
                        except AdapterParseError as exc:  # the model could not answer the optimiser's own request
                            raise Unreadable(str(exc).strip().splitlines()[0]) from None
                        state = compiled.predict.dump_state()
                        module.predict.load_state(state)
                        record.demos_dropped = fit_demos(module, player.spec, [*items.val, *items.train])
                        state = module.predict.dump_state()
                        record.metric_after = evaluate(module, items.val, metric, threads)
                        if setter is not None:
                            record.valid_after, record.separating_after = setter.shares(items.val)
                            record.tasks_after = setter.examples(items.val)
                            record.rejected_after = setter.reasons(items.val)
                        store.save(
                            key,
                            {
                                "key": key,
                                "state": state,
                                "player": player.name,
                                "model": player.spec.model,
                                "role": role,
                                "game": game.name,
                                "optimizer": plan.optimizer,
                                "settings": plan.settings,
                                "train": len(items.train),
                                "val": len(items.val),
                                **{k: getattr(record, k) for k in SAVED_MEASURES},
                            },
                        )
                    if record.demos_dropped:
                        log.warning(
                            "%s: %d of the %s's demonstrations did not fit the model's context of %s tokens "
                            "and were dropped; lower optimizer.settings.max_bootstrapped_demos and "
                            "max_labeled_demos, or raise the player's context_tokens",
                            player.name,
                            record.demos_dropped,
                            role,
                            player.spec.context_tokens,
                        )
            except BudgetExceeded as exc:
                stopped = record.stopped = f"budget: {exc}"
                log.warning("prompt optimisation stopped: %s", exc)
            except Unreadable as exc:
                module.predict.load_state(fresh)  # its prompts as they were; nothing stored, so tried again next time
                record.stopped = (
                    f"{plan.optimizer} could not read the model's reply to one of its own requests ({exc}); "
                    f"the {role} keeps its prompts"
                )
                log.warning(
                    "%s: %s. A model this small may not follow the optimiser's requests: try "
                    "optimizer=bootstrap_fewshot for it",
                    player.name,
                    record.stopped,
                )
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


__all__ = ["METRIC_VERSION", "ProgramStore", "compile_program", "fit_demos", "model_identity", "optimize_players"]

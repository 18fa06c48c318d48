"""The DSPy prompt optimisers' config schema (the ``optimizer`` section) and their plans: which
optimiser, with which settings, for each language-model player and role — checked before any
model call (DSPy itself is loaded only when an optimiser is chosen). The optimising is
:mod:`skate.optimize`'s.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from skate.errors import ConfigError, Problem, Settings, require, typed
from skate.errors import check as _check
from skate.runlog import events as ev

DEMO_SOURCES = ("runs", "practice", "simulated")  # where setters' labelled demonstrations come from


class OptimizerName(enum.StrEnum):
    none = "none"
    bootstrap_fewshot = "bootstrap_fewshot"
    bootstrap_fewshot_random_search = "bootstrap_fewshot_random_search"
    mipro_v2 = "mipro_v2"


class Role(enum.StrEnum):
    setter = "setter"
    answerer = "answerer"


@dataclass
class OptimizerChoice(metaclass=Settings):
    """What the run's optimiser settings and a player's override of them share. ``settings`` are
    the optimiser's own (demos, candidates, trials, ``auto``, threads), ``setter`` and ``answerer``
    override them per role: DSPy's keyword arguments, so ``dict[str, Any]`` (a third-party
    library's, checked against its optimiser's signatures when a plan is made: :func:`check_plan`).
    ``name`` and ``roles`` are a player's (None: the run's) until :class:`OptimizerConfig` sets them."""

    name: Optional[OptimizerName] = None
    roles: Optional[list[Role]] = None
    # untyped: DSPy's keyword arguments, checked against its optimiser's signature (check_plan)
    settings: dict[str, Any] = field(default_factory=dict)
    setter: dict[str, Any] = field(default_factory=dict)  # untyped: as settings, DSPy's
    answerer: dict[str, Any] = field(default_factory=dict)  # untyped: as settings, DSPy's


@dataclass
class PlayerOptimizerConfig(OptimizerChoice):
    """One player's optimiser (``optimizer.players.<name>``): ``name`` and ``roles`` None for the
    run's; its ``settings``, ``setter`` and ``answerer`` go over the run's, or, under an optimiser
    other than the run's, over that optimiser's defaults alone."""


# OmegaConf (2.3) cannot add a player to a dict typed by a schema key by key, as
# `+optimizer.players.ace.name=none` does (it assigns the new entry a plain {} first, which such a
# dict refuses), so to OmegaConf each player's settings are plain data; OptimizerConfig types them
# when it is made (__post_init__), with the schema's own checks.
if TYPE_CHECKING:
    PlayerOverrides = dict[str, PlayerOptimizerConfig]
else:
    PlayerOverrides = dict[str, Any]


@dataclass
class OptimizerConfig(OptimizerChoice):
    """DSPy prompt optimisation of each language-model player's modules before the game: the
    optimiser (``name``), the roles it optimises and its settings (per role in ``setter`` and
    ``answerer``), each player's own in ``players`` (a player's name to its
    :class:`PlayerOptimizerConfig`)."""

    name: OptimizerName = OptimizerName.none
    roles: list[Role] = field(default_factory=lambda: [Role.answerer])
    train: int = 24  # training items per player and role
    val: int = 12  # held-out items: the metric before and after optimising
    runs: list[str] = field(default_factory=list)  # finished runs whose valid tasks join the items (and setters' demos)
    # Where a setter's labelled demonstrations come from, in this order (skate.optimize.DEMO_SOURCES):
    # runs (the valid tasks of `runs`), practice (the game's practice tasks), simulated (tasks the
    # game's simulated setter writes); [] for none (the model's own bootstrapped replies only).
    demos: list[str] = field(default_factory=lambda: ["runs", "practice", "simulated"])
    # Only demonstrations of a difficulty in [lo, hi] on the game's own scale (its simulation's
    # measure of a task, 0-1): [0, 0.4] shows a weak setter tasks it can still solve itself.
    demo_difficulty: list[float] = field(default_factory=lambda: [0.0, 1.0])
    seed: int = 0  # which items are drawn, and the optimiser's own randomness
    store: str = "${oc.env:SKATE_CACHE_DIR,'~/.cache/skate'}/programs"  # compiled programs, reused
    compare: bool = False  # also play each model with its default prompts, as '<name>-default'
    # untyped: to OmegaConf alone (PlayerOverrides, above); each entry typed when the settings are made
    players: PlayerOverrides = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.players = {str(k): player_config(str(k), v) for k, v in self.players.items()}

    def check(self) -> list[Problem]:
        """What types cannot say is wrong with these settings (keys within ``optimizer``)."""
        band = list(self.demo_difficulty)
        bad = [str(x) for x in self.demos if str(x) not in DEMO_SOURCES]
        return [
            *require(self.train >= 1, "train", self.train, "must be >= 1"),
            *require(self.val >= 0, "val", self.val, "must be >= 0"),
            *require(
                len(band) == 2 and 0 <= band[0] <= band[1] <= 1,
                "demo_difficulty",
                band,
                "is a range [lo, hi] within [0, 1], e.g. [0, 0.4]",
            ),
            *require(
                not bad, "demos", list(self.demos), f"takes {list(DEMO_SOURCES)} (in the order to draw from), or []"
            ),
            *require(
                not self.compare or self.name != OptimizerName.none,
                "compare",
                self.compare,
                "compares default and optimised prompts: choose an optimizer too (e.g. optimizer=bootstrap_fewshot)",
            ),
        ]


class OptimizeError(ConfigError):
    """The optimiser's configuration cannot work; the message says what to fix."""


def player_config(player: str, value: Any) -> PlayerOptimizerConfig:
    """``optimizer.players.<player>`` (plain data, or the schema made in Python) typed and checked
    by :class:`PlayerOptimizerConfig`; a key it lacks or a value of the wrong type raises
    :class:`ConfigError`, one line naming the key."""
    where = f"optimizer.players.{player}"
    if value is None:
        return PlayerOptimizerConfig()
    if not isinstance(value, (Mapping, PlayerOptimizerConfig)):
        raise ConfigError(
            f"{where}={value!r} is invalid: give the player's {{name, roles, settings, setter, answerer}} (each optional)"
        )
    return typed(PlayerOptimizerConfig, value, where)


@dataclass
class Plan:
    """What to do for one player and role."""

    optimizer: str
    settings: dict[str, Any]


def plans(cfg: OptimizerConfig, player: str) -> dict[str, Plan]:
    """Each role to optimise for ``player``: the run's optimiser and settings, overridden per role
    (``optimizer.setter`` / ``optimizer.answerer``) and per player (``optimizer.players.<name>``)."""
    mine = cfg.players.get(player)
    own = mine if mine is not None else PlayerOptimizerConfig()
    name = str(own.name if own.name is not None else cfg.name)
    roles = [str(r) for r in (own.roles if own.roles is not None else cfg.roles)]
    if name == "none":
        return {}
    # A player that names another optimiser than the run's does not inherit the run's settings
    # (they are that other optimiser's): only its own apply, over the optimiser's defaults.
    inherit = name == str(cfg.name)
    out = {}
    for role in roles:
        settings = {
            **(cfg.settings if inherit else {}),
            **(getattr(cfg, role) if inherit else {}),
            **own.settings,
            **getattr(own, role),
        }
        out[role] = Plan(name, settings)
        try:
            check_plan(out[role])
        except OptimizeError as exc:
            where = f"optimizer.players.{player} ({role})" if mine is not None else f"optimizer ({role})"
            raise OptimizeError(f"{where}: {exc}") from None
    return out


# --------------------------------------------------------------------------- optimisers
def _split(cls: Any, settings: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:  # cls: a DSPy optimiser
    """Settings for the optimiser's constructor and for its ``compile``; unknown keys refused."""
    init = set(inspect.signature(cls.__init__).parameters) - {"self", "metric", "prompt_model", "task_model"}
    comp = set(inspect.signature(cls.compile).parameters) - {"self", "student", "trainset", "teacher", "valset"}
    a = {k: v for k, v in settings.items() if k in init}
    b = {k: v for k, v in settings.items() if k in comp and k not in init}
    unknown = set(settings) - set(a) - set(b) - {"num_threads"}
    if unknown:
        raise OptimizeError(
            f"{cls.__name__} has no settings {sorted(unknown)}; it takes {sorted((init | comp) - {'kwargs', 'args'})}"
        )
    return a, b


OPTIMIZERS = {
    "bootstrap_fewshot": "BootstrapFewShot",
    "bootstrap_fewshot_random_search": "BootstrapFewShotWithRandomSearch",
    "mipro_v2": "MIPROv2",
}


def check_plan(plan: Plan) -> None:
    """Refuse a plan whose optimiser or settings cannot work (before any model call)."""
    if plan.optimizer not in OPTIMIZERS:
        raise OptimizeError(f"optimizer.name={plan.optimizer!r} is invalid: use none, {', '.join(OPTIMIZERS)}")
    import dspy  # heavy: only when an optimiser is chosen

    cls = getattr(dspy, OPTIMIZERS[plan.optimizer])
    _split(cls, plan.settings)
    if plan.optimizer == "mipro_v2":
        auto = plan.settings.get("auto", "light")
        if auto not in ("light", "medium", "heavy", None):
            raise OptimizeError(f"settings.auto={auto!r} is invalid: use light, medium, heavy or null")
        if auto is None and "num_trials" not in plan.settings:
            raise OptimizeError("mipro_v2 with auto=null needs settings.num_trials (and num_candidates)")


def check_players(o: OptimizerConfig, llm_players: list[str]) -> None:
    """What the optimiser's settings and the cohort say together: ``optimizer.players`` names
    language-model players, ``compare`` has some, and each player's plan can work. Raises
    :class:`ConfigError`."""
    unknown = sorted(set(o.players) - set(llm_players))
    _check(
        not unknown,
        "optimizer.players",
        unknown,
        f"names no language-model player of this cohort ({llm_players or 'none'})",
    )
    if o.compare:
        _check(bool(llm_players), "optimizer.compare", o.compare, "needs language-model players")
    if o.name != OptimizerName.none or o.players:
        for name in llm_players:
            try:
                plans(o, name)
            except OptimizeError as exc:
                raise ConfigError(str(exc)) from None


# --------------------------------------------------------------------------- results
def format_results(records: Sequence[ev.Optimized]) -> str:
    """The before/after table, one line per player and role."""

    def num(x: Any) -> str:
        return f"{x:.3f}" if isinstance(x, (int, float)) else "-"

    def pair(a: Any, b: Any) -> str:
        return f"{num(a)}>{num(b)}" if a is not None or b is not None else "-"

    head = (
        f"{'player':<16} {'role':<9} {'optimizer':<32} {'train':>5} {'val':>4} {'before':>7} {'after':>7} "
        f"{'valid':>11} {'separating':>11} {'demos':>5} {'calls':>6} {'tokens':>9} {'s':>6}  note"
    )
    lines = [head, "-" * len(head)]
    for r in records:
        notes = ["reused"] if r.reused else ([r.stopped] if r.stopped else [])
        if r.labelled:
            notes.append(f"{r.labelled} labelled")
        if r.demos_dropped:
            notes.append(f"{r.demos_dropped} demos over the context dropped")
        lines.append(
            f"{r.player:<16} {r.role:<9} {r.optimizer:<32} {r.train:>5} {r.val:>4} {num(r.metric_before):>7} "
            f"{num(r.metric_after):>7} {pair(r.valid_before, r.valid_after):>11} "
            f"{pair(r.separating_before, r.separating_after):>11} {r.demos:>5} {r.calls:>6} "
            f"{r.prompt_tokens + r.completion_tokens:>9} {r.elapsed_s:>6.1f}  {'; '.join(notes)}"
        )
    return "\n".join(lines)


def compare_table(table: Sequence[Mapping[str, Any]], suffix: str) -> list[dict[str, Any]]:
    """Rating change per model from its default-prompt twin (``<name><suffix>``): the optimised
    player's score minus the twin's, with a 95% interval from their sigmas (or intervals)."""
    rows = {r["player"]: r for r in table}
    out = []
    for name, r in rows.items():
        twin = rows.get(name + suffix)
        if name.endswith(suffix) or twin is None:
            continue
        gain = float(r["score"]) - float(twin["score"])

        def spread(row: Mapping[str, Any]) -> float:
            if row.get("sigma") is not None:
                return float(row["sigma"])
            if row.get("lo") is not None and row.get("hi") is not None:
                return (float(row["hi"]) - float(row["lo"])) / (2 * 1.96)
            return 0.0

        half = 1.96 * float(np.hypot(spread(r), spread(twin)))
        out.append(
            {
                "model": name,
                "optimized": round(float(r["score"]), 4),
                "default": round(float(twin["score"]), 4),
                "gain": round(gain, 4),
                "lo": round(gain - half, 4),
                "hi": round(gain + half, 4),
            }
        )
    return out


# --------------------------------------------------------------------------- command line

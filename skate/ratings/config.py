"""The rating backends' config schemas (``conf/rating/*.yaml``) and their range checks.

Each schema names its backend by ``_target_``; :func:`validate_rating` checks what types cannot,
raising :class:`~skate.errors.ConfigError` naming the key.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from hydra.utils import get_class
from omegaconf import DictConfig

from skate.errors import ConfigError
from skate.errors import check as _check


class OutcomeRule(enum.StrEnum):
    relative = "relative"  # |p1 - p2| < draw_margin is a draw, else the higher p wins
    absolute = "absolute"  # pass/fail at p_thresh; same verdict is a draw
    setter_vs_solver = "setter_vs_solver"  # ZeroSumEval: setter vs each answerer; solving (p >= p_thresh) wins


class OwnUnsolved(enum.StrEnum):
    """Setter_vs_solver: the outcome of a round whose setter's last task was well-formed but
    unsolved by the setter itself (a jail its own input could not break, a question it answered
    wrong)."""

    loss = "loss"  # skate's rule: the setter forfeits, losing to every answerer
    tie = "tie"  # ZeroSumEval's PyJail: a jail its own defender cannot break scores 0-0


class BTDraws(enum.StrEnum):
    """Which resamples the Bradley–Terry bootstrap draws."""

    tasks = "tasks"  # whole tasks (a task's outcomes are correlated), numpy's default_rng(seed)
    zerosumeval = "zerosumeval"  # single outcomes (ZeroSumEval's matches), as its code draws them


class BTScale(enum.StrEnum):
    logit = "logit"  # θ in natural log-odds, centred on 0
    zerosumeval = "zerosumeval"  # ZeroSumEval's: 1000 + 100 × the log-10 odds coefficient


class BTPoint(enum.StrEnum):
    fit = "fit"  # the fit on all the data
    median = "median"  # the median of the task bootstrap (ZeroSumEval's)


# --------------------------------------------------------------------------- rating
@dataclass
class OutcomeRuleConfig:
    """How p(correct) becomes pairwise outcomes: shared by every rating backend."""

    outcome: OutcomeRule = OutcomeRule.relative
    # Relative rule: |p1 - p2| below this is a draw. A number, or tied to the estimator's
    # stopping threshold: "sigma_star" (the paper's choice: draw margin = sigma*) or "<k>*sigma_star".
    draw_margin: Any = 0.05
    p_thresh: float = 0.55  # absolute and setter_vs_solver rules: p(correct) at or above this passes
    # setter_vs_solver: a round whose setter's last task was well-formed but unsolved by the setter:
    # loss (it forfeits to every answerer) or tie (a draw with each; ZeroSumEval's PyJail)
    own_unsolved: OwnUnsolved = OwnUnsolved.loss


@dataclass
class TrueSkillConfig(OutcomeRuleConfig):
    _target_: str = "skate.ratings.trueskill_backend.TrueSkillRating"
    mu: float = 25.0
    sigma: float = 25.0 / 3.0
    beta: float = 25.0 / 6.0
    tau: float = 25.0 / 300.0  # dynamics: variance added before each update
    # A number in [0, 1), or "auto": the observed draw rate. 0.10 by measurement: auto ranked no
    # better on the ranking-cost benchmark (BENCHMARKS.md, bench_ranking_cost.py --draws).
    draw_probability: Any = 0.10
    orderings: int = 1  # > 1: final table = mean over this many random orderings of the outcomes
    average_last: int = 0  # > 0: mu, sigma (and score) = their means over the last N updates (the paper: 100)
    seed: int = 0  # for the orderings


@dataclass
class BradleyTerryConfig(OutcomeRuleConfig):
    _target_: str = "skate.ratings.bradley_terry.BradleyTerryRating"
    alpha: float = 0.01  # regularisation: pseudo-wins each way, keeps unbeaten players finite
    bootstrap: int = 1000  # resamples of whole tasks for the intervals
    level: float = 0.95  # interval coverage
    seed: int = 0
    scale: BTScale = BTScale.logit  # logit: θ; zerosumeval: 1000 + 100 θ / ln 10
    point: BTPoint = BTPoint.fit  # fit: the full-data fit; median: the bootstrap median
    draws: BTDraws = BTDraws.tasks  # tasks: whole tasks; zerosumeval: single outcomes, drawn as ZeroSumEval does
    # setter_vs_solver: what a win counts, by the winner's role (a draw is half a win each way,
    # unweighted, as in ZeroSumEval); ZeroSumEval's published figures weight setters 2 (teacher, defender)
    role_weights: dict[str, float] = field(default_factory=lambda: {"setter": 1.0, "solver": 1.0})


@dataclass
class TTTConfig(OutcomeRuleConfig):
    """TrueSkill Through Time (skate.ratings.ttt): TrueSkill's model fitted on every outcome at
    once, so the table does not depend on the order of games."""

    _target_: str = "skate.ratings.ttt.TrueSkillThroughTimeRating"
    mu: float = 25.0  # prior mean skill (as TrueSkill)
    sigma: float = 25.0 / 3.0  # prior sd of skill
    beta: float = 25.0 / 6.0  # sd of one performance around the skill
    gamma: float = 0.0  # skill drift (sd) per round elapsed, with time=round; 0 = skills fixed
    # Sets the model's draw margin, as TrueSkill's; clamped to [0.01, 0.95] (the package fails on
    # draws below about 0.01).
    draw_probability: float = 0.10
    time: str = "none"  # none: all outcomes one batch (order-free); round: each task's round is a time step
    iterations: int = 30  # at most this many sweeps (time=round: backward-forward passes)
    epsilon: float = 1e-4  # stop once no player's mu or sigma moves by this much in a sweep


@dataclass
class IRTConfig:
    """The item-response model (skate.ratings.irt): abilities and task difficulties fitted
    jointly from the graded samples, not from pairwise outcomes (so it has no outcome rule)."""

    _target_: str = "skate.ratings.irt.IRTRating"
    guess: float = 0.0  # the guess floor c in P = c + (1 - c) sigmoid(theta - b); e.g. 0.25 for 4 options
    prior_sd: float = 5.0  # a weak N(0, prior_sd^2) prior on each ability: all-right players stay finite
    interval: str = "sandwich"  # sandwich (clustered by task) | hessian | bootstrap (whole tasks)
    level: float = 0.95  # interval coverage
    bootstrap: int = 200  # refits, for interval=bootstrap
    grid: int = 121  # quadrature points over the task difficulties
    seed: int = 0
    p_thresh: float = 0.55  # the pass mark games use (a setter solving its own task); not a rating rule


@dataclass
class EloConfig(OutcomeRuleConfig):
    _target_: str = "skate.ratings.elo.EloRating"
    k: float = 16.0
    scale: float = 400.0
    initial: float = 1500.0


def validate_rating(r: DictConfig) -> None:
    if "outcome" in r:
        _check(str(r.outcome) in set(OutcomeRule), "rating.outcome", r.outcome,
               f"must be one of {', '.join(OutcomeRule)}")
    if "p_thresh" in r:
        _check(0.0 < r.p_thresh < 1.0, "rating.p_thresh", r.p_thresh, "must lie in (0, 1)")
    if "draw_margin" in r:
        dm = r.draw_margin
        if isinstance(dm, str):
            _check(sigma_star_factor(dm) is not None, "rating.draw_margin", dm,
                   "give a number in [0, 1), sigma_star (the estimator's sigma*) or <k>*sigma_star")
        else:
            _check(isinstance(dm, (int, float)) and 0.0 <= dm < 1.0, "rating.draw_margin", dm, "must lie in [0, 1)")
    for key in ("sigma", "beta"):
        if key in r:
            _check(r[key] > 0, f"rating.{key}", r[key], "must be > 0")
    if "draw_probability" in r:
        dp = r.draw_probability
        _check(dp == "auto" or (isinstance(dp, (int, float)) and 0.0 <= dp < 1.0),
               "rating.draw_probability", dp, "give a number in [0, 1) or auto")
    for key, low in (("orderings", 1), ("average_last", 0), ("bootstrap", 1)):
        if key in r:
            _check(r[key] >= low, f"rating.{key}", r[key], f"must be >= {low}")
    if "alpha" in r:
        _check(r.alpha > 0, "rating.alpha", r.alpha, "must be > 0 (keeps unbeaten players finite)")
    if "level" in r:
        _check(0 < r.level < 1, "rating.level", r.level, "must lie in (0, 1)")
    if "k" in r:
        _check(r.k > 0, "rating.k", r.k, "must be > 0")
    if "scale" in r:
        if isinstance(r.scale, str):  # Bradley–Terry: which units
            _check(r.scale in set(BTScale), "rating.scale", r.scale, f"must be one of {', '.join(BTScale)}")
        else:  # Elo: rating points per factor 10 of odds
            _check(r.scale > 0, "rating.scale", r.scale, "must be > 0")
    if "own_unsolved" in r:
        _check(str(r.own_unsolved) in set(OwnUnsolved), "rating.own_unsolved", r.own_unsolved,
               f"must be one of {', '.join(OwnUnsolved)}")
    if "draws" in r:
        _check(str(r.draws) in set(BTDraws), "rating.draws", r.draws, f"must be one of {', '.join(BTDraws)}")
    if "role_weights" in r:
        weights = r.role_weights
        _check(set(weights) == {"setter", "solver"}, "rating.role_weights", dict(weights),
               "give a weight for each role: {setter: w, solver: w}")
        _check(all(isinstance(w, (int, float)) and w > 0 for w in weights.values()), "rating.role_weights",
               dict(weights), "weights must be > 0")
    if "point" in r:
        _check(str(r.point) in set(BTPoint), "rating.point", r.point, f"must be one of {', '.join(BTPoint)}")
    if "guess" in r:
        _check(0.0 <= r.guess < 1.0, "rating.guess", r.guess, "the guess floor must lie in [0, 1)")
    if "prior_sd" in r:
        _check(r.prior_sd > 0, "rating.prior_sd", r.prior_sd, "must be > 0")
    if "interval" in r:
        _check(r.interval in ("sandwich", "hessian", "bootstrap"), "rating.interval", r.interval,
               "must be one of sandwich, hessian, bootstrap")
    if "time" in r:
        _check(r.time in ("none", "round"), "rating.time", r.time,
               "give none (every outcome one batch) or round (each round a time step)")
    if "grid" in r:
        _check(r.grid >= 21, "rating.grid", r.grid, "must be >= 21 quadrature points")


def sigma_star_factor(value: Any) -> float | None:
    """k when ``value`` ties the draw margin to the estimator's sigma* ("sigma_star" is k = 1,
    "<k>*sigma_star" any k > 0); None when it does not."""
    if not isinstance(value, str):
        return None
    text = value.replace(" ", "")
    if text == "sigma_star":
        return 1.0
    k, sep, rest = text.partition("*")
    if not sep or rest != "sigma_star":
        return None
    try:
        factor = float(k)
    except ValueError:
        return None
    return factor if factor > 0 else None


def draw_margin_of(value: Any, estimator: Any, key: str = "rating.draw_margin") -> float:
    """The relative rule's draw margin: ``value`` itself, or k × the estimator's sigma*."""
    k = sigma_star_factor(value)
    if k is None:
        _check(isinstance(value, (int, float)) and not isinstance(value, bool), key, value,
               "give a number in [0, 1), sigma_star (the estimator's sigma*) or <k>*sigma_star")
        return float(value)
    sigma_star = (estimator or {}).get("sigma_star")
    target = str((estimator or {}).get("_target_", "?")).rsplit(".", 1)[-1]
    _check(sigma_star is not None, key, value,
           f"ties the draw margin to the estimator's sigma_star, which {target} does not have: use "
           "estimator=algorithm1 or estimator=decided, or give the margin as a number")
    margin = k * float(sigma_star)
    _check(0.0 <= margin < 1.0, key, value, f"gives {margin} with sigma_star={sigma_star}: must lie in [0, 1)")
    return margin


def rating_name(r: DictConfig) -> str:
    """How the user names a rating config: rating=<option> (from its target)."""
    target = str(r.get("_target_", "?")).rsplit(".", 1)[-1]
    return "rating=" + {"TrueSkillRating": "trueskill", "BradleyTerryRating": "bradley_terry", "EloRating": "elo",
                        "IRTRating": "irt", "TrueSkillThroughTimeRating": "ttt"}.get(target, target)


def rating_class(r: DictConfig) -> Any:
    try:
        return get_class(str(r._target_))
    except Exception as exc:  # noqa: BLE001 - an unknown target: say which
        raise ConfigError(f"rating._target_={r.get('_target_')!r} is invalid: {exc}") from None

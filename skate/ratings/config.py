"""The rating backends' config schemas (``conf/rating/*.yaml``) and their range checks.

Each schema names its backend by ``_target_``; :func:`validate_rating` checks what types cannot,
raising :class:`~skate.errors.ConfigError` naming the key.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any


from skate.errors import check as _check
from skate.records import PASS_MARK


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
class RatingConfig:
    """What every rating backend's settings are (the ``rating`` section's type): each backend's
    schema extends it (see the ``rating`` registry in :mod:`skate.ratings.base`)."""


@dataclass
class OutcomeRuleConfig(RatingConfig):
    """How p(correct) becomes pairwise outcomes: shared by every rating backend."""

    outcome: OutcomeRule = OutcomeRule.relative
    # Relative rule: |p1 - p2| below this is a draw. A number, or tied to the estimator's
    # stopping threshold: "sigma_star" (the paper's choice: draw margin = sigma*) or "<k>*sigma_star".
    draw_margin: Any = 0.05
    p_thresh: float = PASS_MARK  # absolute and setter_vs_solver rules: p(correct) at or above this passes
    # setter_vs_solver: a round whose setter's last task was well-formed but unsolved by the setter:
    # loss (it forfeits to every answerer) or tie (a draw with each; ZeroSumEval's PyJail)
    own_unsolved: OwnUnsolved = OwnUnsolved.loss







def validate_rating(r: Any) -> None:
    """A rating's range checks (its settings, or a composed ``rating`` section)."""
    if hasattr(r, "outcome"):
        _check(str(r.outcome) in set(OutcomeRule), "rating.outcome", r.outcome,
               f"must be one of {', '.join(OutcomeRule)}")
    if hasattr(r, "p_thresh"):
        _check(0.0 < r.p_thresh < 1.0, "rating.p_thresh", r.p_thresh, "must lie in (0, 1)")
    if hasattr(r, "draw_margin"):
        dm = r.draw_margin
        if isinstance(dm, str):
            _check(sigma_star_factor(dm) is not None, "rating.draw_margin", dm,
                   "give a number in [0, 1), sigma_star (the estimator's sigma*) or <k>*sigma_star")
        else:
            _check(isinstance(dm, (int, float)) and 0.0 <= dm < 1.0, "rating.draw_margin", dm, "must lie in [0, 1)")
    for key in ("sigma", "beta"):
        if hasattr(r, key):
            _check(getattr(r, key) > 0, f"rating.{key}", getattr(r, key), "must be > 0")
    if hasattr(r, "draw_probability"):
        dp = r.draw_probability
        _check(dp == "auto" or (isinstance(dp, (int, float)) and 0.0 <= dp < 1.0),
               "rating.draw_probability", dp, "give a number in [0, 1) or auto")
    for key, low in (("orderings", 1), ("average_last", 0), ("bootstrap", 1)):
        if hasattr(r, key):
            _check(getattr(r, key) >= low, f"rating.{key}", getattr(r, key), f"must be >= {low}")
    if hasattr(r, "alpha"):
        _check(r.alpha > 0, "rating.alpha", r.alpha, "must be > 0 (keeps unbeaten players finite)")
    if hasattr(r, "level"):
        _check(0 < r.level < 1, "rating.level", r.level, "must lie in (0, 1)")
    if hasattr(r, "k"):
        _check(r.k > 0, "rating.k", r.k, "must be > 0")
    if hasattr(r, "scale"):
        if isinstance(r.scale, str):  # Bradley–Terry: which units
            _check(r.scale in set(BTScale), "rating.scale", r.scale, f"must be one of {', '.join(BTScale)}")
        else:  # Elo: rating points per factor 10 of odds
            _check(r.scale > 0, "rating.scale", r.scale, "must be > 0")
    if hasattr(r, "own_unsolved"):
        _check(str(r.own_unsolved) in set(OwnUnsolved), "rating.own_unsolved", r.own_unsolved,
               f"must be one of {', '.join(OwnUnsolved)}")
    if hasattr(r, "draws"):
        _check(str(r.draws) in set(BTDraws), "rating.draws", r.draws, f"must be one of {', '.join(BTDraws)}")
    if hasattr(r, "role_weights"):
        weights = r.role_weights
        _check(set(weights) == {"setter", "solver"}, "rating.role_weights", dict(weights),
               "give a weight for each role: {setter: w, solver: w}")
        _check(all(isinstance(w, (int, float)) and w > 0 for w in weights.values()), "rating.role_weights",
               dict(weights), "weights must be > 0")
    if hasattr(r, "point"):
        _check(str(r.point) in set(BTPoint), "rating.point", r.point, f"must be one of {', '.join(BTPoint)}")
    if hasattr(r, "guess"):
        _check(0.0 <= r.guess < 1.0, "rating.guess", r.guess, "the guess floor must lie in [0, 1)")
    if hasattr(r, "prior_sd"):
        _check(r.prior_sd > 0, "rating.prior_sd", r.prior_sd, "must be > 0")
    if hasattr(r, "interval"):
        _check(r.interval in ("sandwich", "hessian", "bootstrap"), "rating.interval", r.interval,
               "must be one of sandwich, hessian, bootstrap")
    if hasattr(r, "time"):
        _check(r.time in ("none", "round"), "rating.time", r.time,
               "give none (every outcome one batch) or round (each round a time step)")
    if hasattr(r, "grid"):
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
    settings = ", ".join(sorted(str(k) for k in (estimator or {}) if k != "_target_")) or "none"
    _check(sigma_star is not None, key, value,
           f"ties the draw margin to the estimator's sigma_star, and this estimator has none (its settings: "
           f"{settings}): use estimator=algorithm1 or estimator=decided, or give the margin as a number")
    margin = k * float(sigma_star)
    _check(0.0 <= margin < 1.0, key, value, f"gives {margin} with sigma_star={sigma_star}: must lie in [0, 1)")
    return margin

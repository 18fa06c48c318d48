"""The rating backends' config schemas (``conf/rating/*.yaml``) and their range checks.

Each schema names its backend by ``_target_`` and checks what types cannot in its ``check``
(:mod:`skate.errors`: the problems it finds); :func:`validate_rating` raises the first, naming
``rating.<key>``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from skate.errors import ConfigError, Problem, Settings, raise_first, require
from skate.errors import check as _check
from skate.runlog.records import PASS_MARK


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
class RatingConfig(metaclass=Settings):
    """What every rating backend's settings are (the ``rating`` section's type): each backend's
    schema extends it (see the ``rating`` registry in :mod:`skate.ratings.base`), and checks its
    own fields in ``check`` (adding to ``super().check()``)."""

    def check(self) -> list[Problem]:
        """What types cannot say is wrong with these settings (keys within ``rating``)."""
        return []


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

    def check(self) -> list[Problem]:
        dm = self.draw_margin
        if isinstance(dm, str):
            margin = require(
                sigma_star_factor(dm) is not None,
                "draw_margin",
                dm,
                "give a number in [0, 1), sigma_star (the estimator's sigma*) or <k>*sigma_star",
            )
        else:
            margin = require(isinstance(dm, (int, float)) and 0.0 <= dm < 1.0, "draw_margin", dm, "must lie in [0, 1)")
        return [
            *super().check(),
            *one_of(OutcomeRule, "outcome", self.outcome),
            *pass_mark(self.p_thresh),
            *margin,
            *one_of(OwnUnsolved, "own_unsolved", self.own_unsolved),
        ]


def one_of(kind: type[enum.Enum], key: str, value: Any) -> list[Problem]:
    """A setting that must name a member of the enum ``kind`` (its members listed if not)."""
    names = [m.value for m in kind]
    return require(str(value) in names, key, value, f"must be one of {', '.join(names)}")


def positive(owner: Any, *keys: str) -> list[Problem]:
    """Each of ``keys`` of ``owner`` must be > 0."""
    return [p for key in keys for p in require(getattr(owner, key) > 0, key, getattr(owner, key), "must be > 0")]


def pass_mark(p_thresh: float) -> list[Problem]:
    return require(0.0 < p_thresh < 1.0, "p_thresh", p_thresh, "must lie in (0, 1)")


def validate_rating(r: RatingConfig) -> None:
    """Raise :class:`~skate.errors.ConfigError` on the first problem of a rating's settings (a
    schema instance: a composed section is typed first, :func:`skate.settings.options.to_settings`),
    naming ``rating.<key>``."""
    if not isinstance(r, RatingConfig):
        raise ConfigError(
            f"rating: {type(r).__name__} settings are no rating backend's: compose the "
            "section over a rating schema (rating=<option>)"
        )
    raise_first(r.check(), "rating")


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
        _check(
            isinstance(value, (int, float)) and not isinstance(value, bool),
            key,
            value,
            "give a number in [0, 1), sigma_star (the estimator's sigma*) or <k>*sigma_star",
        )
        return float(value)
    sigma_star = (estimator or {}).get("sigma_star")
    settings = ", ".join(sorted(str(k) for k in (estimator or {}) if k != "_target_")) or "none"
    if sigma_star is None:
        raise ConfigError(
            f"{key}={value!r} is invalid: ties the draw margin to the estimator's sigma_star, and this "
            f"estimator has none (its settings: {settings}): choose an estimator with a sigma_star "
            "setting, or give the margin as a number"
        )
    margin = k * float(sigma_star)
    _check(0.0 <= margin < 1.0, key, value, f"gives {margin} with sigma_star={sigma_star}: must lie in [0, 1)")
    return margin

"""A skate run's matches in the layout ZeroSumEval's own rating code reads.

ZeroSumEval (zero-sum-eval 0.3.0) rates from a folder holding ``pool_config.yaml`` (its
``manager.max_player_attempts``) and one ``matches/<id>/scores.json`` per match: each of the two
players with its ``score`` (the higher wins; equal is a tie), its ``role`` and the ``attempts``
it used (at or over the limit, its score counts as minus infinity). :func:`write_matches` writes
a finished skate run that way, so that ``calculate_ratings`` from ZeroSumEval's package can rate
exactly the matches skate rated: every outcome of the setter_vs_solver rule (each task's setter
against each solver, and each forfeit) in the order skate rated them, under match folders
numbered in that order. Roles are ``setter`` and ``solver`` (give ``calculate_ratings`` role
weights under those names).

The outcomes are recomputed from the run's log with the run's outcome rule (its rating settings,
read through :func:`skate.settings.recorded.run_settings`; ``rating.outcome`` must be setter_vs_solver: the
only rule with matches in ZeroSumEval's sense), so a run rated with another backend exports too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skate.errors import ConfigError
from skate.ratings.config import OutcomeRule, OutcomeRuleConfig, RatingConfig
from skate.ratings.outcomes import PairOutcome, PairRule
from skate.runlog.events import Forfeit, read_run


def run_matches(run_dir: Path, rating: RatingConfig) -> list[PairOutcome]:
    """Every setter-vs-solver outcome of the run in ``run_dir``, in the order it was rated, under
    ``rating``'s rule: the run's rating settings (``skate.settings.recorded.run_settings(run_dir).rating``)."""
    run = read_run(Path(run_dir), keep_updates=0)
    outcome = getattr(rating, "outcome", None)
    if outcome != OutcomeRule.setter_vs_solver or not isinstance(rating, OutcomeRuleConfig):
        raise ConfigError(
            f"{run_dir} was rated with rating.outcome={outcome}: ZeroSumEval's matches "
            "are setter against solver (play it with rating=zerosumeval or rating.outcome=setter_vs_solver)"
        )
    rule = PairRule(OutcomeRule.setter_vs_solver, p_thresh=float(rating.p_thresh), own_unsolved=rating.own_unsolved)
    out: list[PairOutcome] = []
    for item in run.rating_stream():
        if isinstance(item, Forfeit):
            out += rule.forfeit_outcomes(item.task_id, item.setter, item.answerers, run.players, item.unsolved)
        else:
            out += rule.task_outcomes(item.task_id, item.p_correct, run.players, setter=item.setter)
    return out


def write_matches(run_dir: Path, out_dir: Path, rating: RatingConfig, max_player_attempts: int = 5) -> int:
    """Write the run's matches (under ``rating``'s rule: :func:`run_matches`) into ``out_dir`` as
    ZeroSumEval's rating code reads them; return how many."""
    out_dir = Path(out_dir)
    matches = run_matches(run_dir, rating)
    (out_dir / "matches").mkdir(parents=True, exist_ok=True)
    (out_dir / "pool_config.yaml").write_text(f"manager:\n  max_player_attempts: {max_player_attempts}\n")
    width = len(str(len(matches)))
    for k, o in enumerate(matches):
        folder = out_dir / "matches" / f"{k:0{width}d}"
        folder.mkdir(exist_ok=True)
        scores: dict[str, dict[str, Any]] = {}
        for name, won in ((o.a, o.result), (o.b, 1.0 - o.result)):
            scores[name] = {
                "score": 1 if won == 1.0 else 0,
                "role": "setter" if name == o.setter else "solver",
                "attempts": 0,
            }
        (folder / "scores.json").write_text(json.dumps(scores))
    return len(matches)

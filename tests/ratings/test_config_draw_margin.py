"""The relative rule's draw margin tied to the estimator's sigma* (the paper draws below sigma*)."""

from __future__ import annotations

import pytest

from skate.errors import ConfigError
from skate.ratings.base import rating
from skate.runlog.files import read_events
from skate.runner import run_game
from tests.test_runner_game import config


@pytest.mark.parametrize(
    ("margin", "estimator", "expected"),
    [
        ("sigma_star", {"estimator.sigma_star": 0.08}, 0.08),
        ("2*sigma_star", {"estimator.sigma_star": 0.03}, 0.06),
        ("0.5*sigma_star", {"estimator": "decided", "estimator.sigma_star": 0.1}, 0.05),
        (0.07, {}, 0.07),
    ],
)
def test_the_margin_follows_sigma_star(margin, estimator, expected):
    choice = {"estimator": estimator["estimator"]} if "estimator" in estimator else {}
    values = {k: v for k, v in estimator.items() if k != "estimator"}
    settings = config({"rating.draw_margin": margin, **values}, **choice)
    assert settings.rating.draw_margin == pytest.approx(expected)
    # the backend built from the settled section, as the game builds it (skate.settings.build.assemble)
    assert rating.build(settings.rating).rule.draw_margin == pytest.approx(expected)
    if hasattr(settings.estimator, "draw_margin"):  # the decided estimator settles the rating's own margin
        assert settings.estimator.draw_margin == pytest.approx(expected)


@pytest.mark.parametrize(
    ("margin", "estimator", "says"),
    [
        ("sigma_star", "fixed_n", "this estimator has none \\(its settings: n\\)"),
        ("sigma_sta", "algorithm1", "sigma_star .* or <k>\\*sigma_star"),
        ("-1*sigma_star", "algorithm1", "or <k>\\*sigma_star"),
        ("30*sigma_star", "algorithm1", "must lie in \\[0, 1\\)"),
    ],
)
def test_a_bad_tie_says_what_to_fix(margin, estimator, says):
    with pytest.raises(ConfigError, match=f"rating.draw_margin.*{says}"):
        config({"rating.draw_margin": margin}, estimator=estimator)


def test_a_game_draws_exactly_the_pairs_closer_than_sigma_star(tmp_path):
    out = tmp_path / "run"
    run_game(
        config(
            {
                "seed": 3,
                "game.rounds": 6,
                "rating.draw_margin": "sigma_star",
                "estimator.sigma_star": 0.15,
                "events.rating_updates": "pair",
            }
        ),
        out,
    )  # every single update logged
    events = read_events(out)
    assert events[0]["config"]["rating"]["draw_margin"] == pytest.approx(0.15)  # recorded as the number
    updates = [e for e in events if e["event"] == "rating"]
    gaps = [(abs(e["p_a"] - e["p_b"]), e["result"]) for e in updates]
    assert any(g < 0.15 for g, _ in gaps) and any(0.05 <= g for g, _ in gaps)
    assert all((result == 0.5) == (g < 0.15) for g, result in gaps)
    assert any(0.05 <= g < 0.15 and result == 0.5 for g, result in gaps)  # drawn only with the wider margin
    # skate.rate ties the margin to the run's own estimator
    from skate.settings.recorded import rate_run

    _, tied = rate_run(out, {"rating.draw_margin": "2*sigma_star"})
    _, plain = rate_run(out, {"rating.draw_margin": 0.3})
    _, own = rate_run(out)
    assert tied == plain and tied != own

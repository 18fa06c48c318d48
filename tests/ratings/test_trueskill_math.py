"""The closed-form TrueSkill update against the ``trueskill`` library, which stays the reference:
the same numbers to the last bit, on random matches and on every update of whole games."""

from __future__ import annotations

import json
import random
import warnings

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore", SyntaxWarning)
    import trueskill

import skate
from skate.ratings import trueskill_math as tsm
from skate.runlog.files import read_events
from skate.runner import run_game

BETA, TAU = 25 / 6, 25 / 300


def library(a: trueskill.Rating, b: trueskill.Rating, drawn: bool, p: float) -> tuple[trueskill.Rating, ...]:
    env = trueskill.TrueSkill(mu=25, sigma=25 / 3, beta=BETA, tau=TAU, draw_probability=p, backend=None)
    return trueskill.rate_1vs1(a, b, drawn=drawn, env=env)


def numbers(*ratings: trueskill.Rating) -> tuple[float, ...]:
    return tuple(x for r in ratings for x in (r.mu, r.sigma))


@pytest.mark.parametrize("p", [1e-4, 0.1, 0.35, 0.95])
def test_random_matches_give_the_librarys_numbers_bit_for_bit(p):
    rng = random.Random(int(p * 1e4))
    margin = tsm.draw_margin(p, BETA)
    for _ in range(3000):
        a = trueskill.Rating(rng.uniform(-10, 60), rng.uniform(0.02, 12))
        b = trueskill.Rating(rng.uniform(-10, 60), rng.uniform(0.02, 12))
        drawn = rng.random() < 0.4
        try:
            want = numbers(*library(a, b, drawn, p))
        except FloatingPointError:  # an upset beyond float precision: the same refusal
            with pytest.raises(FloatingPointError):
                tsm.rate_1vs1(a.mu, a.sigma, b.mu, b.sigma, drawn, BETA, TAU, margin)
            continue
        assert tsm.rate_1vs1(a.mu, a.sigma, b.mu, b.sigma, drawn, BETA, TAU, margin) == want


def test_the_start_and_the_margin_are_the_librarys():
    r = trueskill.Rating(25, 25 / 3)
    assert tsm.reported(25, 25 / 3) == (r.mu, r.sigma)
    env = trueskill.TrueSkill(beta=BETA, draw_probability=0.1)
    assert tsm.draw_margin(0.1, BETA) == trueskill.calc_draw_margin(0.1, 2, env=env)


@pytest.mark.parametrize("rating", [{}, {"rating.draw_probability": "auto"}], ids=["fixed_draws", "auto_draws"])
def test_every_update_of_a_game_is_the_librarys(tmp_path, rating):
    """A game logged per pair: each update, recomputed by the library from the two players'
    numbers before it (the previous lines of the log), is the logged one exactly."""
    run_game(
        skate.config(
            values={"seed": 4, "game.rounds": 3, "report": False, "events.rating_updates": "pair", **rating},
            logger="none",
        ),
        tmp_path,
    )
    events = read_events(tmp_path)
    state = {p["name"]: trueskill.Rating(25, 25 / 3) for p in events[0]["players"]}
    updates = [e for e in events if e["event"] == "rating"]
    assert len(updates) > 40
    draws = 0
    for n, u in enumerate(updates, 1):
        draws += u["result"] == 0.5
        # auto: the draw rate so far, this outcome included, once 20 are in (clipped as the backend does)
        p = min(max(draws / n, 1e-4), 0.95) if rating and n > 20 else 0.1
        a, b = state[u["a"]], state[u["b"]]
        if u["result"] == 0.0:
            new_b, new_a = library(b, a, False, p)
        else:
            new_a, new_b = library(a, b, u["result"] == 0.5, p)
        assert (u["mu_a"], u["sigma_a"], u["mu_b"], u["sigma_b"]) == numbers(new_a, new_b), u
        state[u["a"]], state[u["b"]] = new_a, new_b
    final = {r["player"]: r["mu"] for r in json.loads((tmp_path / "ratings.json").read_text())}
    assert final == {n: r.mu for n, r in state.items()}

"""What making a game's settings costs, each way skate makes them (issue 59): Hydra's compose on the
command line (``skate.cli.compose.settings_from``: composed, typed, settled, checked), the same
settings from the YAML presets without Hydra (``skate.config``), and built as dataclasses
(``settle(SkateConfig(...))``). N calls each with the same group choice and changing values, as
tests and tools make settings. CPU time is reported beside wall time: on a shared machine it is the
steadier of the two.

    .venv/bin/python bench/bench_compose.py [--calls 50] [--repeats 3]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from collections.abc import Callable

import skate
from skate.cli.compose import settings_from
from skate.games.mathquiz.config import MathQuizConfig
from skate.settings.options import settle


def by_hydra(i: int) -> skate.SkateConfig:
    return settings_from(["game=mathquiz", f"seed={i}", f"game.rounds={i % 7 + 1}", "players.simulated.0.skill=0.3"])


def by_presets(i: int) -> skate.SkateConfig:
    return skate.config(game="mathquiz", values={"seed": i, "game.rounds": i % 7 + 1, "players.simulated.0.skill": 0.3})


BASE = skate.SkateConfig()


def by_dataclasses(i: int) -> skate.SkateConfig:
    players = dataclasses.replace(
        BASE.players, simulated=[dataclasses.replace(BASE.players.simulated[0], skill=0.3), *BASE.players.simulated[1:]]
    )
    return settle(dataclasses.replace(BASE, game=MathQuizConfig(rounds=i % 7 + 1), seed=i, players=players))


def measure(make: Callable[[int], skate.SkateConfig], calls: int, repeats: int) -> tuple[list[float], list[float]]:
    make(0)  # the first call imports and reads what the later ones reuse
    walls, cpus = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        for i in range(calls):
            settings = make(i)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        assert settings.seed == calls - 1 and settings.game.rounds == (calls - 1) % 7 + 1
        assert settings.players.simulated[0].skill == 0.3
    return walls, cpus


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    same = {by_hydra(3) == by_presets(3) == by_dataclasses(3)}
    assert same == {True}, "the three ways disagree"
    for name, make in (
        ("Hydra's compose (skate.cli.compose.settings_from)", by_hydra),
        ("the YAML presets without Hydra (skate.config)", by_presets),
        ("dataclasses (settle(SkateConfig(...)))", by_dataclasses),
    ):
        walls, cpus = measure(make, args.calls, args.repeats)
        print(
            f"{name}: {statistics.median(cpus) / args.calls * 1000:.1f} ms of CPU a call (median of "
            f"{args.repeats} x {args.calls}; best {min(cpus) / args.calls * 1000:.1f}), wall "
            f"{statistics.median(walls) / args.calls * 1000:.1f} ms"
        )


if __name__ == "__main__":
    main()

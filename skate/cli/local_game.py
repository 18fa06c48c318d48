"""The command line of a game against small models served here (``skate local play`` and
``cohort``, :mod:`skate.cli.local`): the cohort's overrides and a short game's defaults, the
user's own overrides winning, and the run folder Hydra will write, for ``python -m skate`` to play
in its own process (:mod:`skate.local.play`) while the servers run."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from skate.local.models import COHORT, LocalError, base_env
from skate.paths import CONF_DIR

# A short game unless the overrides say otherwise (the user's value for a key wins).
PLAY_DEFAULTS = ("game.rounds=2", "estimator=fixed_n", "estimator.n=4")
# A cohort game: the fewer-calls preset (docs/fewer-calls.md), a few rounds, and where the answers
# name an option (cop, scp) each answer read from the model's probabilities in one call.
COHORT_DEFAULTS = ("experiment=fewer_calls", "game.rounds=3")
READ_GAMES = ("cop", "scp")


def cohort_defaults(overrides: Sequence[str]) -> tuple[str, ...]:
    """:data:`COHORT_DEFAULTS`, and ``estimator=logprobs`` where the game's answers name an option
    (:data:`READ_GAMES`, the default cop included) and no ``game.reasoning=true`` asks for working
    first (the user's own estimator wins either way: :func:`game_overrides`)."""
    game = next((o.split("=", 1)[1] for o in overrides if override_key(o) == "game"), "cop")
    reasoning = any(override_key(o) == "game.reasoning" and o.split("=", 1)[1].lower() == "true" for o in overrides)
    return COHORT_DEFAULTS + (("estimator=logprobs",) if game in READ_GAMES and not reasoning else ())


# ------------------------------------------------------------------------------------ play
def override_key(override: str) -> str:
    key = override.split("=", 1)[0].lstrip("+~")
    return key.removeprefix("override ").strip()


def game_overrides(
    overrides: Sequence[str],
    structured_falls_back: bool = True,
    players: Sequence[str] = ("players=local_tiny",),
    defaults: Sequence[str] = PLAY_DEFAULTS,
) -> list[str]:
    """``players`` (``players=local_tiny``) and ``defaults`` (:data:`PLAY_DEFAULTS`), except for
    keys the user set (``players`` where the user gives a roster: ``players=``, ``players.llm=``;
    one player's setting, ``players.llm.0.max_tokens=``, applies to the cohort), then the user's
    overrides. Where the client would not fall back from the
    json_schema form on this server (``structured_falls_back`` false: every call would fail),
    ``llm.structured=off`` unless the user set it."""
    given = {override_key(o) for o in overrides}
    chosen = {override_key(d) for d in defaults if "." not in override_key(d)}  # groups the defaults choose

    def set_by_user(key: str) -> bool:
        """The key, or a group whose option the defaults choose too and the user chose otherwise
        (``estimator=adaptive`` drops ``estimator.n=4``, a setting of the default's ``fixed_n``; a
        game the user chooses keeps ``game.rounds``, which every game has)."""
        parts = key.split(".")
        return key in given or any(".".join(parts[:i]) in given & chosen for i in range(1, len(parts)))

    # The user's own roster replaces the cohort; a setting of one of its players tweaks it.
    out = [] if given & {"players", "players.llm", "players.simulated"} else list(players)
    out += [d for d in defaults if not set_by_user(override_key(d))]
    if not structured_falls_back and not set_by_user("llm.structured"):
        out.append("llm.structured=off")
    return out + list(overrides)


def _quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _override_value(value: Any) -> str:
    """``value`` (a mapping, a string, a number) as a Hydra override writes it."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_override_value(v)}" for k, v in value.items()) + "}"
    return _quote(value) if isinstance(value, str) else str(value)


def cohort_players(names: Sequence[str]) -> list[str]:
    """The overrides for a cohort of ``names``: ``players=local_cohort`` for all four, or that
    group with ``players.llm`` cut down to ``names`` (each entry as the group file has it). Each
    model's api_base is read from its :func:`base_env` variable either way."""
    if list(names) == list(COHORT):
        return ["players=local_cohort"]
    path = Path(CONF_DIR) / "players" / "local_cohort.yaml"
    cohort = OmegaConf.to_container(OmegaConf.load(path))
    if not isinstance(cohort, dict):
        raise LocalError(f"{path} is not a players group (a mapping with an llm list)")
    entries = {e["name"]: e for e in cohort["llm"]}
    items = []
    for name in names:
        e = {**entries[name], "api_base": "${oc.env:" + base_env(name) + "}"}
        items.append(_override_value(e))
    return ["players=local_cohort", "players.llm=[" + ",".join(items) + "]"]


def resuming(overrides: Sequence[str]) -> bool:
    return any(o.startswith("resume=") for o in overrides)


def run_dir_override(overrides: Sequence[str], now: float | None = None) -> tuple[list[str], Path | None]:
    """``overrides`` with ``hydra.run.dir`` set to the folder Hydra would choose
    (``outputs/<date>/<time>``) unless given, and that folder (or the one being resumed)."""
    for o in overrides:
        if o.startswith("resume="):
            return list(overrides), Path(o.split("=", 1)[1])
        if override_key(o) == "hydra.run.dir":
            return list(overrides), Path(o.split("=", 1)[1])
    folder = Path("outputs") / time.strftime("%Y-%m-%d/%H-%M-%S", time.localtime(now))
    return [*overrides, f"hydra.run.dir={folder}"], folder


def play_command(
    overrides: Sequence[str], falls_back: Callable[[], bool] = lambda: True
) -> tuple[list[str], Path | None]:
    """``skate local play``'s game: the overrides ``python -m skate`` takes (:func:`game_overrides`
    over ``players=local_tiny``, or a resume as given) and its run folder. ``falls_back``: whether
    the client falls back from the json_schema form on this server (asked unless resuming)."""
    overrides, run_dir = run_dir_override(overrides)
    return (list(overrides) if resuming(overrides) else game_overrides(overrides, falls_back())), run_dir


def cohort_command(
    overrides: Sequence[str], names: Sequence[str], falls_back: Callable[[], bool] = lambda: True
) -> tuple[list[str], Path | None]:
    """``skate local cohort``'s game among the models ``names``: the overrides ``python -m skate``
    takes (:func:`cohort_players`, :func:`cohort_defaults`, the user's winning) and its run folder."""
    overrides, run_dir = run_dir_override(overrides)
    if resuming(overrides):
        return list(overrides), run_dir
    return game_overrides(overrides, falls_back(), cohort_players(names), cohort_defaults(overrides)), run_dir

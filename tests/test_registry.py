"""The registry per config group (skate/registry.py): every option's schema is registered, the
checks read capabilities from the registry, and a new rating backend is one module and its
options, nothing else."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from hydra.utils import get_object
from omegaconf import OmegaConf

import skate.ratings
from skate.config import CONF_DIR, REGISTRIES, ConfigError, compose_config, register_configs, validate
from skate.ratings.base import rating
from skate.registry import Registry
from skate.runner import run_game
from skate.estimators import estimator

pytestmark = pytest.mark.xdist_group("every_option")  # with tests/test_config.py: see there


@pytest.mark.parametrize("registry", REGISTRIES, ids=lambda r: r.group)
def test_every_option_of_a_group_is_a_registered_component(registry, monkeypatch):
    """Each conf/<group>/<option>.yaml composes to a schema of the group's registry, and the
    component the registry names is the one its _target_ builds."""
    for key in ("OPENAI_API_KEY",):
        monkeypatch.setenv(key, "test-key")
    options = sorted(p.stem for p in (Path(CONF_DIR) / registry.group).glob("*.yaml"))
    assert options
    for option in options:
        section = compose_config([f"{registry.group}={option}"])[registry.group]
        entry = registry.of(section)
        assert entry.group == registry.group
        assert get_object(section._target_) is entry.component, (option, entry)
    # every registered component is reachable by some option
    named = {registry.of(compose_config([f"{registry.group}={o}"])[registry.group]).name for o in options}
    assert named == set(registry.names()), f"registered but no conf/{registry.group}/*.yaml selects it"


def test_an_unknown_option_and_a_foreign_schema_say_what_exists():
    with pytest.raises(ConfigError, match="rating='nope' is not a registered rating: choose one of .*trueskill"):
        rating.get("nope")
    with pytest.raises(ConfigError, match="belong to no registered estimator .*algorithm1"):
        estimator.of(compose_config([]).rating)


def test_two_components_under_one_name_are_refused():
    from dataclasses import dataclass

    @dataclass
    class S:
        x: int = 0

    reg: Registry = Registry("thing", "skate.errors")
    reg.register("a", S)(type("A", (), {}))
    with pytest.raises(ValueError, match="thing=a is registered twice"):
        reg.register("a", S)(type("B", (), {}))


@pytest.mark.parametrize(("overrides", "says"), [
    # capabilities, not names: Elo says nothing about how sure its order is
    (["rating=elo", "estimator=adaptive"], "estimator=adaptive samples where the ranking is unsure, and rating=elo"),
    (["rating=elo", "stop.settled=0.9"], "rating=elo cannot say how sure it is"),
    (["estimator=adaptive", "schedule.mode=matches", "rating.outcome=setter_vs_solver"],
     "estimator='adaptive' is invalid: chooses who answers each task"),
    (["game=pyjail", "estimator=greedy", "sandbox=subprocess", "+game.allow_unsafe_sandbox=true"],
     "estimator='greedy' is invalid: scores one answer to one query"),
])
def test_the_checks_read_capabilities(overrides, says):
    try:
        cfg = compose_config(overrides)
    except Exception:  # noqa: BLE001 - a game without that key: compose without it
        cfg = compose_config([o for o in overrides if not o.startswith("+game.")])
    with pytest.raises(ConfigError, match=says.replace("(", r"\(").replace(")", r"\)")):
        validate(cfg)


BACKEND = '''
from __future__ import annotations

from dataclasses import dataclass

from skate.ratings.base import RatingBackend, RatingRow, rank_by_score, rating
from skate.ratings.config import OutcomeRuleConfig


@dataclass
class WinsConfig(OutcomeRuleConfig):
    _target_: str = "skate.ratings.wins.WinsRating"
    per_win: float = 1.0


@rating.register("wins", WinsConfig)
class WinsRating(RatingBackend):
    """Counts wins: a backend written for the test."""

    says_order = False

    def __init__(self, per_win: float = 1.0, **rule) -> None:
        super().__init__(**rule)
        self.per_win, self.score = per_win, {}

    def _add(self, name: str) -> None:
        self.score[name] = 0.0

    def apply(self, o) -> dict:
        if o.result != 0.5:
            self.score[o.a if o.result == 1.0 else o.b] += self.per_win
        return {"task_id": o.task_id, "a": o.a, "b": o.b, "result": o.result}

    def _table(self):
        ranks = rank_by_score([(n, self.score[n]) for n in self.players])
        return sorted((RatingRow(n, self.score[n], None, None, ranks[n]) for n in self.players),
                      key=lambda r: r.rank or 10**9)
'''


def test_a_new_rating_backend_is_its_module_and_nothing_else(tmp_path, monkeypatch):
    """A backend module dropped into skate/ratings/ (here: a folder added to the package's path)
    registers itself, its schema is the option rating=<name> (with no YAML of its own), the
    config checks know it, and a game is rated with it."""
    folder = tmp_path / "more_ratings"
    folder.mkdir()
    (folder / "wins.py").write_text(textwrap.dedent(BACKEND))
    monkeypatch.setattr(skate.ratings, "__path__", [*skate.ratings.__path__, str(folder)])
    monkeypatch.setattr(rating, "_loaded", False)
    monkeypatch.setattr(rating, "_entries", dict(rating._entries))
    monkeypatch.delitem(sys.modules, "skate.ratings.wins", raising=False)
    register_configs()
    assert "wins" in rating.names()
    cfg = compose_config(["rating=wins", "rating.per_win=2", "game.rounds=2", "players=simulated_four",
                          "logger=none", "report=false"])
    assert OmegaConf.get_type(cfg.rating).__name__ == "WinsConfig"
    with pytest.raises(ConfigError, match="rating=wins cannot say how sure it is"):
        validate(compose_config(["rating=wins", "stop.settled=0.9"]))
    run_game(cfg, tmp_path / "run")
    table = json.loads((tmp_path / "run" / "ratings.json").read_text())
    assert [r["rank"] for r in table] == [1, 2, 3, 4]
    assert sum(r["score"] for r in table) > 0 and all(r["score"] % 2 == 0 for r in table)


def _named_after(module: str, group: str) -> bool:
    return any(part.startswith(group) for part in module.split(".")[1:])


def test_each_sections_schema_and_registry_live_in_a_module_named_after_its_group(monkeypatch):
    """settings.<group> is typed by a schema from skate.<group>... (skate.estimators for estimator,
    skate.loggers for logger, skate.embedders for embedder, ...); the top level's own sections
    (stop, schedule, events, stages) live with the top-level schema in skate.config."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    settings = validate(compose_config([]))
    for name in vars(settings):
        section = getattr(settings, name)
        kinds = [type(s) for s in section] if isinstance(section, list) else [type(section)]
        for kind in kinds:
            if kind.__module__ == "builtins":
                continue
            assert _named_after(kind.__module__, name) or kind.__module__ == "skate.config", (name, kind)
    for registry in REGISTRIES:
        assert _named_after(registry.package, registry.group), registry.package
        for entry in registry:
            assert _named_after(entry.schema.__module__, registry.group), (entry.name, entry.schema.__module__)

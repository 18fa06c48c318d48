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

import skate
import skate.ratings
from skate.errors import ConfigError
from skate.estimators.base import estimator
from skate.paths import CONF_DIR
from skate.ratings.base import rating
from skate.registry import Registry
from skate.runner import run_game
from skate.settings.config import REGISTRIES
from skate.settings.options import section as composed_section


@pytest.mark.parametrize("registry", REGISTRIES, ids=lambda r: r.group)
def test_every_option_of_a_group_is_a_registered_component(registry, monkeypatch):
    """Each conf/<group>/<option>.yaml reads to a schema of the group's registry, and the
    component the registry names is the one its _target_ builds."""
    for key in ("OPENAI_API_KEY",):
        monkeypatch.setenv(key, "test-key")
    options = sorted(p.stem for p in (Path(CONF_DIR) / registry.group).glob("*.yaml"))
    assert options
    # each option's section as skate <group>=<option> makes it (typed, unchecked; read from the whole
    # settings, as some settings refer to another section's: an embedder's cache to llm's)
    sections = {option: composed_section(registry.group, **{registry.group: option}) for option in options}
    for option, section in sections.items():
        entry = registry.of(section)
        assert entry.group == registry.group
        assert get_object(section._target_) is entry.component, (option, entry)
    # every registered component is reachable by some option
    named = {registry.of(section).name for section in sections.values()}
    assert named == set(registry.names()), f"registered but no conf/{registry.group}/*.yaml selects it"


def test_an_unknown_option_and_a_foreign_schema_say_what_exists():
    with pytest.raises(ConfigError, match="rating='nope' is not a registered rating: choose one of .*trueskill"):
        rating.get("nope")
    with pytest.raises(ConfigError, match="belong to no registered estimator .*algorithm1"):
        estimator.of(skate.SkateConfig().rating)


def test_messages_list_names_as_a_sentence():
    from skate.registry import spoken

    assert [spoken([]), spoken(["a"]), spoken(["a", "b"]), spoken(["a", "b", "c"], "and")] == [
        "none",
        "a",
        "a or b",
        "a, b and c",
    ]
    assert spoken(estimator.names(lambda e: e.component.uses_order)) == "adaptive"


def test_two_components_under_one_name_are_refused():
    from dataclasses import dataclass

    @dataclass
    class S:
        x: int = 0

    reg: Registry = Registry("thing", "skate.errors")
    reg.register("a", S)(type("A", (), {}))
    with pytest.raises(ValueError, match="thing=a is registered twice"):
        reg.register("a", S)(type("B", (), {}))


@pytest.mark.parametrize(
    ("choices", "values", "says"),
    [
        # capabilities, not names: Elo says nothing about how sure its order is
        (
            {"rating": "elo", "estimator": "adaptive"},
            {},
            "estimator=adaptive samples where the ranking is unsure, and rating=elo",
        ),
        ({"rating": "elo"}, {"stop.settled": 0.9}, "rating=elo cannot say how sure it is"),
        (
            {"estimator": "adaptive"},
            {"schedule.mode": "matches", "rating.outcome": "setter_vs_solver"},
            "estimator='adaptive' is invalid: chooses who answers each task",
        ),
        (
            {"game": "pyjail", "estimator": "greedy", "sandbox": "subprocess"},
            {"game.allow_unsafe_sandbox": True},
            "estimator='greedy' is invalid: scores one answer to one query",
        ),
    ],
)
def test_the_checks_read_capabilities(choices, values, says):
    with pytest.raises(ConfigError, match=says.replace("(", r"\(").replace(")", r"\)")):
        skate.config(values=values, **choices)


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

    settings: WinsConfig

    def __init__(self, settings: WinsConfig | None = None, /, **values) -> None:
        super().__init__(settings, **values)
        self.per_win, self.score = self.settings.per_win, {}

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


@pytest.fixture
def add_backend(tmp_path, monkeypatch):
    """Drop a backend module into skate/ratings/ (a folder added to the package's path); the
    registry is restored by monkeypatch, so later tests see the options they list."""

    def add(name: str, source: str) -> None:
        folder = tmp_path / "more_ratings"
        folder.mkdir(exist_ok=True)
        (folder / f"{name}.py").write_text(textwrap.dedent(source))
        monkeypatch.setattr(skate.ratings, "__path__", [*skate.ratings.__path__, str(folder)])
        monkeypatch.setattr(rating, "_loaded", False)
        monkeypatch.setattr(rating, "_entries", dict(rating._entries))
        monkeypatch.delitem(sys.modules, f"skate.ratings.{name}", raising=False)

    return add


def test_a_new_rating_backend_is_its_module_and_nothing_else(tmp_path, add_backend):
    """A backend module dropped into skate/ratings/ (here: a folder added to the package's path)
    registers itself, its schema is the option rating=<name> (with no YAML of its own), the
    config checks know it, and a game is rated with it."""
    add_backend("wins", BACKEND)
    assert "wins" in rating.names()
    settings = skate.config(
        rating="wins",
        players="simulated_four",
        logger="none",
        values={"rating.per_win": 2, "game.rounds": 2, "report": False},
    )
    assert type(settings.rating).__name__ == "WinsConfig"
    with pytest.raises(ConfigError, match="rating=wins cannot say how sure it is"):
        skate.config(rating="wins", values={"stop.settled": 0.9})
    run_game(settings, tmp_path / "run")
    table = json.loads((tmp_path / "run" / "ratings.json").read_text())
    assert [r["rank"] for r in table] == [1, 2, 3, 4]
    assert sum(r["score"] for r in table) > 0 and all(r["score"] % 2 == 0 for r in table)


SURE_BACKEND = '''
from __future__ import annotations

from dataclasses import dataclass

from skate.errors import Problem, require
from skate.ratings.base import rating
from skate.ratings.config import OutcomeRuleConfig
from skate.ratings.elo import EloRating


@dataclass
class SureConfig(OutcomeRuleConfig):
    _target_: str = "skate.ratings.sure.SureRating"
    k: float = 16.0
    scale: float = 400.0
    initial: float = 1500.0
    spread: float = 1.0

    def check(self) -> list[Problem]:
        return [*super().check(), *require(self.spread > 0, "spread", self.spread, "must be > 0 (the test's own rule)")]


@rating.register("sure", SureConfig)
class SureRating(EloRating):
    """Elo that claims to say how sure its order is: a backend written for the test."""

    says_order = True  # (Elo's __init__ builds it from a SureConfig: spread is one of its settings)
'''


def test_a_registered_backend_checks_its_own_settings_and_joins_the_messages(add_backend):
    """A backend registered from outside skate/settings/config.py: its schema's own check runs (its key
    named under rating.), the shared rule's checks run through super(), and a backend that says
    how sure its order is appears in the messages that list those backends."""
    add_backend("sure", SURE_BACKEND)
    skate.config(rating="sure", values={"stop.settled": 0.9})  # it says order: it may stop early
    with pytest.raises(ConfigError, match=r"^rating.spread=-1.0 is invalid: must be > 0 \(the test's own rule\)$"):
        skate.config(rating="sure", values={"rating.spread": -1})
    with pytest.raises(ConfigError, match=r"^rating.p_thresh=1.5 is invalid"):  # the base schema's check
        skate.config(rating="sure", values={"rating.p_thresh": 1.5})
    says_order = ["bradley_terry", "irt", "sure", "trueskill", "ttt"]
    assert rating.names(lambda e: e.component.says_order) == says_order
    for choices, values in (
        ({"rating": "elo"}, {"stop.settled": 0.9}),
        ({"rating": "elo", "estimator": "adaptive"}, {}),
    ):
        with pytest.raises(ConfigError, match="use rating=bradley_terry, irt, sure, trueskill or ttt"):
            skate.config(values=values, **choices)


def _named_after(module: str, group: str) -> bool:
    """A part of the module's name is the group's (ratings for rating) or its stem (optimize for optimizer)."""
    return any(part.startswith(group) or (len(part) > 3 and group.startswith(part)) for part in module.split(".")[1:])


def test_each_sections_schema_and_registry_live_in_a_module_named_after_its_group(monkeypatch):
    """settings.<group> is typed by a schema from skate.<group>... (skate.estimators for estimator,
    skate.loggers for logger, skate.embedders for embedder, ...); the top level's own sections
    (stop, schedule, events, stages) live with the top-level schema in skate.settings.config."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    settings = skate.SkateConfig()
    for name in vars(settings):
        section = getattr(settings, name)
        kinds = [type(s) for s in section] if isinstance(section, list) else [type(section)]
        for kind in kinds:
            if kind.__module__ == "builtins":
                continue
            assert _named_after(kind.__module__, name) or kind.__module__ == "skate.settings.config", (name, kind)
    for registry in REGISTRIES:
        assert _named_after(registry.package, registry.group), registry.package
        for entry in registry:
            assert _named_after(entry.schema.__module__, registry.group), (entry.name, entry.schema.__module__)

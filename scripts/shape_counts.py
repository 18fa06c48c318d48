"""The package's shape in numbers (issue 48): how a finished run's settings are read, how the
checks dispatch, where libraries live, what the help shows. Run from the repository's root:

    .venv/bin/python scripts/shape_counts.py          # a table
    .venv/bin/python scripts/shape_counts.py --json   # the same as JSON

Everything is read with ``grep``-like scans and ``ast`` over ``skate/`` and ``tests/``, the
import graph with grimp (import-linter's), and the help by running ``skate play --help``, so
the same script measures any checkout of the project.
"""

from __future__ import annotations

import ast
import configparser
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.test_layers import cycles  # noqa: E402

PKG = ROOT / "skate"


def sources(base: Path = PKG) -> list[Path]:
    return sorted(p for p in base.rglob("*.py") if "__pycache__" not in p.parts)


def rel(p: Path) -> str:
    return str(p.relative_to(ROOT))


def grep(pattern: str, paths: list[Path]) -> list[str]:
    rx = re.compile(pattern)
    return [f"{rel(p)}:{i}" for p in paths for i, line in enumerate(p.read_text().splitlines(), 1) if rx.search(line)]


def trees(paths: list[Path]):
    for p in paths:
        yield p, ast.parse(p.read_text())


def calls_of(name: str, paths: list[Path]) -> list[str]:
    out = []
    for p, tree in trees(paths):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                called = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                if called == name:
                    out.append(f"{rel(p)}:{node.lineno}")
    return out


SETTINGS_NAMES = {"settings", "s", "cfg", "c", "r", "rating", "llm", "game_settings", "sandbox_cfg"}


def settings_typed_any(paths: list[Path]) -> list[str]:
    """Functions whose settings parameter (named settings, s, cfg, c, r, rating, llm, game_settings,
    sandbox_cfg) is typed Any or may be a composed DictConfig."""
    out = []
    for p, tree in trees(paths):
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
                    if a.arg in SETTINGS_NAMES and a.annotation is not None:
                        text = ast.unparse(a.annotation)
                        if text == "Any" or "DictConfig" in text:
                            out.append(f"{rel(p)}:{node.lineno} {node.name}({a.arg}: {text})")
    return out


def kwonly_flags(function: str, paths: list[Path]) -> list[str]:
    for p, tree in trees(paths):
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == function and "build" in p.name:
                return [a.arg for a in node.args.kwonlyargs]
    return []


def import_cycles() -> list[list[str]]:
    """Cycles between modules (imports inside functions included; a package and its own modules
    importing each other do not count)."""
    import grimp

    graph = grimp.build_graph("skate", include_external_packages=False)
    edges: dict[str, set[str]] = {}
    for a in graph.modules:
        for b in graph.find_modules_directly_imported_by(a):
            if not (a.startswith(b + ".") or b.startswith(a + ".")):
                edges.setdefault(a, set()).add(b)
    return cycles(edges)  # the suite's own Tarjan (tests/test_layers.py), over grimp's graph


def lint_exceptions() -> list[str]:
    cp = configparser.ConfigParser()
    cp.read(ROOT / ".importlinter")
    out = []
    for section in cp.sections():
        raw = cp[section].get("ignore_imports", "")
        out += [line.strip() for line in raw.splitlines() if line.strip() and not line.strip().startswith("#")]
    return out


def help_schemas() -> int:
    run = subprocess.run([sys.executable, "-m", "skate", "play", "--help"], cwd=ROOT, capture_output=True, text=True)
    return len(re.findall(r"\w+_schema\b", run.stdout))


def python_m_aliases() -> tuple[list[str], list[str]]:
    """``python -m skate.<tool>`` modules other than ``python -m skate``: (those that run their
    command with no word, those that say what replaced them: skate.cli.alias)."""
    quiet, warned = [], []
    for p in sources():
        if p == PKG / "__main__.py" or "cli" in p.relative_to(PKG).parts[:1]:
            continue
        text = p.read_text()
        is_main = p.name == "__main__.py" or re.search(r"^if __name__ == .__main__.:", text, re.M)
        if not is_main or not re.search(r"import main\b|\balias\(", text):
            continue
        (warned if re.search(r"\balias\(", text) else quiet).append(rel(p))
    return quiet, warned


def games_named_in_tests() -> list[str]:
    """Lines of tests outside tests/games/ that list several games by name."""
    tests = [p for p in sources(ROOT / "tests") if "games" not in p.relative_to(ROOT / "tests").parts[:1]]
    rx = re.compile(
        r"[\"']cop[\"'].*[\"']mathquiz[\"']|[\"']mathquiz[\"'].*[\"']pyjail[\"']|[\"']pyjail[\"'].*[\"']scp[\"']"
    )
    return [f"{rel(p)}:{i}" for p in tests for i, line in enumerate(p.read_text().splitlines(), 1) if rx.search(line)]


RESTATED = """
import dataclasses, inspect
from skate.augment import AugConfig, Augmentation
from skate.games import load_games
from skate.settings.config import REGISTRIES
parts = [(e.option, e.schema, e.component) for r in REGISTRIES for e in r]
parts += [(f"game={n}", g.config_schema, g) for n, g in load_games().items()] + [("aug", AugConfig, Augmentation)]
for option, schema, cls in parts:
    fields = {f.name for f in dataclasses.fields(schema)}
    for p in inspect.signature(cls.__init__).parameters:
        if p in fields:
            print(f"{option}: {cls.__name__}({p})")
"""

# Every schema a game's settings are made of: SkateConfig's sections, every registered option's
# schema and every game's, and the dataclasses nested in them; a field typed list[Any] or
# dict[str, Any] (Optional or not) is one whose values no schema types. Printed as module:Class.field.
UNTYPED = """
import dataclasses, typing
from skate.games import load_games
from skate.settings.config import SkateConfig
from skate.registry import Registry
import skate.settings.build  # imports every registry's module

seen, todo = set(), [SkateConfig, *(g.config_schema for g in load_games().values())]
for obj in list(vars(skate.settings.build).values()):
    if isinstance(obj, Registry):
        todo += [e.schema for e in obj.entries()]

def loose(hint):
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    origin = typing.get_origin(hint)
    if origin is typing.Union:
        return any(loose(a) for a in args)
    return origin in (list, dict) and args[-1] is typing.Any

def nested(hint):
    if dataclasses.is_dataclass(hint):
        yield hint
    for a in typing.get_args(hint):
        yield from nested(a)

while todo:
    cls = todo.pop()
    if cls in seen:
        continue
    seen.add(cls)
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        owner = next(c for c in cls.__mro__ if f.name in c.__dict__.get("__annotations__", {}))
        if loose(hint):
            print(f"{owner.__module__}:{owner.__qualname__}.{f.name}")
        todo += list(nested(hint))
"""


def untyped_schema_fields() -> list[str]:
    """Issue 59: fields of the settings' schemas whose values are untyped (list[Any], dict[str, Any]),
    each counted once, in the class that declares it."""
    probe = subprocess.run([sys.executable, "-c", UNTYPED], capture_output=True, text=True, cwd=ROOT)
    if probe.returncode != 0:
        return [f"the probe failed: {probe.stderr[-300:]}"]
    return sorted(set(probe.stdout.splitlines()))


def unexplained(fields: list[str]) -> list[str]:
    """Issue 59: the untyped schema fields with no reason written beside them: a ``# untyped: why``
    comment on the field's line or in the comment lines just above it."""
    out = []
    for entry in fields:
        module, _, name = entry.partition(":")
        cls, _, attr = name.rpartition(".")
        path = ROOT / (module.replace(".", "/") + ".py")
        lines = path.read_text().splitlines()
        node = next(
            (
                stmt
                for c in ast.walk(ast.parse("\n".join(lines)))
                if isinstance(c, ast.ClassDef) and c.name == cls
                for stmt in c.body
                if isinstance(stmt, ast.AnnAssign) and getattr(stmt.target, "id", "") == attr
            ),
            None,
        )
        if node is None:
            out.append(f"{entry} (not found in {rel(path)})")
            continue
        i, said = node.lineno - 1, "# untyped:" in lines[node.lineno - 1]
        while not said and i > 0 and lines[i - 1].strip().startswith("#"):
            i -= 1
            said = "untyped:" in lines[i]
        if not said:
            out.append(f"{rel(path)}:{node.lineno}")
    return out


def flattened_settings(paths: list[Path]) -> list[str]:
    """Issue 59: settings flattened to plain dicts to hand to a part or a library (asdict, OmegaConf's
    to_container, Hydra's instantiate) outside the command line and the conversion module; a
    record's own JSON (a ``to_json``/``as_dict`` method) is no settings'."""
    out = []
    for path in paths:
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
                continue
            if getattr(fn, "name", "") in ("to_json", "as_dict"):
                continue
            for stmt in fn.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    continue
                for node in ast.walk(stmt):
                    if isinstance(node, ast.Call):
                        f = node.func
                        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                        if name in ("asdict", "to_container", "instantiate"):
                            out.append(f"{rel(path)}:{node.lineno}")
    return sorted(set(out))


def restated_parameters() -> list[str]:
    """Issue 59, part 3: constructor parameters of a component that restate a field of its schema."""
    probe = subprocess.run([sys.executable, "-c", RESTATED], capture_output=True, text=True, cwd=ROOT)
    return probe.stdout.splitlines() if probe.returncode == 0 else [f"the probe failed: {probe.stderr[-300:]}"]


def python_surface(py: list[Path], cli: list[Path]) -> dict[str, list[str]]:
    """Issue 59's counts: skate from Python, and Hydra at the command line's edge only."""
    outside = [p for p in py if p not in cli and p.parent.name != "cli"]
    tests = sources(ROOT / "tests")
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            (
                "import dataclasses, skate\n"
                "print(' '.join(n for n in ('play', 'SkateConfig', 'load_run', 'rate') if not hasattr(skate, n)))\n"
                "from omegaconf import MISSING\n"
                "from skate.settings.config import SkateConfig, validate\n"
                "s = SkateConfig()\n"
                "gone = [f.name for f in dataclasses.fields(s) if isinstance(getattr(s, f.name), str) and getattr(s, f.name) == MISSING]\n"
                "print(' '.join(gone))\n"
                "gone or validate(s)\n"
            ),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    lines = probe.stdout.splitlines() + ["", ""]
    failed = [] if probe.returncode == 0 else ["validate(SkateConfig()) fails"]
    return {
        "sections SkateConfig() leaves missing, or a failed validate": lines[1].split() + failed,
        "of skate.play, SkateConfig, load_run, rate: not exported": lines[0].split(),
        "compose_config( calls outside skate/cli/": [c for c in calls_of("compose_config", outside)],
        "test files calling compose_config(": sorted({c.split(":")[0] for c in calls_of("compose_config", tests)}),
        "compose cache, apply_values, the __deepcopy__ patch, ConfigStore repo reads": grep(
            r"_COMPOSED\s*[:=]|def apply_values|__deepcopy__\s*=|ConfigStore\.instance\(\)\.repo", py
        ),
        "OmegaConf privates (_is_none, _get_node) outside cli/": grep(r"\._(is_none|get_node)\(", outside),
        # key=value split by hand, Hydra's override parser or OmegaConf's dotlist, or a writer of
        # override strings (fake_server's --model name=skill specs are no settings' overrides)
        "modules outside cli/ that parse or write override strings": sorted(
            {
                h.rsplit(":", 1)[0]
                for h in grep(
                    r'\.partition\("="\)|\.split\("=", ?1\)|from_dotlist\(|OverridesParser|def \w*override\w*\(|_override_value',
                    [p for p in outside if rel(p) != "skate/llm/fake_server.py"],
                )
            }
        ),
        "DictConfig / OmegaConf. / HydraConfig code lines outside cli/ and the conversion module": grep(
            r"^(?!\s*#).*(\bDictConfig\b|\bOmegaConf\.|\bHydraConfig\b)",
            [p for p in outside if p.name != "__init__.py" and rel(p) != "skate/settings/options.py"],
        ),
        "list[Any] / dict[str, Any] schema fields": (untyped := untyped_schema_fields()),
        "... of them with no reason beside them (# untyped: why)": unexplained(untyped),
        "settings flattened to dicts for a part or a library call": flattened_settings(
            [p for p in outside if rel(p) != "skate/settings/options.py"]
        ),
        "constructor parameters restating a schema field": restated_parameters(),
        "draw-margin defaults written in skate/ and conf/ (code, not comments)": grep(
            r"^[^#]*draw_margin[^=#]*=\s*0\.\d|^draw_margin:\s*0\.\d", [*py, *sorted((ROOT / "conf").rglob("*.yaml"))]
        ),
        "type: ignore comments": grep(r"type: ignore", py),
        "noqa comments": grep(r"# noqa", py),
    }


def main() -> None:
    py = sources()
    cli = sorted(PKG.glob("cli/*.py"))
    counts = {
        "recorded_config calls outside the settings' reader": [
            c for c in calls_of("recorded_config", py) if "recorded.py" not in c
        ],
        "OmegaConf.to_object of a recorded section outside the settings": [
            c for c in grep(r"to_object\(recorded_config", py)
        ],
        "raw recorded settings read with defaults (start.config[...] / .config.get)": grep(
            r"(start|record)\.config(\.get\(|\[)|\bconfig\.get\(\"(players|rating|game|estimator)\"", py
        ),
        "functions taking settings typed Any or DictConfig": settings_typed_any(py),
        "the pass mark's default 0.55 written in skate/ and conf/": grep(
            r"(p_thresh|pass_mark).*\b0\.55\b|\b0\.55\b.*(p_thresh|pass_mark)",
            py + sorted((ROOT / "conf").rglob("*.yaml")),
        ),
        "hasattr( lines in the range checks": grep(
            r"hasattr\(",
            [p for p in py if p.parent.name in ("ratings", "estimators") or p.name in ("estimators.py", "config.py")],
        ),
        "import-linter exceptions": lint_exceptions(),
        "cli/ modules over 150 lines": [
            f"{rel(p)} ({len(p.read_text().splitlines())})" for p in cli if len(p.read_text().splitlines()) > 150
        ],
        "top-level modules of skate/": [rel(p) for p in sorted(PKG.glob("*.py"))],
        "python -m aliases that run with no word": python_m_aliases()[0],
        "python -m aliases that say what replaced them (one release)": python_m_aliases()[1],
        "re-export lines (noqa: F401, not an import for its effect)": [
            line
            for line in grep(r"noqa: F401", py)
            if not re.search(
                r"import skate\.llm  # noqa|programs/drafting\.py",
                open(ROOT / line.split(":")[0]).read().splitlines()[int(line.split(":")[1]) - 1] + line,
            )
        ],
        "ConfigError imported through the settings (skate.config)": grep(
            r"from skate(\.settings)?\.config import .*\bConfigError\b", py + sources(ROOT / "tests")
        ),
        "assemble's keyword flags": kwonly_flags("assemble", py),
        "attributes set on parts after construction": grep(r"(?<!self)\.(record_pairs|on_void) = ", py),
        "import cycles between modules": [" <-> ".join(c) for c in import_cycles()],
        "tests outside tests/games/ that list the games": games_named_in_tests(),
    }
    counts.update(python_surface(py, cli))
    schemas = help_schemas()
    if "--json" in sys.argv:
        print(json.dumps({**counts, "*_schema options in skate play --help": schemas}, indent=1))
        return
    width = max(len(k) for k in counts)
    for key, items in counts.items():
        print(f"{key:<{width}}  {len(items) if not isinstance(items, int) else items}")
    print(f"{'*_schema options in skate play --help':<{width}}  {schemas}")
    if "-v" in sys.argv:
        for key, items in counts.items():
            print(f"\n## {key}")
            for item in items:
                print(f"  {item}")


if __name__ == "__main__":
    main()

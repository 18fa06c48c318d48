"""The package's shape, checked: the layers in ``.importlinter`` (import-linter), no import
cycle among skate's modules even counting imports made inside functions, few such imports, and
no module too long to read.

An upward import or a circle fails here with the offending line; docs/architecture.md says what
each layer holds.
"""

from __future__ import annotations

import ast
import configparser
import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "skate"
MAX_LINES = 800
MAX_FUNCTION_IMPORTS = 15


def lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).parent / "lint-imports"
    assert exe.exists(), "import-linter is not installed: bash scripts/setup.sh test"
    return subprocess.run(
        [str(exe), "--no-cache"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": os.pathsep.join([str(cwd), str(ROOT)]), "PATH": "/usr/bin:/bin"},
    )


def modules(package: Path) -> dict[str, Path]:
    out = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def import_edges(package: Path) -> tuple[dict[str, set[str]], list[str]]:
    """Every import of one of the package's modules by another: {importer: {imported}}, and the
    imports made inside functions as 'module:line -> target'. ``from pkg import name`` counts as
    an import of ``pkg.name`` when that is a module, else of ``pkg``."""
    mods = modules(package)

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, set[str]] = defaultdict(set)
    in_functions: list[str] = []
    for mod, path in mods.items():
        pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]

        def visit(node: ast.AST, in_function: bool) -> None:
            for child in ast.iter_child_nodes(node):
                if _main_guard(child):  # `if __name__ == "__main__":` runs only as python -m: no import of the module
                    continue
                inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                targets: list[str] = []
                if isinstance(child, ast.Import):
                    targets = [a.name for a in child.names]
                elif isinstance(child, ast.ImportFrom):
                    base = child.module or ""
                    if child.level:
                        up = pkg.split(".")[: len(pkg.split(".")) - child.level + 1]  # noqa: B023 - called within the iteration that defines it
                        base = ".".join(up + ([base] if base else []))
                    targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in child.names]
                found = {t for t in (resolve(t) for t in targets if t.split(".")[0] == package.name) if t and t != mod}  # noqa: B023 - called within the iteration that defines it
                edges[mod] |= found  # noqa: B023 - called within the iteration that defines it
                if inside and found:
                    in_functions.append(f"{mod}:{child.lineno} -> {', '.join(sorted(found))}")  # noqa: B023 - called within the iteration that defines it
                visit(child, inside)

        visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return edges, in_functions


def _main_guard(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.If)
        and isinstance(node.test, ast.Compare)
        and isinstance(node.test.left, ast.Name)
        and node.test.left.id == "__name__"
        and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in node.test.comparators)
    )


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in list(edges):
        if v not in index:
            connect(v)
    return out


def test_the_layers_hold():
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_an_upward_import_breaks_the_layers_and_names_its_line(tmp_path):
    shutil.copytree(PACKAGE, tmp_path / "skate", ignore=shutil.ignore_patterns("__pycache__", "data"))
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    records = tmp_path / "skate" / "runlog" / "records.py"
    lines = records.read_text().splitlines()
    records.write_text("\n".join([*lines, "def _upward():", "    import skate.runner  # noqa", ""]))
    done = lint_imports(tmp_path)
    assert done.returncode != 0
    assert "skate.runlog.records -> skate.runner" in done.stdout, done.stdout[-3000:]
    assert f"l.{len(lines) + 2}" in done.stdout, done.stdout[-3000:]


def test_a_new_game_is_held_to_the_game_contracts_without_naming_it(tmp_path):
    """The game contracts read the registry: a fifth game package, added as docs/adding-a-game.md
    says (and .importlinter left as it is), may not import another game, nor the engine it."""
    from tests.games.test_games_registry import GAME

    shutil.copytree(PACKAGE, tmp_path / "skate", ignore=shutil.ignore_patterns("__pycache__", "data"))
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    echo = tmp_path / "skate" / "games" / "echo"
    echo.mkdir()
    (echo / "__init__.py").write_text(textwrap.dedent(GAME) + "\nimport skate.games.cop.rules  # noqa\n")
    engine = tmp_path / "skate" / "engine.py"
    engine.write_text(engine.read_text() + "\n\ndef _reach():\n    import skate.games.echo  # noqa\n")
    done = lint_imports(tmp_path)
    assert done.returncode != 0
    out = " ".join(done.stdout.split())  # import-linter wraps long lines
    assert "Games do not import each other (the registered games: cop, echo, mathquiz, pyjail, scp) BROKEN" in out, out
    assert "skate.games.echo is not allowed to import skate.games.cop" in out, out
    assert "skate.engine is not allowed to import skate.games.echo" in out, out


def test_no_import_cycle_even_inside_functions():
    edges, _ = import_edges(PACKAGE)
    assert edges["skate.runner"] >= {"skate.settings.config", "skate.engine"}  # the scan sees imports at all
    found = cycles(edges)
    assert not found, f"import cycles among skate's modules: {found}"


def test_the_cycle_check_finds_a_circle_made_inside_a_function(tmp_path):
    pkg = tmp_path / "skate"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from skate import b\n")
    (pkg / "b.py").write_text("def f():\n    from skate.a import x\n")
    edges, inside = import_edges(pkg)
    assert cycles(edges) == [["skate.a", "skate.b"]]
    assert inside == ["skate.b:2 -> skate.a"]


def test_few_imports_of_skate_inside_functions():
    _, inside = import_edges(PACKAGE)
    assert len(inside) <= MAX_FUNCTION_IMPORTS, "\n".join(inside)


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_over_800_lines(path):
    n = len(path.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_LINES, f"{path.relative_to(ROOT)} has {n} lines: split it into modules named for what they hold"


# ------------------------------------------------------------------ the tests mirror the package
# Tests of the repository as a whole rather than of one module: the docs build, the import layers.
REPOSITORY_TESTS = {"test_docs.py", "test_layers.py"}


def test_the_tests_mirror_the_package():
    """tests/<path>/test_<name>.py tests skate/<path>/: <name> is one of that package's modules
    (or the package itself), optionally followed by _<topic> (test_engine_stop.py: engine.py's
    stopping rule); every test folder is a package's (or, under tests/games/, holds a game registered
    from outside skate in its game.py). A misplaced file fails here naming where it belongs."""
    tests = Path(__file__).resolve().parent
    wrong = []
    for f in sorted(tests.rglob("test_*.py")):
        rel = f.relative_to(tests)
        if str(rel) in REPOSITORY_TESTS:
            continue
        package = PACKAGE / rel.parent
        if not package.is_dir() and rel.parts[0] == "games" and (f.parent / "game.py").exists():
            package = f.parent  # a game registered from outside skate: its module lives in its test folder
        if not package.is_dir():
            wrong.append(f"tests/{rel}: skate/{rel.parent} is no package (put it beside the tests of its module)")
            continue
        names = (
            {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
            | {package.name}
            | {p.name for p in package.iterdir() if (p / "__init__.py").exists()}
        )
        stem = f.stem.removeprefix("test_")
        if not any(stem == n or stem.startswith(n + "_") for n in names):
            wrong.append(f"tests/{rel}: names no module of skate/{rel.parent} ({', '.join(sorted(names))})")
    assert not wrong, "\n".join(wrong)
    empty = [
        str(d.relative_to(tests))
        for d in tests.rglob("*")
        if d.is_dir()
        and d.name not in ("__pycache__", "data")
        and "__pycache__" not in d.parts
        and not any(d.rglob("test_*.py"))
    ]
    assert not empty, f"test folders with no test: {empty}"


def test_the_architecture_page_names_every_layer_of_the_contracts():
    """docs/architecture.md's layer table names each module of .importlinter's layers contract."""
    contracts = configparser.ConfigParser()
    contracts.read(ROOT / ".importlinter")
    listed = {
        m.strip().removeprefix("skate.")
        for line in contracts["importlinter:contract:layers"]["layers"].split("\n")
        for m in line.split("|")
        if m.strip()
    }
    page = (ROOT / "docs" / "architecture.md").read_text()
    table = page.split("| layer | modules | what it is |", 1)[1].split("\n\n", 1)[0]
    named = {
        cell
        for row in table.splitlines()[2:]
        for cell in re.findall(r"`([a-z_]+(?:\.[a-z_]+)*)`", re.split(r"(?<!\\)\|", row)[2])
    }
    assert named == listed, (
        f"in the contracts, not the page: {sorted(listed - named)}; "
        f"on the page, not in the contracts: {sorted(named - listed)}"
    )

from __future__ import annotations

import dataclasses
import gc
import os
import shutil
import warnings

import pytest

from skate.sandbox import AutoSandbox, Limits, Sandbox, SandboxUnavailable, SubprocessSandbox

TEST_LIMITS = Limits(timeout_s=2.0, cpu_s=2, memory_mb=256, max_output_bytes=4096)
# For programs meant never to end: stopped by the wall clock after half a second instead of
# burning TEST_LIMITS' two seconds of CPU each.
QUICK = dataclasses.replace(TEST_LIMITS, timeout_s=0.5)

# Sandboxes that must work on this machine: CI (root, packages installed by scripts/setup.sh)
# sets this so a missing jail fails the suite instead of quietly skipping its tests.
REQUIRED_SANDBOXES = os.environ.get("SKATE_REQUIRE_SANDBOXES", "").split()


@pytest.fixture(scope="session")
def sandbox() -> Sandbox:
    """The sandbox the game tests use: what ``sandbox=auto`` picks on this machine."""
    try:
        sb = AutoSandbox(limits=TEST_LIMITS)
    except SandboxUnavailable as exc:
        if REQUIRED_SANDBOXES:
            pytest.fail(f"no hardened sandbox works here, but {REQUIRED_SANDBOXES} are required: {exc}")
        warnings.warn(f"no hardened sandbox here, game tests use the subprocess one: {exc}", stacklevel=1)
        sb = SubprocessSandbox(limits=TEST_LIMITS)
    yield sb
    sb.close()


@pytest.fixture(scope="session", autouse=True)
def _one_jail_pool_per_sandbox_config():
    """Games played in this process (every run assembled by ``skate.settings.build.assemble``: ``run_game``,
    skate optimize's and skate sensitivity's in-process runs) with one sandbox config share one real jail pool, started, probed and chosen
    by ``sandbox=auto`` for the first of them, instead of each starting (and probing) its own: two
    warm jails, ~0.25 s of CPU and ~0.6 s, per game, where most games of the suite never run a
    program. Only a working jailed sandbox is kept; a config that fails to build still fails each
    time, and ``python -m skate`` subprocesses (tests/cli/test_play.py) build their own, as users do.
    The jails still wipe /tmp and fork a clean interpreter per program, so a game sees what a
    fresh pool gives it."""
    from omegaconf import OmegaConf

    from skate.sandbox.jail import JailSandbox
    from skate.settings import build

    pools: dict[str, tuple[JailSandbox, int]] = {}
    real = build.build_sandbox

    def shared(sandbox_cfg):
        key = OmegaConf.to_yaml(OmegaConf.structured(sandbox_cfg), resolve=True)
        sb, probed = pools.get(key, (None, 0))
        if sb is not None and not sb._closed:
            sb.executions = probed  # a game's summary counts its programs as a fresh pool's would
            return sb
        sb = real(sandbox_cfg)
        if isinstance(sb, JailSandbox):
            sb.close = lambda: None  # run_game closes its sandbox; this one closes at the end
            pools[key] = sb, sb.executions
        return sb

    mp = pytest.MonkeyPatch()
    mp.setattr(build, "build_sandbox", shared)  # raises if skate.settings.build stops having the name
    yield
    mp.undo()
    for sb, _ in pools.values():
        JailSandbox.close(sb)


SWEPT_GAMES = "cop,mathquiz".split(",")  # the games_sweep's two jobs, in job order (any two games would do)


@pytest.fixture(scope="session")
def games_sweep(tmp_path_factory):
    """One two-job sweep as a user runs it (``python -m skate -m game=cop,mathquiz``, the joblib
    launcher, W&B offline and the report on), read by every test of what a sweep leaves behind
    (tests/cli/test_play_sweep.py, tests/loggers/test_wandb_logger.py): (sweep folder, finished process)."""
    from tests.cli.test_play_sweep import sweep

    out = tmp_path_factory.mktemp("games_sweep")
    return out, sweep(out, f"game={','.join(SWEPT_GAMES)}", "report=true", logger=True)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` (scripts/test.sh), a test file at a time: each worker takes whole files,
    so a module-scoped fixture (a game the file's tests read) is made once, not once per worker;
    tests marked with one ``xdist_group`` (a session fixture they share) go to one worker together."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class ByGroupOrFile(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return scope if scope != nodeid else nodeid.split("::", 1)[0]

    return ByGroupOrFile(config, log)


def _freeze_what_is_alive() -> None:
    gc.collect()
    gc.freeze()


def pytest_collection_finish(session):
    """Everything alive once the tests are collected (skate, hydra, numpy, pytest and every test
    module) is moved out of the garbage collector's sight (``gc.freeze``): every game ends with a
    full collection (skate.runner's ``_release_memory``), and a full collection in a test process
    walks ~500k objects (0.15-0.3 s) when the libraries are loaded, most of them modules' own.
    Reference counting still frees them; only cycles among them are never collected."""
    _freeze_what_is_alive()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Again as each test file starts (its module fixtures not yet made, the last file's torn
    down): what the file before it loaded for good (matplotlib, pandas, scipy, DSPy) is frozen too."""
    path = item.nodeid.split("::", 1)[0]
    if getattr(item.session, "_skate_frozen_at", None) != path:
        item.session._skate_frozen_at = path
        _freeze_what_is_alive()


@pytest.fixture(scope="session")
def runs_to_bank(tmp_path_factory):
    """Two finished six-round MathQuiz games of the simulated cohort (known skills), for the
    leaderboard's tests (tests/leaderboard/, tests/cli/test_leaderboard.py) to bank."""
    import skate
    from skate.runner import run_game

    base = tmp_path_factory.mktemp("runs_to_bank")
    game = {"game.rounds": 6, "report": False, "print_table": False}
    for seed in (0, 1):
        run_game(skate.config(values={**game, "seed": seed}, game="mathquiz", logger="none"), base / f"r{seed}")
    return [base / "r0", base / "r1"]


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium (Debian's, driven by playwright) for a test module. Without it the
    module's browser tests skip, unless ``SKATE_REQUIRE_BROWSER`` is set (scripts/test.sh sets it
    for root, as CI runs), when they fail."""
    exe = shutil.which("chromium")
    why = None if exe else "no chromium on PATH (apt-get install chromium)"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        why = "playwright is not installed (bash scripts/setup.sh test)"
    if why:
        if os.environ.get("SKATE_REQUIRE_BROWSER"):
            pytest.fail(f"SKATE_REQUIRE_BROWSER is set but the page cannot be opened: {why}")
        pytest.skip(why)
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        yield b
        b.close()

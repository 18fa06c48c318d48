#!/usr/bin/env bash
# Set up .venv (idempotent) and run the test suite. Extra arguments go to pytest.
# The tests run in one worker per core (pytest-xdist). An extra worker to fill the waits on
# sandboxes, loopback servers and child processes no longer pays: on 2 cores, in alternating
# in-tree runs (BENCHMARKS.md, "Workers per core"), 3 workers took 618-633 s of CPU and 330-339 s,
# 2 workers 484-549 s and 290-319 s. -n on the command line overrides it (-n 0 runs them in this
# process, -n 1 in one worker).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
# As root, setup installs what both jails, the PostgreSQL server and Debian's chromium need
# (scripts/system-deps.sh), so the jail tests, the leaderboard's PostgreSQL tests and the browser
# tests of its page (tests/leaderboard/test_page.py) must run rather than skip.
if [ "$(id -u)" -eq 0 ]; then
    export SKATE_REQUIRE_SANDBOXES="${SKATE_REQUIRE_SANDBOXES-nsjail bwrap}"
    export SKATE_REQUIRE_POSTGRES="${SKATE_REQUIRE_POSTGRES-1}"
    export SKATE_REQUIRE_BROWSER="${SKATE_REQUIRE_BROWSER-1}"
fi
# Bytecode is written (and read by every worker and every `python -m skate` the tests start), even
# where the environment sets PYTHONDONTWRITEBYTECODE: compiling skate's modules again in each of
# the ~100 processes a run starts costs more than the whole of some test files.
# The linter first (ruff, configured in pyproject.toml): a second, and it names the line.
.venv/bin/ruff check --quiet skate tests bench scripts
.venv/bin/ruff format --check --quiet skate tests bench scripts  # the formatter's layout, [tool.ruff.format]
.venv/bin/mypy --no-error-summary  # the type checker next ([tool.mypy]: skate/); silent when clean
unset PYTHONDONTWRITEBYTECODE
# Nothing is compiled at install time (scripts/setup.sh). In a fresh environment one process
# collects the tests first, so that the workers, which start together, read the bytecode it writes
# instead of each compiling the same ~2,700 modules: 34 s of CPU for three cold workers, 24 s with
# this (12 s of it here). Once per environment and pyproject.toml.
stamp=".venv/.tests-collected-$(sha1sum pyproject.toml | cut -c1-12)"
if [ ! -e "$stamp" ]; then
    .venv/bin/python -m pytest --collect-only -q -p no:cacheprovider -p no:xdist tests >/dev/null 2>&1 || true
    touch "$stamp"
fi
parallel=(-n "$(nproc)")
# Work is handed out a test file at a time (tests/conftest.py's pytest_xdist_make_scheduler), so
# a file's module-scoped games are played once; tests marked with one xdist_group (a session
# fixture they share, e.g. the sweep) go to one worker together.
dist=(--dist loadgroup)
for arg in "$@"; do
    case "$arg" in
        -n|-n*|--numprocesses*) parallel=() ;;
        no:xdist) parallel=(); dist=() ;;
        -d|--dist*) dist=() ;;
    esac
done
exec .venv/bin/python -m pytest "${parallel[@]}" "${dist[@]}" "$@"

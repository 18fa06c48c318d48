#!/usr/bin/env bash
# Set up .venv (idempotent) and run the test suite. Extra arguments go to pytest.
# The tests run on every core (pytest-xdist, -n auto) unless the arguments say otherwise
# (-n 0 runs them in this process, -n 1 in one worker).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
# As root, setup installs what both jails need, so the jail tests must run rather than skip.
if [ "$(id -u)" -eq 0 ]; then
    export SKATE_REQUIRE_SANDBOXES="${SKATE_REQUIRE_SANDBOXES-nsjail bwrap}"
fi
parallel=(-n auto)
# Tests that read one expensive fixture (marked @pytest.mark.xdist_group) go to one worker, so
# that it is made once; the others are spread one by one as with the default --dist load.
dist=(--dist loadgroup)
for arg in "$@"; do
    case "$arg" in
        -n|-n*|--numprocesses*) parallel=() ;;
        no:xdist) parallel=(); dist=() ;;
        -d|--dist*) dist=() ;;
    esac
done
exec .venv/bin/python -m pytest "${parallel[@]}" "${dist[@]}" "$@"

#!/usr/bin/env bash
# Set up .venv (idempotent) and run the test suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
# As root, setup installs what both jails need, so the jail tests must run rather than skip.
if [ "$(id -u)" -eq 0 ]; then
    export SKATE_REQUIRE_SANDBOXES="${SKATE_REQUIRE_SANDBOXES-nsjail bwrap}"
fi
exec .venv/bin/python -m pytest "$@"

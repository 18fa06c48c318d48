#!/usr/bin/env bash
# Set up .venv (idempotent) and play the default game: 6 simulated players, 50 rounds.
# Extra arguments are Hydra overrides, e.g. `bash scripts/demo.sh aug=full_context seed=3`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m skate game=cop rating=trueskill aug=hist_perf "$@"

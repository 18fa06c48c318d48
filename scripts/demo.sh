#!/usr/bin/env bash
# Set up .venv (idempotent) and play the default game: 6 simulated players, 50 rounds.
# Extra arguments are Hydra overrides, e.g. `bash scripts/demo.sh aug=full_context seed=3`.
# Only the runtime is installed (scripts/test.sh adds the test tools and their environments);
# embedder=minilm among the overrides adds its weights, SKATE_EXTRAS=pdf,minilm adds extras.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="runtime${SKATE_EXTRAS:+,${SKATE_EXTRAS}}"
for arg in "$@"; do
    case "$arg" in
        embedder=minilm) extras="${extras},minilm" ;;
    esac
done
bash scripts/setup.sh "$extras"
exec .venv/bin/python -m skate game=cop rating=trueskill aug=hist_perf "$@"

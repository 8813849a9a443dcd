#!/usr/bin/env bash
# The safetensors_jvm_runtime package's tests (pytest, via uv, in this package's own environment
# with its "test" dependency group): the JDK search on fake installations, the jar search.
set -euo pipefail
source "$(dirname "$0")/../../../scripts/env.sh"
cd "$ST_ROOT/python/safetensors-jvm-runtime"
# The lock file uv writes stays local (git-ignored).
st_uv sync --quiet --group test
st_uv run --no-sync pytest -q "$@"

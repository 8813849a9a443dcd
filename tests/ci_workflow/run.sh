#!/usr/bin/env bash
# The CI workflow: valid against GitHub's workflow schema (offline: the schema ships inside
# check-jsonschema) and calling the repository's own test scripts.
set -euo pipefail
source "$(dirname "$0")/../../scripts/env.sh"
cd "$ST_ROOT/tests/ci_workflow"
st_uv sync --quiet
st_uv run --no-sync pytest -q "$@"

#!/usr/bin/env bash
# The clean room: builds the wheels (scripts/wheels.sh, from the Maven jars) and installs them the
# way users do, into fresh venvs with JAVA_HOME unset and Java 17 first on PATH (pytest, via uv).
# Needs the jars: 'mvn -B -ntp -DskipTests package' (scripts/test.sh runs it first).
set -euo pipefail
source "$(dirname "$0")/../../scripts/env.sh"
cd "$ST_ROOT/tests/clean_room"
bash "$ST_ROOT/scripts/wheels.sh" "$ST_ROOT/build/wheels" > /dev/null
# The venvs under test are made with this uv (the test runner's environment does not leak into them).
ST_UV="$(command -v uv || echo "$ST_ROOT/build/tools/uv-venv/bin/uv")"
export ST_UV ST_WHEELS="$ST_ROOT/build/wheels"
# The lock file uv writes stays local (git-ignored).
st_uv sync --quiet
st_uv run --no-sync pytest -q "$@"

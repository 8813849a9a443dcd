#!/usr/bin/env bash
# Interop suite: safetensors-jvm's CLI jar against the Hugging Face safetensors library (pytest, via uv).
# Needs java/cli/target/safetensors-cli.jar: build it with 'mvn -B -ntp -DskipTests package' (scripts/test.sh does).
set -euo pipefail
source "$(dirname "$0")/../../scripts/env.sh"
cd "$ST_ROOT/tests/interop"

jar="$ST_ROOT/java/cli/target/safetensors-cli.jar"
if [ ! -f "$jar" ]; then
  echo "error: java/cli/target/safetensors-cli.jar is missing; build it first with" >&2
  echo "       'mvn -B -ntp -DskipTests package' in the repository root (scripts/test.sh runs it)." >&2
  exit 1
fi

# pyproject.toml pins exact versions; the lock file uv writes stays local (git-ignored).
st_uv sync --quiet
st_uv run --no-sync pytest -q "$@"

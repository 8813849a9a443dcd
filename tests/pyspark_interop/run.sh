#!/usr/bin/env bash
# PySpark interop suite: the shaded connector jar in a local PySpark session, against files written
# with the Hugging Face safetensors library (pytest, via uv).
# Needs spark/target/safetensors-spark_2.13-*-all.jar: build it with 'mvn -B -ntp -DskipTests package'.
set -euo pipefail
source "$(dirname "$0")/../../scripts/env.sh"
cd "$ST_ROOT/tests/pyspark_interop"

shopt -s nullglob
jars=("$ST_ROOT"/spark/target/safetensors-spark_2.13-*-all.jar)
if [ ${#jars[@]} -eq 0 ]; then
  echo "error: spark/target/safetensors-spark_2.13-*-all.jar is missing; build it first with" >&2
  echo "       'mvn -B -ntp -DskipTests package' in the repository root (scripts/test.sh runs it)." >&2
  exit 1
fi
export SAFETENSORS_SPARK_JAR="${jars[0]}"

# pyproject.toml pins exact versions; the lock file uv writes stays local (git-ignored).
st_uv sync --quiet
st_uv run --no-sync pytest -q "$@"

#!/usr/bin/env bash
# The safetensors_spark package's tests (pytest, via uv, in this package's own environment with its
# "test" dependency group): on datasets the connector writes through PySpark.
# Needs spark/target/safetensors-spark_2.13-<version>-all.jar: 'mvn -B -ntp -DskipTests package'.
set -euo pipefail
source "$(dirname "$0")/../../../scripts/env.sh"
cd "$ST_ROOT/python/safetensors-spark"

if ! compgen -G "$ST_ROOT/spark/target/safetensors-spark_2.13-*-all.jar" > /dev/null; then
  echo "error: spark/target/safetensors-spark_2.13-<version>-all.jar is missing; build it first with" >&2
  echo "       'mvn -B -ntp -DskipTests package' in the repository root (scripts/test.sh runs it)." >&2
  exit 1
fi

# The lock file uv writes stays local (git-ignored).
st_uv sync --quiet --group test
st_uv run --no-sync pytest -q "$@"

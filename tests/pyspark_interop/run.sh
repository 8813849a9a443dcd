#!/usr/bin/env bash
# PySpark interop suite: the Spark connector's shaded jar under PySpark 4.2.0, checked with the
# Hugging Face safetensors library, numpy and ml_dtypes (pytest, via uv); and the preprocessor's
# shaded jar run by the wheel's bin/spark-submit (test_preprocess_submit.py).
# Needs spark/target/safetensors-spark_2.13-<version>-all.jar, spark/preprocess/target/*-all.jar and
# java/cli/target/safetensors-cli.jar: 'mvn -B -ntp -DskipTests package'.
set -euo pipefail
source "$(dirname "$0")/../../scripts/env.sh"
cd "$ST_ROOT/tests/pyspark_interop"

if ! compgen -G "$ST_ROOT/spark/target/safetensors-spark_2.13-*-all.jar" > /dev/null; then
  echo "error: spark/target/safetensors-spark_2.13-<version>-all.jar is missing; build it first with" >&2
  echo "       'mvn -B -ntp -DskipTests package' in the repository root (scripts/test.sh runs it)." >&2
  exit 1
fi

# pyproject.toml pins exact versions; the lock file uv writes stays local (git-ignored).
# --inexact keeps the package under test, installed next from the working tree (python/safetensors-spark).
st_uv sync --quiet --inexact
st_uv pip install --quiet --python .venv/bin/python --reinstall-package safetensors-spark "$ST_ROOT/python/safetensors-spark[mlflow]"
st_uv run --no-sync pytest -q "$@"

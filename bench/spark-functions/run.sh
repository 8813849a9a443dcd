#!/usr/bin/env bash
# st_to_array / arr_to_st vs the same conversion in a pandas UDF (numpy + ml_dtypes), one PySpark run.
# Usage: bench/spark-functions/run.sh [GiB of 16-bit tensors, default 1] [repeats, default 3]
# Writes bench/results/spark-functions.md and .png (and raw/spark-functions.json). Input datasets are
# generated once under build/bench-spark-functions and reused.
set -euo pipefail
source "$(dirname "$0")/../../scripts/env.sh"
cd "$ST_ROOT"
mvn -B -ntp -q -pl spark -am package -DskipTests -Dctest.skip.tests=true
jar="$(ls "$ST_ROOT"/spark/target/safetensors-spark_2.13-*-all.jar | head -n 1)"
mkdir -p "$ST_ROOT/build/bench-spark-functions"
cd "$ST_ROOT/bench/spark-functions"
st_uv sync --quiet
st_uv run --no-sync python bench_functions.py "$jar" "$ST_ROOT/build/bench-spark-functions" "${1:-1}" "${2:-3}" \
  "$ST_ROOT/bench/results"

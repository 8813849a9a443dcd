#!/usr/bin/env bash
# Python sampler benchmark: batches/s pulled through the Python binding (pull + numpy dict) vs the
# Java API (pull + close), B = 32 and 128, S = 1024, alternating runs; report and plot in
# bench/results/python-sampler.{md,png}. Usage: bench/python-sampler/run.sh [repeats=3] [rows=20000] [database]
# (a database directory, e.g. the one bench/sampler.sh built, instead of a generated one of that many rows).
set -euo pipefail
source "$(dirname "$0")/../../scripts/env.sh"
cd "$ST_ROOT"
repeats="${1:-3}"
rows="${2:-20000}"
db_args=()
if [ -n "${3:-}" ]; then
  db_args=(--db "$(cd "$3" && pwd)")
fi

mvn -B -ntp -q -pl java/sampler -am package -DskipTests -Dctest.skip.tests=true
SAFETENSORS_SAMPLER_JAR="$(ls "$ST_ROOT"/java/sampler/target/safetensors-sampler-*-all.jar | head -n 1)"
export SAFETENSORS_SAMPLER_JAR

cd bench/python-sampler
# --inexact keeps headwater's own module when it was installed into this venv by hand (adds its column).
st_uv sync --quiet --inexact
st_uv run --no-sync python bench.py --work "$ST_ROOT/build/bench-python-sampler" --repeats "$repeats" --rows "$rows" \
  ${db_args[@]+"${db_args[@]}"} --out "$ST_ROOT/bench/results/python-sampler"

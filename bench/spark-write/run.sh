#!/usr/bin/env bash
# Spark write throughput: format("safetensors") (kv and batch layouts, Tensor Struct and array<float>
# input) vs Parquet of the same cached DataFrame, one run. Writes bench/results/spark-write.md and .png
# (and raw/spark-write.json).
# Usage: bench/spark-write/run.sh [GiB=1] [repeats=5]; JFR=1 also records a flight recording of the
# run and prints its top execution-sample frames (build/bench-spark-write/write.jfr); CASES=<text> runs
# only the cases whose name contains it (e.g. CASES="[128]").
set -euo pipefail
source "$(dirname "$0")/../../scripts/env.sh"
cd "$ST_ROOT"
gib="${1:-1}"
repeats="${2:-5}"
work="$ST_ROOT/build/bench-spark-write"
mkdir -p "$work"

mvn -B -ntp -q -pl spark -am package -DskipTests -Dctest.skip.tests=true \
  dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$work/classpath"
jar="$(ls "$ST_ROOT"/spark/target/safetensors-spark_2.13-*-all.jar | head -n 1)"

flags=(--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow --add-modules=jdk.incubator.vector
  --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.lang.invoke=ALL-UNNAMED
  --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
  --add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED
  --add-opens=java.base/sun.util.calendar=ALL-UNNAMED --add-exports=java.base/sun.nio.ch=ALL-UNNAMED
  -Djdk.reflect.useDirectMethodHandle=false -Dio.netty.tryReflectionSetAccessible=true -Xmx8g)
if [ "${JFR:-0}" = 1 ]; then
  flags+=(-XX:FlightRecorderOptions=stackdepth=256 "-XX:StartFlightRecording=filename=$work/write.jfr,settings=profile")
fi

java "${flags[@]}" -cp "$jar:$(cat "$work/classpath")" bench/spark-write/SparkWriteBench.java \
  "$work" "$gib" "$repeats" "$ST_ROOT/bench/results" "${CASES:-}"

if [ "${JFR:-0}" = 1 ]; then
  jfr print --events jdk.ExecutionSample "$work/write.jfr" > "$work/samples.txt"
  python3 bench/spark-write/top_frames.py "$work/samples.txt"
fi

cd "$ST_ROOT/bench/spark-write"
st_uv sync --quiet
st_uv run --no-sync python report.py "$ST_ROOT/bench/results" "$work/table.md"

#!/usr/bin/env bash
# Spark scan benchmark: format("safetensors") vs Parquet of the same bytes, one run, result in
# bench/results/spark-read.md. Usage: bench/spark-read/run.sh [GiB=1] [repeats=5]
set -euo pipefail
source "$(dirname "$0")/../../scripts/env.sh"
cd "$ST_ROOT"
gib="${1:-1}"
repeats="${2:-5}"

mvn -B -ntp -q -pl spark -am package -DskipTests \
  dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$ST_ROOT/build/bench-spark-read.cp"
cp="$(cat "$ST_ROOT/build/bench-spark-read.cp")"
jar="$(ls "$ST_ROOT"/spark/target/safetensors-spark_2.13-*-all.jar | head -n 1)"

flags=(--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow --add-modules=jdk.incubator.vector
  --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.lang.invoke=ALL-UNNAMED
  --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
  --add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED
  --add-opens=java.base/sun.util.calendar=ALL-UNNAMED --add-exports=java.base/sun.nio.ch=ALL-UNNAMED
  -Djdk.reflect.useDirectMethodHandle=false -Dio.netty.tryReflectionSetAccessible=true -Xmx8g)

java "${flags[@]}" -cp "$jar:$cp" bench/spark-read/SparkReadBench.java \
  "$ST_ROOT/build/bench-spark-read" "$gib" "$repeats" "$ST_ROOT/bench/results/spark-read.md"

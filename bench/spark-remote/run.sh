#!/usr/bin/env bash
# Spark remote-read benchmark: per-tensor vs coalesced ranged reads of a dataset on s3proxy with a
# delay per request, one run; result in bench/results/spark-remote.md.
# Usage: bench/spark-remote/run.sh [files=4] [tensors per file=250] [latency ms=20] [repeats=3]
set -euo pipefail
source "$(dirname "$0")/../../scripts/env.sh"
cd "$ST_ROOT"
files="${1:-4}"
tensors="${2:-250}"
latency="${3:-20}"
repeats="${4:-3}"
work="$ST_ROOT/build/bench-spark-remote"
mkdir -p "$work"

# The connector (its shaded jar holds core and loader), Spark's test class path, and the loader's
# test class path (S3A client jars and the s3proxy launcher).
# (one reactor run: the relative output file lands in each module's own directory)
mvn -B -ntp -q -pl native,java/core,java/testkit-hdfs,java/loader,spark package -DskipTests -Dctest.skip.tests=true \
  dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/bench-spark-remote.cp
jar="$(ls "$ST_ROOT"/spark/target/safetensors-spark_2.13-*-all.jar | head -n 1)"
cp="$jar:$ST_ROOT/java/loader/target/test-classes:$(cat spark/target/bench-spark-remote.cp)"
cp="$cp:$(cat java/loader/target/bench-spark-remote.cp)"

flags=(--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow --add-modules=jdk.incubator.vector
  --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.lang.invoke=ALL-UNNAMED
  --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
  --add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED
  --add-opens=java.base/sun.util.calendar=ALL-UNNAMED --add-exports=java.base/sun.nio.ch=ALL-UNNAMED
  -Djdk.reflect.useDirectMethodHandle=false -Dio.netty.tryReflectionSetAccessible=true -Xmx3g
  -Ds3proxy.jar="$ST_ROOT/java/loader/target/s3proxy/s3proxy.jar")

java "${flags[@]}" -cp "$cp" bench/spark-remote/SparkRemoteBench.java \
  "$work" "$files" "$tensors" "$latency" "$repeats" "$ST_ROOT/bench/results/spark-remote.md"

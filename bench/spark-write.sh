#!/usr/bin/env bash
# Spark write throughput: format("safetensors") vs Parquet (binary column), same cached data, one run.
# Usage: bench/spark-write.sh [GiB, default 1]. Prints the RESULT line recorded in bench/results/spark-write.md.
set -euo pipefail
source "$(dirname "$0")/../scripts/env.sh"
cd "$ST_ROOT"
mvn -B -ntp -pl native,java/core,spark/hdfs-testkit,spark verify -Dctest.skip.tests=true \
  -Dtest=WriteBenchmark -Dsurefire.failIfNoSpecifiedTests=false \
  -Dbench.spark.write=true -Dbench.gib="${1:-1}" | grep -E "^(rows cached|round|RESULT)"

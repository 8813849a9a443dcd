#!/usr/bin/env bash
# Sampler throughput: samples/s at B = 32 and 128, S = 1024, on 1 and 2 threads, on a generated
# database of 2 M rows (about 4.3 M FK edges), plus heap allocation per batch and samples per
# CPU-second. With HEADWATER_BENCH_CMD set (see SamplerBench's javadoc) headwater runs on the same
# database in the same run as the baseline; otherwise the report says it is absent.
# Usage: bench/sampler.sh [rows, default 2000000] [timed batches at B=32, default 48]
# Writes bench/results/raw/sampler.json, bench/results/sampler.md and bench/results/sampler.png.
set -euo pipefail
source "$(dirname "$0")/../scripts/env.sh"
cd "$ST_ROOT"
rows="${1:-2000000}"
timed="${2:-48}"
db="bench/target/sampler-db-${rows}"
echo "==> build: native, core, sampler, benchmarks jar"
mvn -B -ntp -q -DskipTests -Dctest.skip.tests=true -pl native,java/core,java/sampler,bench -am package
echo "==> measure (database $db; generated on first use); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
java --enable-native-access=ALL-UNNAMED -Xmx3g -cp bench/target/benchmarks.jar \
  io.github.semyonsinchenko.safetensors.bench.SamplerBench "$db" bench/results/raw/sampler.json "$rows" "$timed"
echo "==> report"
st_uv run -q --project bench/python python bench/python/sampler_report.py \
  --raw bench/results/raw/sampler.json --out-dir bench/results

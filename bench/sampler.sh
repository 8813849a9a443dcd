#!/usr/bin/env bash
# Sampler throughput against headwater, side by side: samples/s (wall clock, the headline) and per
# CPU-second, peak RSS and open time of both samplers at B = 32 and 128, S = 1024, 1 and 2 threads,
# in alternating rounds, each run a process of its own; then the same on a larger database (scale).
#
#   HEADWATER_BENCH_CMD='/path/to/driver' HEADWATER_BUILD='how it was built' \
#     bench/sampler.sh [--db DIR | --rows N] [--scale-db DIR | --scale-rows N | --no-scale]
#                      [--rounds 3] [--min-seconds 10] [--max-load L] [--wait-idle S] [--allow-busy]
#
# Without --db, the database is built on first use under build/bench-sampler/ with the generator and
# the preprocessor (scripts/preprocess.sh generate --rows N, then --skip-embeddings); default 2,000,000
# rows, and 10,000,000 for the scale check. HEADWATER_BENCH_CMD is headwater's driver (built outside
# this repository; bench/README.md says what it must do); without it only our side runs. Before each
# run the script waits (up to --wait-idle seconds, default 600) for the 1-minute load average to fall
# to --max-load (default: CPUs / 2) and records it; if a run still started above it, no report is
# written (the raw data goes to build/bench-sampler/) unless --allow-busy is given.
# Writes bench/results/sampler.md, sampler.png and raw/sampler.json.
set -euo pipefail
source "$(dirname "$0")/../scripts/env.sh"
cd "$ST_ROOT"
db="" rows=2000000 scale_db="" scale_rows=10000000 scale=1 extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --db) db="$2"; shift 2 ;;
    --rows) rows="$2"; shift 2 ;;
    --scale-db) scale_db="$2"; shift 2 ;;
    --scale-rows) scale_rows="$2"; shift 2 ;;
    --no-scale) scale=0; shift ;;
    --rounds|--min-seconds|--max-load|--wait-idle|--warmup|--scale-rounds|--min-batches) extra+=("$1" "$2"); shift 2 ;;
    --allow-busy) extra+=("$1"); shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
work="$ST_ROOT/build/bench-sampler"

# A generated database: the generator's input, then the preprocessor's output (kept for later runs).
built_db() { # rows
  local dir="$work/db-$1"
  if [ ! -f "$dir/processed/synth/metadata.json" ]; then
    echo "==> building a $1-row database in $dir (generator + preprocessor, once)" >&2
    rm -rf "$dir"
    scripts/preprocess.sh generate --data-dir "$dir" --dataset synth --rows "$1" --files 1 >&2
    scripts/preprocess.sh --data-dir "$dir" --dataset synth --skip-embeddings >&2
  fi
  echo "$dir/processed/synth"
}
label="" scale_label=""
if [ -z "$db" ]; then
  db=$(built_db "$rows")
  label="scripts/preprocess.sh generate --rows $rows, then --skip-embeddings"
fi
if [ "$scale" = 1 ] && [ -z "$scale_db" ]; then
  scale_db=$(built_db "$scale_rows")
  scale_label="scripts/preprocess.sh generate --rows $scale_rows, then --skip-embeddings"
fi

echo "==> build: native, core, sampler, benchmarks jar"
mvn -B -ntp -q -DskipTests -Dctest.skip.tests=true -Djazzer.skip=true -pl native,java/core,java/sampler,bench -am package
ours="java --enable-native-access=ALL-UNNAMED -Xmx4g -cp $ST_ROOT/bench/target/benchmarks.jar io.github.semyonsinchenko.safetensors.bench.SamplerBench"
if [ -z "${HEADWATER_BENCH_CMD:-}" ]; then
  echo "note: HEADWATER_BENCH_CMD is not set: headwater is not run, the report has no baseline" >&2
fi
scale_args=()
if [ "$scale" = 1 ]; then
  scale_args=(--scale-db "$scale_db" --scale-label "$scale_label")
fi
echo "==> measure (load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
st_uv run -q --project bench/python python bench/python/sampler_bench.py --ours "$ours" \
  --db "$db" --db-label "$label" ${scale_args[@]+"${scale_args[@]}"} \
  --jvm "$(java -version 2>&1 | head -n 1 | sed 's/"//g')" \
  --raw bench/results/raw/sampler.json --busy-raw "$work/sampler-busy.json" --out-dir bench/results ${extra[@]+"${extra[@]}"}

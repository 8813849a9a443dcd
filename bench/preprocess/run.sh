#!/usr/bin/env bash
# Preprocessor benchmark: rows per second and peak memory of scripts/preprocess.sh on local[2] for a
# generated input (default 5,000,000 rows, --embedder none so no network is timed).
#   bench/preprocess/run.sh [rows]
# headwater's preprocessor runs on the same files in the same run when HEADWATER_PREPROCESS names its
# built binary (cargo build --release --bin preprocess); otherwise the result says it was not run.
# HEADWATER_WAIT_SECONDS waits that long for the binary to appear (a build still running), untimed.
# Writes this run's result at the top of bench/results/preprocess.md and keeps the sections below it
# (from its first "## " heading: earlier runs, annotated by hand). The load average before and after
# is recorded: on a shared machine the numbers are only comparable within one run. BENCH_JAVA_OPTS adds JVM options to our run
# (e.g. -XX:StartFlightRecording=filename=ours.jfr for a profile). BENCH_REUSE_INPUT=1 keeps the input
# an earlier run generated in BENCH_DIR (same row count) instead of generating it again.
set -euo pipefail
source "$(dirname "$0")/../../scripts/env.sh"
cd "$ST_ROOT"
rows=${1:-5000000}
work=${BENCH_DIR:-$ST_ROOT/build/bench-preprocess}
heap=${BENCH_HEAP:-4g}
result=bench/results/preprocess.md
# Build (when the sources are newer) before any clock starts, so no run times a Maven build.
scripts/preprocess.sh build
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

if [ "${BENCH_REUSE_INPUT:-0}" = 1 ] && [ -f "$work/generate.log" ]; then
  # The generator is deterministic: an earlier run's input of the same size is the same input.
  echo "==> reusing the input in $work" >&2
  rm -rf "$work/ours/processed" "$work/headwater"
else
  rm -rf "$work"
  mkdir -p "$work"
  echo "==> generating about $rows rows into $work" >&2
  PREPROCESS_JAVA_OPTS="-Xmx$heap" scripts/preprocess.sh generate --data-dir "$work/ours" --dataset bench \
    --rows "$rows" --files 1 --master 'local[2]' 2> "$work/generate.log"
  # headwater opens raw/X/<table>.parquet as one file: move each table's single part out of Spark's directory.
  for d in "$work"/ours/raw/bench/*.parquet; do
    part=$(ls "$d"/part-*.parquet | head -n 1)
    mv "$part" "$d.single"
    rm -rf "$d"
    mv "$d.single" "$d"
  done
fi
total_rows=$(sed -n 's/.*(\([0-9]*\) rows).*/\1/p' "$work/generate.log" | tail -n 1)

measure() { # name, then the command; sets seconds and rss_mb
  local name=$1
  shift
  # Untimed: the page cache's dirty pages (the earlier run's output, ~2 GB for headwater's) are
  # written back now rather than during this run, where the writeback slowed ours by up to a third.
  sync
  /usr/bin/time -v -o "$work/$name.time" "$@" > "$work/$name.log" 2>&1
  seconds=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$work/$name.time")
  rss_mb=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$work/$name.time")
}

echo "==> ours: scripts/preprocess.sh --embedder none --master local[2] (-Xmx$heap)" >&2
measure ours env PREPROCESS_JAVA_OPTS="-Xmx$heap ${BENCH_JAVA_OPTS:-}" scripts/preprocess.sh --data-dir "$work/ours" --dataset bench \
  --embedder none --master 'local[2]'
ours_s=$seconds
ours_mb=$rss_mb

hw_line="| headwater preprocess --skip-embeddings | not run: HEADWATER_PREPROCESS is not set | | |"
if [ -n "${HEADWATER_PREPROCESS:-}" ]; then
  mkdir -p "$work/headwater"
  ln -s "$work/ours/raw" "$work/headwater/raw"
  ln -s "$work/ours/metadata" "$work/headwater/metadata"
  # HEADWATER_WAIT_SECONDS: the binary may still be building; wait for it (not timed).
  waited=0
  while [ ! -x "$HEADWATER_PREPROCESS" ] && [ "$waited" -lt "${HEADWATER_WAIT_SECONDS:-0}" ]; do
    sleep 10
    waited=$((waited + 10))
  done
  if [ ! -x "$HEADWATER_PREPROCESS" ]; then
    echo "error: HEADWATER_PREPROCESS=$HEADWATER_PREPROCESS is not an executable file" >&2
    exit 1
  fi
  echo "==> headwater: $HEADWATER_PREPROCESS --skip-embeddings" >&2
  measure headwater "$HEADWATER_PREPROCESS" --data-dir "$work/headwater" --dataset bench --skip-embeddings
  hw_line=$(printf '| headwater preprocess --skip-embeddings | %s | %.0f | %s |' "$seconds" \
    "$(echo "$total_rows / $seconds" | bc -l)" "$rss_mb")
  ratio=$(echo "$seconds / $ours_s" | bc -l)
  echo "==> comparing the two outputs file by file (bench/preprocess/compare.py)" >&2
  if python3 bench/preprocess/compare.py "$work/headwater/processed/bench" "$work/ours/processed/bench" \
      > "$work/compare.txt" 2>&1; then
    equivalence="every file equal (graph.bin's outgoing lists as multisets, headwater's Q9)"
  else
    equivalence="DIFFERENCES, see below"
  fi
fi
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

history=""
if [ -f "$result" ]; then
  history=$(sed -n '/^## /,$p' "$result")
fi
{
  echo "# Preprocessor benchmark"
  echo
  echo "\`bench/preprocess/run.sh $rows\` on $(date -u +%Y-%m-%d), $(nproc) cores, JDK $(java -version 2>&1 | head -n 1 | cut -d'"' -f2)."
  echo "Input: the generator's users/posts/comments/votes, $total_rows rows, one Parquet file per table;"
  echo "no embeddings (zero vectors), so only the preprocessing itself is timed. Peak memory is the"
  echo "process's maximum resident set size (driver and the local[2] executors share one JVM, -Xmx$heap)."
  echo
  echo "| run | wall s | rows/s | peak RSS MiB |"
  echo "|---|---|---|---|"
  printf '| ours, Spark local[2] | %s | %.0f | %s |\n' "$ours_s" "$(echo "$total_rows / $ours_s" | bc -l)" "$ours_mb"
  echo "$hw_line"
  echo
  if [ -n "${ratio:-}" ]; then
    printf 'Speed relative to headwater in the same run: %.2fx (headwater wall time / ours).\n\n' "$ratio"
    echo "Equivalence on this input (ours against headwater's output): $equivalence."
    echo
    echo '```'
    cat "$work/compare.txt"
    echo '```'
    echo
  fi
  echo "Load average (1/5/15 min) before: $load_before; after: $load_after. The machine is shared with other"
  echo "jobs; wall times include Spark's start (several seconds) and are only comparable within one run."
  echo
  echo "Stage times of our run (from its progress log):"
  echo
  echo '```'
  grep -E '^[0-9:]{8} stage|wrote ' "$work/ours.log" | sed "s#$work/#\$BENCH_DIR/#" || true
  echo '```'
} > "$result.new"
cat "$result.new"
if [ -n "$history" ]; then
  { echo; echo "$history"; } >> "$result.new"
fi
mv "$result.new" "$result"

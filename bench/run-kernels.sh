#!/usr/bin/env bash
# Measures the conversion and gather kernels and writes bench/results/kernels.md + kernels.png.
#
#   bench/run-kernels.sh            the measurement (about 50 minutes on 2 cores; run it on a quiet machine)
#   bench/run-kernels.sh --quick    a smoke run (about 10 minutes): proves the harness works end to end and
#                                   writes to bench/results/smoke/ (ignored by git), never over the real results
#
# Extra arguments after the options go to JMH (e.g. a benchmark regex: `bench/run-kernels.sh --quick Gather`);
# then only that one JMH run is made. JMH_ARGS replaces the default JMH iteration arguments.
set -euo pipefail
source "$(dirname "$0")/../scripts/env.sh"
cd "$ST_ROOT"

mode=full
if [ "${1:-}" = "--quick" ]; then
  mode=quick
  shift
fi
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,9p' "$0"
  exit 0
fi

if [ "$mode" = quick ]; then
  out_dir=bench/results/smoke
  default_jmh="-wi 1 -w 300ms -i 2 -r 200ms -f 1"
  gather_jmh="$default_jmh"
  gather_rounds=1
  gather_info_rounds=1
  guard_jmh="-wi 1 -w 300ms -i 2 -r 200ms -f 1" # two paired iterations: the fewest with an error
  peer_args=(--quick)
else
  out_dir=bench/results
  # 3 warm-up + 4 measured iterations of 1 s, one fork per parameter combination.
  # Two warm-ups are not enough for the Vector path to reach C2 on a busy machine.
  default_jmh="-wi 3 -w 1s -i 4 -r 1s -f 1"
  # Random rows of a 1 GiB table vary with where the table and the indices land (pages, cache
  # sets): one fork of 4 iterations gave errors up to +-50% of the mean. The target gathers get one
  # fork of 20 iterations in each of 10 rounds (below), their info rows (4 KiB pages, one thread) in
  # the first 3 rounds. On a KVM AMD EPYC 3 forks of 10 iterations gave errors of 10-17%
  # (2026-11-26), 5 of 10 gave 6-7% in one report and 10.4% / 11.9% in the next, and 5 of 20 gave
  # 7.9% / 4.6% and then 10.7% / 9.7% (2026-11-27 02:28), the round means ranging from 2.8 to 4.8 ms
  # as the machine's speed moved: the spread between rounds dominates, and only more rounds shrink it.
  # The other gathers (scalar, vector, gather-and-convert) are for information.
  gather_jmh="-wi 3 -w 1s -i 20 -r 1s -f 1"
  gather_rounds=10
  gather_info_rounds=3
  # The fault guard's cost is paired inside each iteration (FaultGuardBench times blocks of calls with
  # the guard on, off, off, on, ...): 4 forks of 20 iterations a cell, 80 paired values.
  guard_jmh="-wi 3 -w 1s -i 20 -r 1s -f 4"
  peer_args=()
fi
jmh_args="${JMH_ARGS:-$default_jmh} -bm avgt -tu ns -prof gc"
gather_args="${JMH_ARGS:-$gather_jmh} -bm avgt -tu ns -prof gc"
guard_args="${JMH_ARGS:-$guard_jmh} -bm avgt -tu ns"
# The benchmarks of this report (the jar has others, e.g. OpenBench for bench/run-open.sh).
main_regex='ConvertBench|ConvertOtherBench|CopyBench|JdkF16Bench'
# The gather target: 2 threads, the table in the library's huge pages. Its info rows: one thread on
# the same table, and the table in 4 KiB pages (GatherBench's native offheap row is the one-thread
# form of that; GatherThpBench adds the 2-thread one).
target_gather=(GatherThpBench.gather$ -p memory=offheap-thp -p threads=2)
info_gathers=("GatherThpBench.gather$ -p memory=offheap-thp -p threads=1" "GatherThpBench.gather$ -p memory=offheap -p threads=2"
  "GatherBench.gather$ -p path=native")
other_gather_regex='Gather(Thp)?Bench\.gatherF16ToF32'
# Forks of the full mode: main 127 x ~9 s, native row gathers 10 rounds x 2 x ~26 s (the target) and 3 rounds x
# 8 x ~26 s (their info rows), other gathers 28 x ~10 s, fault guard 4 cells x 4 forks x ~25 s: about 50 minutes
# of JMH, plus the numpy peer and the build.

raw="$out_dir/raw"
mkdir -p "$raw"
log="$raw/build.log"
stamp() { date -u +"%Y-%m-%d %H:%M:%S UTC"; }
started=$(stamp)

echo "==> [1/6] $mode run, results in $out_dir/ (started $started)"
echo "==> [2/6] machine description"
st_uv run -q --project bench/python python bench/python/report.py machine --out "$raw/machine.json"
echo "    load average now: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine skews the numbers)"

echo "==> [3/6] build: native library, core, benchmarks jar (log: $log)"
if ! mvn -B -ntp -q -DskipTests -pl native,java/core,bench -am package >"$log" 2>&1; then
  tail -n 40 "$log"
  echo "error: the build failed; the whole log is $log" >&2
  exit 1
fi
jar=bench/target/benchmarks.jar
java_flags=(--enable-native-access=ALL-UNNAMED --add-modules=jdk.incubator.vector --sun-misc-unsafe-memory-access=allow)
java "${java_flags[@]}" -cp "$jar" io.github.semyonsinchenko.safetensors.bench.BenchInfo \
  >"$raw/java.json" 2>"$raw/java.log"
echo "    $(grep -o '"default_path_description": "[^"]*"' "$raw/java.json"); Java $(java -version 2>&1 | head -n 1)"

# One JMH run; its JSON into $1, the rest of the arguments to JMH.
jmh() {
  local json=$1
  shift
  # shellcheck disable=SC2068 # the arguments are lists of words on purpose
  if ! java --sun-misc-unsafe-memory-access=allow -jar "$jar" $@ -rf json -rff "$json" 2>&1 | tee -a "$raw/jmh.log"; then
    echo "error: JMH failed (its output is above and in $raw/jmh.log). If it could not take its lock, another" >&2
    echo "       JMH run is going on on this machine: wait for it, the numbers would be skewed anyway." >&2
    exit 1
  fi
}
: >"$raw/jmh.log"
if [ $# -gt 0 ]; then
  echo "==> [4/6] JMH: $jmh_args $*"
  jmh "$raw/jmh.json" $jmh_args "$@"
  rm -f "$raw/jmh-guard.json" "$raw/jmh-guard-on.json" "$raw/jmh-guard-off.json" "$raw/peer-take.json"
else
  echo "==> [4/6] JMH, five runs:"
  echo "    conversions and copies: $jmh_args $main_regex"
  jmh "$raw/jmh-main.json" $jmh_args "$main_regex"
  # The gather target compares two runs: one of them minutes apart from the other drifted 1.5x on this
  # KVM machine between a report's start and end. So the native row gathers run as rounds of one fork,
  # each after a numpy.take run (kernels_peer.py --only take); each side's rounds are pooled.
  echo "    native row gathers, $gather_rounds rounds of numpy.take then one fork of the target, the info rows in the first $gather_info_rounds: $gather_args"
  rounds=()
  takes=()
  for round in $(seq "$gather_rounds"); do
    st_uv run -q --project bench/python python bench/python/kernels_peer.py "${peer_args[@]}" --only take \
      --out "$raw/peer-take-$round.json"
    takes+=("$raw/peer-take-$round.json")
    jmh "$raw/jmh-gather-target-$round.json" $gather_args "${target_gather[@]}"
    rounds+=("$raw/jmh-gather-target-$round.json")
    if [ "$round" -le "$gather_info_rounds" ]; then
      for i in "${!info_gathers[@]}"; do
        # shellcheck disable=SC2086 # each entry is a regex and its -p options
        jmh "$raw/jmh-gather-info-$round-$i.json" $gather_args ${info_gathers[$i]}
        rounds+=("$raw/jmh-gather-info-$round-$i.json")
      done
    fi
  done
  st_uv run -q --project bench/python python bench/python/report.py pool --out "$raw/jmh-gather-native.json" "${rounds[@]}"
  st_uv run -q --project bench/python python bench/python/report.py pool-peer --out "$raw/peer-take.json" "${takes[@]}"
  rm "${rounds[@]}" "${takes[@]}"
  echo "    other gathers: $jmh_args"
  jmh "$raw/jmh-gather-scalar-vector.json" $jmh_args "GatherBench\.gather$" -p path=scalar,vector
  jmh "$raw/jmh-gather-convert.json" $jmh_args "$other_gather_regex"
  # The fault guard's cost: a widening and a narrowing, native, 4 KiB and 64 MiB, the guard switched
  # on and off in turn between blocks of calls (FaultGuardBench); the report reads each iteration's sides.
  echo "    fault guard, switched on and off between blocks of calls: $guard_args FaultGuardBench"
  jmh "$raw/jmh-guard.json" $guard_args FaultGuardBench
  python3 -c 'import json, sys; json.dump(sum((json.load(open(f)) for f in sys.argv[2:]), []), open(sys.argv[1], "w"), indent=1)' \
    "$raw/jmh.json" "$raw/jmh-main.json" "$raw/jmh-gather-native.json" "$raw/jmh-gather-scalar-vector.json" \
    "$raw/jmh-gather-convert.json"
  rm "$raw/jmh-main.json" "$raw/jmh-gather-native.json" "$raw/jmh-gather-scalar-vector.json" \
    "$raw/jmh-gather-convert.json"
fi

echo "==> [5/6] numpy / ml_dtypes peer timings"
st_uv run -q --project bench/python python bench/python/kernels_peer.py "${peer_args[@]}" --out "$raw/peer.json"

ended=$(stamp)
extra="$*"
# A run with a benchmark regex makes one JMH run with $jmh_args only.
if [ -n "$extra" ]; then
  jmh_desc="$jmh_args ${extra//[\"\\]/}"
else
  jmh_desc="$jmh_args; native row gathers: $gather_args; fault guard: $guard_args"
fi
cat >"$raw/run.json" <<EOF
{"mode": "$mode", "started": "$started", "ended": "$ended", "jmh_args": "$jmh_desc",
 "loadavg_end": ["$(cut -d' ' -f1 /proc/loadavg)", "$(cut -d' ' -f2 /proc/loadavg)", "$(cut -d' ' -f3 /proc/loadavg)"]}
EOF

echo "==> [6/6] report"
st_uv run -q --project bench/python python bench/python/report.py report --raw "$raw" --out-dir "$out_dir"
echo "==> done ($started to $ended): $out_dir/kernels.md, $out_dir/kernels.png"
sed -n '/^## Targets/,/^## How to read/p' "$out_dir/kernels.md" | sed '$d'

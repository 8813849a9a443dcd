#!/usr/bin/env bash
# Opening a 10,000-tensor file: SafetensorsFile.open + every tensor's metadata (JMH, OpenBench) vs
# Python safetensors' safe_open + keys() + get_slice metadata (bench/python/open_peer.py), on the
# same file, in one run; writes bench/results/open.md. A few minutes; run it on a quiet machine.
#
#   bench/run-open.sh             JMH_ARGS replaces the default JMH iteration arguments
set -euo pipefail
source "$(dirname "$0")/../scripts/env.sh"
cd "$ST_ROOT"

raw=bench/results/raw
mkdir -p "$raw"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
file="$work/many.safetensors"

echo "==> build (native, core, benchmarks jar)"
mvn -B -ntp -q -DskipTests -pl native,java/core,bench -am package >"$raw/open-build.log" 2>&1 || {
  tail -n 40 "$raw/open-build.log"; exit 1; }

echo "==> the file: 10,000 tensors, written by Python safetensors"
st_uv run -q --project bench/python python bench/python/open_peer.py make "$file"
echo "    load average now: $(cut -d' ' -f1-3 /proc/loadavg)"

echo "==> Python, run 1"
st_uv run -q --project bench/python python bench/python/open_peer.py time "$file" --out "$raw/open-peer-1.json"
echo "==> JMH: OpenBench"
# shellcheck disable=SC2086 # a list of words on purpose
java -jar bench/target/benchmarks.jar OpenBench -p file="$file" ${JMH_ARGS:--wi 5 -w 1s -i 5 -r 1s -f 3} \
  -bm sample -tu us -rf json -rff "$raw/open-jmh.json" | tee "$raw/open-jmh.log" | grep -E "^(Benchmark|OpenBench)"
echo "==> Python, run 2"
st_uv run -q --project bench/python python bench/python/open_peer.py time "$file" --out "$raw/open-peer-2.json"

machine="$(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), JDK $(java -version 2>&1 | head -n 1 | cut -d'"' -f2)"
st_uv run -q --project bench/python python bench/python/open_peer.py report --jmh "$raw/open-jmh.json" \
  --peer "$raw/open-peer-1.json" --peer "$raw/open-peer-2.json" --machine "$machine" --out bench/results/open.md
cat bench/results/open.md

#!/usr/bin/env bash
# Loader benchmark: chunked vs per-tensor loads of a checkpoint on s3proxy with a delay per request,
# plus the Python peers (s3fs + safetensors), in one run; result in bench/results/loader.md + .png.
# Usage: bench/loader/run.sh [MiB=1024] [tensors=1000] [latency ms=20] [repeats=5] [--cap-mbit N]
#   Five repeats because single loads of one variant differ by up to 2x; the report gives the median
#   and the spread. The default run takes about 5 minutes (2 cores), half of it the Python peers.
#   --cap-mbit N also runs the Java variants inside a private network namespace whose loopback is
#   capped with tc tbf (needs root and the ip/tc tools), and adds that table; --cap-only skips the
#   uncapped run and reuses bench/results/raw/loader.json.
set -euo pipefail
source "$(dirname "$0")/../../scripts/env.sh"
cd "$ST_ROOT"
cap=""
cap_only=""
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --cap-mbit) cap="$2"; shift 2 ;;
    --cap-only) cap_only=1; shift ;;
    *) args+=("$1"); shift ;;
  esac
done
mib="${args[0]:-1024}"
tensors="${args[1]:-1000}"
latency="${args[2]:-20}"
repeats="${args[3]:-5}"
work="$ST_ROOT/build/bench-loader"
mkdir -p "$work" bench/results/raw

mvn -B -ntp -q -pl native,java/core,java/testkit-hdfs,java/loader package -DskipTests -Dctest.skip.tests=true \
  dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$work/loader.cp"
cp="$ST_ROOT/java/loader/target/test-classes:$ST_ROOT/java/loader/target/classes:$(cat "$work/loader.cp")"
flags=(--enable-native-access=ALL-UNNAMED -Xmx2g -Ds3proxy.jar="$ST_ROOT/java/loader/target/s3proxy/s3proxy.jar")

st_uv sync -q --project bench/loader
py=("$ST_ROOT/bench/loader/.venv/bin/python" "$ST_ROOT/bench/loader/fsspec_peer.py")

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
if [ -z "$cap_only" ]; then
  java "${flags[@]}" -cp "$cp" bench/loader/LoaderBench.java "$work" bench/results/raw/loader.json \
    "$mib" "$tensors" "$latency" "$repeats" "${py[@]}"
  echo "$load_before" > bench/results/raw/loader.load
fi
capped_args=()
if [ -n "$cap" ]; then
  ns="st-bench-loader-$$"
  ip netns add "$ns"
  trap 'ip netns delete "$ns" 2>/dev/null || true' EXIT
  ip netns exec "$ns" ip link set lo up
  ip netns exec "$ns" tc qdisc add dev lo root tbf rate "${cap}mbit" burst 256kb latency 100ms
  ip netns exec "$ns" java "${flags[@]}" -cp "$cp" bench/loader/LoaderBench.java "$work" \
    bench/results/raw/loader-capped.json "$mib" "$tensors" "$latency" 1
  ip netns delete "$ns"
  trap - EXIT
  capped_args=(--capped bench/results/raw/loader-capped.json --cap-mbit "$cap")
fi
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"
[ -z "$cap_only" ] && echo "$load_after" >> bench/results/raw/loader.load
"$ST_ROOT/bench/loader/.venv/bin/python" bench/loader/report.py --raw bench/results/raw/loader.json \
  --out-dir bench/results --load-before "$(sed -n 1p bench/results/raw/loader.load)" \
  --load-after "$(sed -n 2p bench/results/raw/loader.load)" "${capped_args[@]}"
echo "==> bench/results/loader.md, bench/results/loader.png"

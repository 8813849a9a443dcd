#!/usr/bin/env bash
# Tensor-parallel loader benchmark: every rank of W = 2 and 4 loads its column block of every weight from
# s3proxy (a delay per request), against a rank loading whole tensors and against Python (fsspec download +
# Hugging Face get_slice), on the loader benchmark's 1 GiB checkpoint and a transformer-shaped one.
# Result: bench/results/loader-tp.md (raw: bench/results/raw/loader-tp.json), with the load average before
# every load; rounds alternate the order of the variants.
# Usage: bench/loader/run-tp.sh [latency ms=20] [rounds=3] [--no-python]
set -euo pipefail
source "$(dirname "$0")/../../scripts/env.sh"
cd "$ST_ROOT"
python_peer=1
args=()
for a in "$@"; do
  case "$a" in
    --no-python) python_peer="" ;;
    *) args+=("$a") ;;
  esac
done
latency="${args[0]:-20}"
rounds="${args[1]:-3}"
work="$ST_ROOT/build/bench-loader"
classes="$work/tp-classes"
mkdir -p "$work" bench/results/raw

mvn -B -ntp -q -pl native,java/core,spark/hdfs-testkit,java/loader package -DskipTests -Dctest.skip.tests=true \
  dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$work/loader.cp"
cp="$ST_ROOT/java/loader/target/test-classes:$ST_ROOT/java/loader/target/classes:$(cat "$work/loader.cp")"
rm -rf "$classes"
javac -d "$classes" -cp "$cp" bench/loader/LoaderBench.java bench/loader/TensorParallelBench.java
flags=(--enable-native-access=ALL-UNNAMED -Xmx3g -Ds3proxy.jar="$ST_ROOT/java/loader/target/s3proxy/s3proxy.jar")

py=()
if [ -n "$python_peer" ]; then
  st_uv sync -q --project bench/loader
  py=("$ST_ROOT/bench/loader/.venv/bin/python" "$ST_ROOT/bench/loader/tp_peer.py")
fi
java "${flags[@]}" -cp "$classes:$cp" TensorParallelBench "$work" bench/results/raw/loader-tp.json \
  "$latency" "$rounds" "${py[@]}"
report_py="$ST_ROOT/bench/loader/.venv/bin/python"
[ -x "$report_py" ] || report_py=python3
"$report_py" bench/loader/report_tp.py --raw bench/results/raw/loader-tp.json --out bench/results/loader-tp.md
echo "==> bench/results/loader-tp.md"

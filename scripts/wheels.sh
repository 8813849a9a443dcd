#!/usr/bin/env bash
# Builds the Python wheels into build/wheels/: safetensors-jvm-runtime, safetensors-jvm-sampler
# (with the sampler and preprocessor jars) and safetensors-spark (with the connector jar).
# The jars come from the Maven build: run 'mvn -B -ntp -DskipTests package' first (scripts/test.sh
# and the release workflow do). Usage: scripts/wheels.sh [out-dir]
set -euo pipefail
source "$(dirname "$0")/env.sh"
out="${1:-$ST_ROOT/build/wheels}"
rm -rf "$out"
mkdir -p "$out"
for project in safetensors-jvm-runtime safetensors-jvm-sampler safetensors-spark; do
  st_uv build --quiet --wheel --out-dir "$out" "$ST_ROOT/python/$project"
done
ls -l "$out"/*.whl

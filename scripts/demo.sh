#!/usr/bin/env bash
# The main job: builds everything (tests skipped) and runs the end-to-end demo.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ST_ROOT"
echo "==> building (JDK: $JAVA_HOME)"
mvn -B -ntp -q -DskipTests package
exec bin/safetensors demo "$@"

#!/usr/bin/env bash
# Runs every test: C kernels under ASan/UBSan (ctest), Java unit and integration tests,
# the bounded Jazzer fuzz run, the interop suites (tests/*/run.sh) and each Python package's own
# tests (python/*/tests/run.sh).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ST_ROOT"
echo "==> JDK: $JAVA_HOME"

echo "==> Maven: native (cmake + ctest with sanitizers), Java tests"
mvn -B -ntp verify

echo "==> Jazzer: fuzzing the header parser for a bounded time (fuzz.duration, 90 s)"
mvn -B -ntp -pl native,java/core -Pfuzz verify -Dctest.skip.tests=true

for suite in tests/*/run.sh python/*/tests/run.sh; do
  [ -f "$suite" ] || continue
  echo "==> Python: $suite"
  bash "$suite"
done
echo "==> all tests passed"

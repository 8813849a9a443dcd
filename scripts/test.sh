#!/usr/bin/env bash
# Runs every test: C kernels under ASan/UBSan (ctest), Java unit and integration tests,
# the bounded Jazzer fuzz run, the interop suites (tests/*/run.sh) and each Python package's own
# tests (python/*/tests/run.sh).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ST_ROOT"
echo "==> JDK: $JAVA_HOME"

# deploy, not install: the artifacts (with sources and javadoc jars, doclint on: the publish profile)
# go to a file repository under build/, where tests/consumer resolves them by coordinates; ~/.m2 is
# left alone.
echo "==> Maven: native (cmake + ctest with sanitizers), Java tests, javadoc, deployed to build/maven-repo"
rm -rf "$ST_ROOT/build/maven-repo"
mvn -B -ntp -Ppublish deploy -Dmaven.install.skip=true -DaltDeploymentRepository="local::file://$ST_ROOT/build/maven-repo"

echo "==> Jazzer: fuzzing the header parser for a bounded time (fuzz.duration, 90 s)"
mvn -B -ntp -pl native,java/core -Pfuzz verify -Dctest.skip.tests=true

for suite in tests/*/run.sh python/*/tests/run.sh; do
  [ -f "$suite" ] || continue
  echo "==> Python: $suite"
  bash "$suite"
done
echo "==> all tests passed"

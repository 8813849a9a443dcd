#!/usr/bin/env bash
# The PySpark suite against several PySpark runtimes from the package registry, with the one
# connector jar (built against Spark 4.2.0). Each runtime gets its own virtual environment under
# build/pyspark-matrix/<version>: the suite's pinned dependencies with pyspark overridden.
# Usage: tests/pyspark_interop/matrix.sh [version ...]   (default: every supported runtime)
# Extra pytest arguments: PYTEST_ARGS="-k read" tests/pyspark_interop/matrix.sh 4.3.0
set -euo pipefail
source "$(dirname "$0")/../../scripts/env.sh"
suite="$ST_ROOT/tests/pyspark_interop"

# The supported runtimes; docs/spark.md and .github/workflows/ci.yml list the same (a test checks the workflow).
SUPPORTED_PYSPARK=(4.2.0 4.2.1 4.3.0)
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=("${SUPPORTED_PYSPARK[@]}")

if ! compgen -G "$ST_ROOT/spark/target/safetensors-spark_2.13-*-all.jar" > /dev/null; then
  echo "error: spark/target/safetensors-spark_2.13-<version>-all.jar is missing; build it first with" >&2
  echo "       'mvn -B -ntp -DskipTests package' in the repository root." >&2
  exit 1
fi

declare -A outcome
failed=0
for v in "${versions[@]}"; do
  venv="$ST_ROOT/build/pyspark-matrix/$v"
  echo "==> PySpark $v: environment $venv"
  [ -x "$venv/bin/python" ] || st_uv venv --quiet "$venv"
  override="$(mktemp)"
  echo "pyspark==$v" > "$override"
  st_uv pip install --quiet --python "$venv/bin/python" -r "$suite/pyproject.toml" --override "$override"
  st_uv pip install --quiet --python "$venv/bin/python" --reinstall-package safetensors-spark "$ST_ROOT/python/safetensors-spark[mlflow]"
  rm -f "$override"
  echo "==> PySpark $v: $("$venv/bin/python" -c 'import pyspark; print(pyspark.__version__)') on $(java -version 2>&1 | head -n 1)"
  # shellcheck disable=SC2086
  if (cd "$suite" && "$venv/bin/python" -m pytest -q ${PYTEST_ARGS:-}); then
    outcome[$v]=passed
  else
    outcome[$v]=FAILED
    failed=1
  fi
done

echo "==> PySpark runtime matrix (JDK $(st_java_major "$JAVA_HOME"))"
for v in "${versions[@]}"; do
  printf '    pyspark %-8s %s\n' "$v" "${outcome[$v]}"
done
exit "$failed"

#!/usr/bin/env bash
# The sampler binding's tests (safetensors_jvm_sampler: JPype, zero-copy numpy batches) against the
# Java sampler and headwater's reference batches, memory safety, lifecycle, and a JAX loop (pytest,
# via uv, in this package's own environment with its "test" dependency group).
# Needs java/sampler/target/safetensors-sampler-<version>-all.jar: 'mvn -B -ntp -DskipTests package'.
set -euo pipefail
source "$(dirname "$0")/../../../scripts/env.sh"
cd "$ST_ROOT/python/safetensors-jvm-sampler"

jar=$(compgen -G "$ST_ROOT/java/sampler/target/safetensors-sampler-*-all.jar" | head -n 1 || true)
if [ -z "$jar" ]; then
  echo "error: java/sampler/target/safetensors-sampler-<version>-all.jar is missing; build it first with" >&2
  echo "       'mvn -B -ntp -DskipTests package' in the repository root (scripts/test.sh runs it)." >&2
  exit 1
fi
export SAFETENSORS_SAMPLER_JAR="$jar"

# JAX 0.11+ needs Python >= 3.12: use one from PATH, else from pyenv, else let uv look.
if [ -z "${UV_PYTHON:-}" ]; then
  for candidate in python3.13 python3.12 \
      "$(pyenv root 2>/dev/null)"/versions/3.13*/bin/python3.13 "$(pyenv root 2>/dev/null)"/versions/3.12*/bin/python3.12; do
    if "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; then
      UV_PYTHON=$(command -v "$candidate" || echo "$candidate")
      export UV_PYTHON
      break
    fi
  done
fi

# The lock file uv writes stays local (git-ignored).
st_uv sync --quiet --group test
st_uv run --no-sync pytest -q "$@"

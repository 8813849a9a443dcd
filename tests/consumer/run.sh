#!/usr/bin/env bash
# Consumers by coordinates: the example projects (examples/) built and run against the artifacts the
# build deployed to build/maven-repo (scripts/test.sh deploys there; when it is missing this script
# deploys itself, without tests), never against the source tree or ~/.m2 (pytest, via uv).
set -euo pipefail
source "$(dirname "$0")/../../scripts/env.sh"
repo="$ST_ROOT/build/maven-repo"
if [ ! -d "$repo/io/github/semyonsinchenko" ]; then
  echo "==> deploying the artifacts to $repo (no tests)"
  (cd "$ST_ROOT" && mvn -B -ntp -q -Ppublish deploy -DskipTests -Djazzer.skip=true -Dmaven.install.skip=true \
    -DaltDeploymentRepository="local::file://$repo")
fi
export ST_DEPLOYED_REPO="file://$repo" ST_M2_CACHE="file://$HOME/.m2/repository"
cd "$ST_ROOT/tests/consumer"
# The lock file uv writes stays local (git-ignored).
st_uv sync --quiet
st_uv run --no-sync pytest -q "$@"

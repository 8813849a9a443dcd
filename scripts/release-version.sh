#!/usr/bin/env bash
# The release version in one place per ecosystem: the Maven reactor (pom.xml, X.Y.Z-SNAPSHOT between
# releases) and the Python projects (python/*/pyproject.toml, X.Y.Z, and the exact pins between them).
#   scripts/release-version.sh check X.Y.Z   fails unless every project is at X.Y.Z (Maven: X.Y.Z-SNAPSHOT)
#   scripts/release-version.sh set X.Y.Z     sets the Maven reactor to X.Y.Z for the release build
set -euo pipefail
cd "$(dirname "$0")/.."
action="${1:?usage: release-version.sh check|set X.Y.Z}"
version="${2:?usage: release-version.sh check|set X.Y.Z}"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "error: '$version' is not X.Y.Z" >&2; exit 1; }

maven=$(sed -n 's|^  <version>\(.*\)</version>$|\1|p' pom.xml | head -n 1)
case "$action" in
  check)
    status=0
    if [ "$maven" != "$version-SNAPSHOT" ] && [ "$maven" != "$version" ]; then
      echo "error: pom.xml is at $maven, the tag at $version" >&2
      status=1
    fi
    for project in python/*/pyproject.toml; do
      py=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$project" | head -n 1)
      if [ "$py" != "$version" ]; then
        echo "error: $project is at $py, the tag at $version" >&2
        status=1
      fi
      while read -r pin; do
        if [ "$pin" != "$version" ]; then
          echo "error: $project pins safetensors-jvm-runtime==$pin, the tag is $version" >&2
          status=1
        fi
      done < <(sed -n 's/.*"safetensors-jvm-runtime==\([^"]*\)".*/\1/p' "$project")
    done
    exit "$status"
    ;;
  set)
    mvn -B -ntp -q org.codehaus.mojo:versions-maven-plugin:2.18.0:set -DnewVersion="$version" \
      -DgenerateBackupPoms=false -DprocessAllModules=true
    ;;
  *)
    echo "usage: release-version.sh check|set X.Y.Z" >&2
    exit 1
    ;;
esac

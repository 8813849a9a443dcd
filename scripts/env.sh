# Sourced by the other scripts: finds a JDK >= 25 (scripts/jdk.sh), Maven, cmake and uv, and fails
# with a clear message if it cannot.

source "$(dirname "${BASH_SOURCE[0]}")/jdk.sh"

if ! ST_JDK=$(st_find_jdk); then
  st_no_jdk_message
  exit 1
fi
export JAVA_HOME="$ST_JDK"
export PATH="$JAVA_HOME/bin:$PATH"

for tool in mvn cmake; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "error: '$tool' is not on PATH; install it (Maven >= 3.8.7, cmake >= 3.20)." >&2
    exit 1
  fi
done

ST_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ST_ROOT

# uv runs the Python projects; when it is not installed, bootstrap it once into build/tools.
st_uv() {
  if command -v uv >/dev/null 2>&1; then
    uv "$@"
    return
  fi
  local venv="$ST_ROOT/build/tools/uv-venv"
  if [ ! -x "$venv/bin/uv" ]; then
    echo "==> installing uv into build/tools (one time)" >&2
    python3 -m venv "$venv" && "$venv/bin/pip" install --quiet --disable-pip-version-check uv || {
      echo "error: could not install uv with python3 -m venv + pip; install uv yourself (pip install uv)." >&2
      return 1
    }
  fi
  "$venv/bin/uv" "$@"
}

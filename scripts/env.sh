# Sourced by the other scripts: finds a JDK >= 22 and uv, and fails with a clear message if it cannot.
# JAVA_HOME wins when it is new enough; otherwise the newest JDK under /usr/lib/jvm (Debian/Temurin layout).

st_java_major() {
  "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = //p' | head -n 1
}

st_find_jdk() {
  local candidate major best="" best_major=0
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then
    major=$(st_java_major "$JAVA_HOME")
    if [ "${major:-0}" -ge 22 ] 2>/dev/null; then
      echo "$JAVA_HOME"
      return 0
    fi
  fi
  for candidate in /usr/lib/jvm/* /opt/java/* /Library/Java/JavaVirtualMachines/*/Contents/Home; do
    [ -x "$candidate/bin/java" ] && [ -x "$candidate/bin/javac" ] || continue
    major=$(st_java_major "$candidate")
    if [ "${major:-0}" -ge 22 ] 2>/dev/null && [ "$major" -gt "$best_major" ]; then
      best="$candidate"
      best_major="$major"
    fi
  done
  if [ -n "$best" ]; then
    echo "$best"
    return 0
  fi
  return 1
}

if ! ST_JDK=$(st_find_jdk); then
  echo "error: safetensors-jvm needs a JDK 22 or newer (we test on JDK 25) and found none." >&2
  echo "       JAVA_HOME=${JAVA_HOME:-<unset>}; searched /usr/lib/jvm/*." >&2
  echo "       Install a JDK 25 (e.g. Eclipse Temurin 25) and set JAVA_HOME to it." >&2
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

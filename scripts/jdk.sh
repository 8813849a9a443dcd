# Sourced by scripts/env.sh and bin/safetensors: finds a JDK new enough for safetensors-jvm.
# JAVA_HOME wins when it is new enough; otherwise the newest JDK in ST_JDK_SEARCH (default: the
# Debian/Ubuntu, Docker and macOS install locations below). Nothing here exits: callers decide.

# The JDK floor. The enforcer (pom.xml min.jdk.version) and the CLI launcher hold the same number;
# a test keeps the three equal.
ST_MIN_JDK=25
ST_JDK_SEARCH="${ST_JDK_SEARCH:-/usr/lib/jvm/* /opt/java/* /Library/Java/JavaVirtualMachines/*/Contents/Home}"

st_java_major() {
  "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = //p' | head -n 1
}

# Prints the chosen JDK's home, or returns 1.
st_find_jdk() {
  local candidate major best="" best_major=0
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then
    major=$(st_java_major "$JAVA_HOME")
    if [ "${major:-0}" -ge "$ST_MIN_JDK" ] 2>/dev/null; then
      echo "$JAVA_HOME"
      return 0
    fi
  fi
  for candidate in $ST_JDK_SEARCH; do
    [ -x "$candidate/bin/java" ] && [ -x "$candidate/bin/javac" ] || continue
    major=$(st_java_major "$candidate")
    if [ "${major:-0}" -ge "$ST_MIN_JDK" ] 2>/dev/null && [ "$major" -gt "$best_major" ]; then
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

# The message for when st_find_jdk finds nothing: what is needed and where we looked.
st_no_jdk_message() {
  echo "error: safetensors-jvm needs JDK $ST_MIN_JDK or newer and found none." >&2
  echo "       Looked at JAVA_HOME (${JAVA_HOME:-unset}) and in: $ST_JDK_SEARCH" >&2
  echo "       Install a JDK $ST_MIN_JDK (e.g. Eclipse Temurin $ST_MIN_JDK) and set JAVA_HOME to it." >&2
}

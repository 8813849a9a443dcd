#!/usr/bin/env bash
# Builds a relational-sampler database (headwater's format) with Spark, headwater's options:
#   scripts/preprocess.sh --data-dir D --dataset X [--skip-embeddings] [--embedder none|http|hashed] [--master local[*]]
# reads D/metadata/X.json and D/raw/X/<table>.parquet, writes D/processed/X/.
#   scripts/preprocess.sh generate --data-dir D --dataset X --rows N   writes a synthetic input there.
#   scripts/preprocess.sh build   only the build below (a benchmark builds before it starts its clock).
# Builds the module first when it is missing or older than its sources (tests skipped). Extra JVM options: PREPROCESS_JAVA_OPTS (e.g. -Xmx8g).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ST_ROOT"
target=spark/preprocess/target
classpath_file=$target/preprocess.classpath
jar=$(ls "$target"/safetensors-sampler-spark-*.jar 2>/dev/null | grep -v -- '-all.jar' | head -n 1 || true)
if [ ! -f "$classpath_file" ] || [ -z "$jar" ] \
   || [ -n "$(find spark/preprocess/src/main java/sampler/src/main java/core/src/main -newer "$jar" -type f 2>/dev/null | head -n 1)" ]; then
  echo "==> building the preprocessor (JDK: $JAVA_HOME)" >&2
  mvn -B -ntp -q -pl spark/preprocess -am package -DskipTests -Dctest.skip.tests=true >&2
  jar=$(ls "$target"/safetensors-sampler-spark-*.jar | grep -v -- '-all.jar' | head -n 1)
fi
if [ "${1:-}" = "build" ]; then
  exit 0
fi
main=io.github.semyonsinchenko.safetensors.preprocess.PreprocessMain
if [ "${1:-}" = "generate" ]; then
  main=io.github.semyonsinchenko.safetensors.preprocess.GenerateMain
  shift
fi
# The opens Spark's own launcher adds on JDK 17+, plus FFM for the kernels.
spark_opens="--add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.lang.invoke=ALL-UNNAMED
 --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED
 --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED
 --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
 --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED --add-opens=java.base/jdk.internal.ref=ALL-UNNAMED
 --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/sun.nio.cs=ALL-UNNAMED
 --add-opens=java.base/sun.security.action=ALL-UNNAMED --add-opens=java.base/sun.util.calendar=ALL-UNNAMED
 --add-exports=java.base/sun.nio.ch=ALL-UNNAMED -Djdk.reflect.useDirectMethodHandle=false
 -Dio.netty.tryReflectionSetAccessible=true"
# Spark's INFO lines (one per task) only at the user's request: their log4j2 configuration wins.
log_opts=("-Dlog4j2.configurationFile=$ST_ROOT/scripts/preprocess-log4j2.properties")
if [ -n "${LOG4J_CONFIGURATION_FILE:-}" ] || [[ "${PREPROCESS_JAVA_OPTS:-}" == *log4j2.configurationFile* ]]; then
  log_opts=()
fi
# shellcheck disable=SC2086
exec java --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow $spark_opens \
  ${log_opts[@]+"${log_opts[@]}"} ${PREPROCESS_JAVA_OPTS:-} -cp "$jar:$(cat "$classpath_file")" "$main" "$@"

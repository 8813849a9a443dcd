#!/usr/bin/env bash
# Builds a relational-sampler database (headwater's format) with Spark, headwater's options:
#   scripts/preprocess.sh --data-dir D --dataset X [--skip-embeddings] [--embedder none|http|hashed] [--master local[*]]
# reads D/metadata/X.json and D/raw/X/<table>.parquet, writes D/processed/X/.
#   scripts/preprocess.sh generate --data-dir D --dataset X --rows N   writes a synthetic input there.
#   scripts/preprocess.sh build   only the build below (a benchmark builds before it starts its clock).
# Builds the module first when it is missing or older than its sources (tests skipped). Extra JVM options: PREPROCESS_JAVA_OPTS (e.g. -Xmx8g).
# PREPROCESS_AOT=0: no ahead-of-time cache; PREPROCESS_JIT_TUNING=0: the JIT's default thresholds (both below).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ST_ROOT"
target=spark/preprocess/target
classpath_file=$target/preprocess.classpath
jar=$(ls "$target"/safetensors-preprocess_2.13-*.jar 2>/dev/null | grep -v -- '-all.jar' | head -n 1 || true)
if [ ! -f "$classpath_file" ] || [ -z "$jar" ] \
   || [ -n "$(find spark/preprocess/src/main java/sampler/src/main java/core/src/main -newer "$jar" -type f 2>/dev/null | head -n 1)" ]; then
  echo "==> building the preprocessor (JDK: $JAVA_HOME)" >&2
  mvn -B -ntp -q -pl spark/preprocess -am package -DskipTests -Dctest.skip.tests=true >&2
  jar=$(ls "$target"/safetensors-preprocess_2.13-*.jar | grep -v -- '-all.jar' | head -n 1)
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
classpath="$jar:$(cat "$classpath_file")"
package=io.github.semyonsinchenko.safetensors.preprocess
run_java() { # extra JVM options up to "--", then the main class and its arguments
  local opts=()
  while [ "$1" != "--" ]; do opts+=("$1"); shift; done
  shift
  # shellcheck disable=SC2086
  java --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow $spark_opens \
    ${log_opts[@]+"${log_opts[@]}"} "${opts[@]}" -cp "$classpath" "$@"
}

# JDK 25's ahead-of-time cache (JEPs 483, 514, 515): the classes a run loads and links, and their
# method profiles, recorded by one training run on a small generated input after each build. A
# run otherwise spends much of its CPU loading Spark's classes and JIT-compiling them: the 5 M-row
# benchmark input took 65-72 s without the cache and 58 s with it (idle, 2 cores). The JVM checks
# that the cache matches this JDK and class path and runs without it when not. A failed training
# run is not retried until the next build. PREPROCESS_AOT=0: no cache.
aot=$target/preprocess.aot
# The JDK's build from its release file: running java -version cost every run another JVM start.
aot_stamp="$jar $(stat -c %Y "$jar" "$classpath_file" | tr '\n' ' ') $(tr '\n' ' ' 2>/dev/null < "$JAVA_HOME/release" \
  || java -version 2>&1 | tr '\n' ' ')"
if [ "${PREPROCESS_AOT:-1}" != 0 ] && [ "$(cat "$aot.stamp" 2>/dev/null)" != "$aot_stamp" ]; then
  echo "==> training the JVM's ahead-of-time cache on a small generated input (once per build; log: $target/aot-training.log)" >&2
  training=$target/aot-training
  rm -rf "$training" "$aot" "$aot.stamp" "$aot.tmp"
  if run_java -Xmx2g -- "$package.GenerateMain" --data-dir "$training" --dataset train --rows 20000 \
       --master 'local[2]' > "$target/aot-training.log" 2>&1 \
     && run_java -Xmx2g -XX:AOTCacheOutput="$aot.tmp" -Xlog:aot*=error -- "$package.PreprocessMain" \
       --data-dir "$training" --dataset train --skip-embeddings --master 'local[2]' >> "$target/aot-training.log" 2>&1 \
     && [ -s "$aot.tmp" ]; then
    mv "$aot.tmp" "$aot"
  else
    rm -f "$aot.tmp"
    echo "warning: the training run failed (see $target/aot-training.log); running without the cache" >&2
  fi
  echo "$aot_stamp" > "$aot.stamp"
  rm -rf "$training"
fi
# The JIT compilers' share: in a 5 M-row run (2 cores) they took 31 of the process's 57 s of user CPU
# (-XX:+CITime), and the task threads waited for the cores they held. A run this short does not repay a
# C2 compilation of lukewarm code: C2 starts at 4x the default counts, inlines less deeply, and the
# driver-side libraries that run a lot but briefly (ASM reading closures' classes, class loading,
# lambda and method-handle linking, Janino, Spark SQL's parser) wait for 10x the counts. Measured back to
# back, idle, same cache: compilation 31 -> 19 s, user CPU 57 -> 47 s, wall 33.0 s -> 29.5 s.
# PREPROCESS_JIT_TUNING=0: the JVM's defaults; later PREPROCESS_JAVA_OPTS win over these.
jit_opts=()
if [ "${PREPROCESS_JIT_TUNING:-1}" != 0 ]; then
  jit_opts=(-XX:Tier4InvocationThreshold=20000 -XX:Tier4MinInvocationThreshold=2400 -XX:Tier4CompileThreshold=60000
    -XX:Tier4BackEdgeThreshold=160000 -XX:MaxInlineLevel=9 -XX:InlineSmallCode=1000 -XX:CompileCommand=quiet)
  for lib in org.apache.xbean jdk.internal.loader java.lang.invoke org.codehaus org.antlr jdk.internal.classfile; do
    jit_opts+=("-XX:CompileCommand=CompileThresholdScaling,$lib.*::*,10.0")
  done
fi
aot_opts=()
if [ "${PREPROCESS_AOT:-1}" != 0 ] && [ -f "$aot" ]; then
  aot_opts=(-XX:AOTCache="$aot" -Xlog:aot*=error)
fi
if [ "${1:-}" = "build" ]; then
  exit 0
fi
main=$package.PreprocessMain
if [ "${1:-}" = "generate" ]; then
  main=$package.GenerateMain
  shift
fi
# shellcheck disable=SC2086
exec java --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow $spark_opens \
  ${log_opts[@]+"${log_opts[@]}"} ${aot_opts[@]+"${aot_opts[@]}"} ${jit_opts[@]+"${jit_opts[@]}"} \
  ${PREPROCESS_JAVA_OPTS:-} -cp "$classpath" "$main" "$@"

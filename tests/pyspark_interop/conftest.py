"""Shared fixtures for the PySpark interop suite: the connector jar and one local SparkSession."""

import glob
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Spark's launcher adds its own --add-opens list on JDK 17+; the connector also needs FFM access.
JAVA_OPTIONS = "--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow"


def connector_jar() -> Path:
    jars = sorted(glob.glob(str(ROOT / "spark" / "target" / "safetensors-spark_2.13-*-all.jar")))
    if not jars:
        pytest.exit(
            "spark/target/safetensors-spark_2.13-<version>-all.jar is missing: build it first with "
            "'mvn -B -ntp -DskipTests package' (scripts/test.sh does).",
            returncode=2,
        )
    return Path(jars[-1])


def session_builder(master: str):
    """A SparkSession builder with the connector on the classpath (driver and executors)."""
    import pyspark
    from pyspark.sql import SparkSession

    # local-cluster starts executors with SPARK_HOME's scripts: the pyspark package is a Spark home.
    os.environ.setdefault("SPARK_HOME", os.path.dirname(pyspark.__file__))
    return (
        SparkSession.builder.master(master)
        .appName("safetensors-pyspark-interop")
        .config("spark.jars", str(connector_jar()))
        .config("spark.driver.extraJavaOptions", JAVA_OPTIONS)
        .config("spark.executor.extraJavaOptions", JAVA_OPTIONS)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        # The SQL tensor functions (test_spark_functions.py); harmless for the other tests.
        .config("spark.sql.extensions", "io.github.semyonsinchenko.safetensors.SafetensorsExtensions")
    )


@pytest.fixture(scope="session")
def spark():
    session = session_builder("local[2]").getOrCreate()
    yield session
    session.stop()

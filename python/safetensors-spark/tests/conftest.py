"""Fixtures for the package's tests: a local SparkSession with the connector jar, to write the
datasets the package reads."""

import glob
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

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


@pytest.fixture(scope="session")
def spark():
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("safetensors-spark-package-tests")
        .config("spark.jars", str(connector_jar()))
        .config("spark.driver.extraJavaOptions", JAVA_OPTIONS)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    yield session
    session.stop()

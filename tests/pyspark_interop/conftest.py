"""A local PySpark session with the shaded safetensors-jvm connector on its classpath."""
import glob
import os

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# The opens Spark's launcher adds on JDK 17+, plus what FFM and Spark's Unsafe use need on JDK 25.
JVM_FLAGS = " ".join([
    "--enable-native-access=ALL-UNNAMED",
    "--sun-misc-unsafe-memory-access=allow",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
])


def connector_jar():
    jar = os.environ.get("SAFETENSORS_SPARK_JAR")
    if jar:
        return jar
    found = sorted(glob.glob(os.path.join(ROOT, "spark", "target", "safetensors-spark_2.13-*-all.jar")))
    if not found:
        pytest.exit("spark/target/safetensors-spark_2.13-*-all.jar is missing: run 'mvn -B -ntp -DskipTests package'")
    return found[-1]


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("safetensors-pyspark-interop")
        .config("spark.jars", connector_jar())
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("warehouse")))
        .config("spark.driver.extraJavaOptions", JVM_FLAGS)
        .config("spark.executor.extraJavaOptions", JVM_FLAGS)
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("WARN")
    yield session
    session.stop()

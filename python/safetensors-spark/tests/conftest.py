"""Fixtures for the package's tests: a local SparkSession set up by the package's own helper (the
connector jar of the source checkout, as in an editable install), to write the datasets the
package reads."""

import pytest

from safetensors_spark.session import connector_jar
from safetensors_jvm_runtime import JarNotFoundError


@pytest.fixture(scope="session")
def spark():
    from pyspark.sql import SparkSession

    from safetensors_spark import with_safetensors

    try:
        connector_jar()
    except JarNotFoundError as e:
        pytest.exit(str(e), returncode=2)
    builder = (SparkSession.builder.master("local[2]").appName("safetensors-spark-package-tests")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2"))
    session = with_safetensors(builder).getOrCreate()
    yield session
    session.stop()

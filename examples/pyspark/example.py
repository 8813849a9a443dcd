"""A PySpark job that gets the safetensors connector by its Maven coordinates.

    python example.py OUT_DIR

Needs PySpark 4.2 and a JDK 25 (JAVA_HOME). The package comes from Maven Central; a test run adds
its own repository with --repositories in PYSPARK_SUBMIT_ARGS.
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

VERSION = "0.1.0-SNAPSHOT"
FLAGS = "--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow"

out = sys.argv[1]
spark = (SparkSession.builder.master("local[2]")
         .config("spark.jars.packages", f"io.github.semyonsinchenko:safetensors-spark_2.13:{VERSION}")
         .config("spark.sql.extensions", "io.github.semyonsinchenko.safetensors.SafetensorsExtensions")
         .config("spark.driver.extraJavaOptions", FLAGS)
         .config("spark.executor.extraJavaOptions", "--enable-native-access=ALL-UNNAMED")
         .getOrCreate())

(spark.range(0, 100, 1, 4)
 .selectExpr("concat('row', id) AS id", "array(cast(id AS float), 0.5f, -1.0f) AS embedding")
 .selectExpr("id", "arr_to_st(embedding, array(3), 'BF16') AS embedding")
 .write.format("safetensors").option("name_col", "id").option("generate_index", "true").mode("overwrite")
 .save(out))

df = spark.read.format("safetensors").option("inferSchema", "true").load(out)
row = df.where(F.col("tensor_key") == "row42").selectExpr("st_to_array(embedding) AS v").first()
print(f"read: {df.count()} rows; row42 = {row['v']}")
spark.stop()

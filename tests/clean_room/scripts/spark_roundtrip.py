"""Run by the clean-room test inside a fresh venv holding only pyspark, the safetensors-spark wheel
and what it declares: the session helper, a write, a read with pushdown, the SQL functions, MLflow.
Usage: python spark_roundtrip.py <work-dir>"""

import sys
from pathlib import Path

import numpy as np
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from safetensors_spark import DistributedSafetensorsDataset, with_safetensors

work = Path(sys.argv[1])
spark = with_safetensors(SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")).getOrCreate()
jvm = spark.sparkContext._jvm.java.lang.System
print("spark:", spark.version, "on Java", jvm.getProperty("java.version"), "at", jvm.getProperty("java.home"))

# write: kv mode, one F32 tensor per row, keyed
out = str(work / "kv")
(spark.range(0, 40, 1, 2)
 .selectExpr("concat('k', id) key", "array(cast(id as float), cast(id * 2 as float), 0.5f) vec")
 .write.format("safetensors").option("name_col", "key").option("dtype", "F32").save(out))

# read with pushdown on tensor_key
df = spark.read.format("safetensors").option("inferSchema", "true").load(out)
assert df.columns == ["tensor_key", "vec"], df.columns
picked = df.where(F.col("tensor_key") == "k7")
plan = picked._jdf.queryExecution().executedPlan().toString()
assert "PushedFilters" in plan and "tensor_key = 'k7'" in plan, plan
[row] = picked.selectExpr("st_to_array(vec) a").collect()
assert row["a"] == [7.0, 14.0, 0.5], row
print("read:", df.count(), "rows; tensor_key pushed down; st_to_array(vec) of k7 =", row["a"])

# the SQL functions: arr_to_st to BF16 and back through st_to_array
back = spark.sql("SELECT st_to_array(arr_to_st(array(1.0f, -2.5f, 3.0e-3f), array(3), 'BF16')) a").first()["a"]
expected = np.array([1.0, -2.5, 3.0e-3], dtype=np.float32)
bf16 = (expected.view(np.uint32) + 0x7FFF + ((expected.view(np.uint32) >> 16) & 1)) & 0xFFFF0000
assert np.array_equal(np.array(back, dtype=np.float32), bf16.view(np.float32)), back
print("functions: arr_to_st -> BF16 -> st_to_array =", back)

# without Spark: the dataset reader; then MLflow lineage
ds = DistributedSafetensorsDataset.from_path(out)
assert sum(s.num_samples for s in ds.list_shards()) == 40
import mlflow
from safetensors_spark.mlflow import log_dataset

mlflow.set_tracking_uri(f"sqlite:///{work / 'mlflow.db'}")
with mlflow.start_run() as run:
    log_dataset(out)
inputs = mlflow.get_run(run.info.run_id).inputs.dataset_inputs
assert [i.dataset.source_type for i in inputs] == ["safetensors"], inputs
print("mlflow: run", run.info.run_id, "input", inputs[0].dataset.name, inputs[0].dataset.source_type)
spark.stop()

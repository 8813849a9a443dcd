"""The Python side of the safetensors Spark connector.

- ``safetensors_spark.with_safetensors(builder)``: configures a ``SparkSession.Builder`` with the
  connector jar this wheel carries, its SQL extension, its JVM flags and a JDK 25
  (:mod:`safetensors_spark.session`).
- ``safetensors_spark.dataset``: ``DistributedSafetensorsDataset`` (manifest, shards, schema,
  tensor index, shard assignment, validation, per-worker iteration over numpy arrays), reading the
  dataset directory itself: no Spark, no JVM.
- ``safetensors_spark.mlflow``: ``log_dataset`` (MLflow lineage; needs the ``mlflow`` extra).

Importing the package does not import pyspark.
"""

from safetensors_spark.dataset import DistributedSafetensorsDataset, ShardInfo
from safetensors_spark.session import with_safetensors

__version__ = "0.1.0"

__all__ = ["DistributedSafetensorsDataset", "ShardInfo", "with_safetensors", "__version__"]

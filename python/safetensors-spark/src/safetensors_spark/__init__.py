"""Pure-Python utilities for datasets written by the safetensors Spark connector.

No Spark and no JVM: everything here reads the dataset directory itself.

- ``safetensors_spark.dataset``: ``DistributedSafetensorsDataset`` (manifest, shards, schema,
  tensor index, shard assignment, validation, per-worker iteration over numpy arrays).
- ``safetensors_spark.mlflow``: ``log_dataset`` (MLflow lineage; needs the ``mlflow`` extra).
"""

from safetensors_spark.dataset import DistributedSafetensorsDataset, ShardInfo

__version__ = "0.1.0"

__all__ = ["DistributedSafetensorsDataset", "ShardInfo", "__version__"]

"""MLflow lineage for datasets written by the safetensors Spark connector (pure Python + mlflow).

``log_dataset(path)`` reads ``dataset_manifest.json`` and logs the dataset as an input of an MLflow
run. The dataset's source (``source_type`` "safetensors") is the same JSON document the JVM's
``io.github.semyonsinchenko.safetensors.dataset.mlflow.SafetensorsDatasetSource.toJson()`` gives for the
same path: ``uri`` (the manifest), ``dataset_uri``, ``digest``, versions, totals, shards, schema.
"""

from __future__ import annotations

import json

from safetensors_spark._manifest import locate, read_manifest, source_dict

SOURCE_TYPE = "safetensors"


def _source_class():
    from mlflow.data.dataset_source import DatasetSource

    class SafetensorsDatasetSource(DatasetSource):
        """A dataset directory written by the connector, identified by its manifest."""

        def __init__(self, document: dict):
            self._document = document

        @staticmethod
        def _get_source_type() -> str:
            return SOURCE_TYPE

        @property
        def uri(self) -> str:
            return self._document["uri"]

        def load(self, dst_path=None):
            raise NotImplementedError(
                "a safetensors dataset is read with spark.read.format('safetensors') or "
                "safetensors_spark.dataset.DistributedSafetensorsDataset"
            )

        @staticmethod
        def _can_resolve(raw_source) -> bool:
            return False

        @classmethod
        def _resolve(cls, raw_source):
            raise NotImplementedError("resolve from a manifest with safetensors_spark.mlflow.log_dataset")

        def to_dict(self) -> dict:
            return dict(self._document)

        @classmethod
        def from_dict(cls, source_dict: dict):
            return cls(dict(source_dict))

    return SafetensorsDatasetSource


def dataset_source(path, filesystem=None):
    """The MLflow ``DatasetSource`` of the dataset at ``path`` (local path, URL, or path on ``filesystem``,
    an fsspec or a pyarrow file system)."""
    loc = locate(path, filesystem)
    return _source_class()(source_dict(loc, read_manifest(loc)))


def log_dataset(path, run_id: str | None = None, name: str = "safetensors_dataset", filesystem=None) -> None:
    """Log the dataset at ``path`` as an input of the active run, or of ``run_id``. ``filesystem``:
    an fsspec or a pyarrow file system holding ``path`` (default: from the path or URL).

    Raises ``FileNotFoundError`` naming ``dataset_manifest.json`` when ``path`` holds no committed
    dataset, and ``RuntimeError`` when there is neither an active run nor a ``run_id``.
    """
    import mlflow
    from mlflow.data.meta_dataset import MetaDataset
    from mlflow.entities import DatasetInput

    source = dataset_source(path, filesystem)
    if run_id is None:
        active = mlflow.active_run()
        if active is None:
            # The original connector's wording, which its users match on.
            raise RuntimeError(
                "No active MLflow run. Either call mlflow.start_run() before log_dataset(), or pass run_id= "
                "explicitly."
            )
        run_id = active.info.run_id
    dataset = MetaDataset(source=source, name=name, digest=source.to_dict()["digest"])
    mlflow.MlflowClient().log_inputs(run_id, [DatasetInput(dataset=dataset._to_mlflow_entity(), tags=[])])


def source_json(path, filesystem=None) -> str:
    """The source document as JSON text (compare with the JVM's ``toJson()``)."""
    return json.dumps(dataset_source(path, filesystem).to_dict())

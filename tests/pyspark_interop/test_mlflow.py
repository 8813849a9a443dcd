"""MLflow lineage (spec 5.3): a dataset written from PySpark, logged with safetensors_spark.mlflow.log_dataset
to a real MLflow tracking server (started here on a free loopback port, SQLite backend in a temp dir);
the logged source agrees field for field with the JVM's SafetensorsDatasetSource.toJson()."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

mlflow = pytest.importorskip("mlflow")  # noqa: F841 (a missing mlflow is an install error: run.sh installs it)
from safetensors_spark.mlflow import log_dataset  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def tracking_server(tmp_path_factory):
    import mlflow

    home = tmp_path_factory.mktemp("mlflow")
    port = free_port()
    log = open(home / "server.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port),
         "--backend-store-uri", f"sqlite:///{home / 'mlflow.db'}",
         "--default-artifact-root", (home / "artifacts").as_uri(), "--workers", "1"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        # Generous: importing mlflow and migrating SQLite takes minutes on a loaded 2-core machine.
        deadline = time.monotonic() + 600
        while True:
            try:
                with urllib.request.urlopen(url + "/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("mlflow server did not start:\n" + (home / "server.log").read_text()[-3000:])
            time.sleep(0.5)
        previous = mlflow.get_tracking_uri()
        mlflow.set_tracking_uri(url)
        mlflow.set_experiment("safetensors-lineage")
        yield url
        mlflow.set_tracking_uri(previous)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


@pytest.fixture(scope="module")
def written(spark, tmp_path_factory):
    """A kv dataset of 40 rows in 2 partitions, written by the connector."""
    out = tmp_path_factory.mktemp("lineage") / "ds"
    df = spark.range(0, 40, 1, 2).selectExpr("concat('k', id) key", "array(cast(id as float), 1.0f) v")
    df.write.format("safetensors").option("name_col", "key").option("dtype", "F32").save(str(out))
    return out, 40


def logged_source(run_id):
    import mlflow

    inputs = mlflow.get_run(run_id).inputs.dataset_inputs
    assert len(inputs) == 1
    return inputs[0].dataset


def test_log_dataset_records_the_manifest_on_the_run(tracking_server, written):
    import mlflow

    path, rows = written
    with mlflow.start_run() as run:
        log_dataset(str(path))
    ds = logged_source(run.info.run_id)
    assert ds.name == "safetensors_dataset"
    assert ds.source_type == "safetensors"
    source = json.loads(ds.source)
    manifest_path = path / "dataset_manifest.json"
    # The source URI resolves to the manifest written by the job.
    assert source["uri"] == manifest_path.as_uri()
    assert Path(unquote(urlparse(source["uri"]).path)).samefile(manifest_path)
    manifest = json.loads(manifest_path.read_text())
    assert source["total_samples"] == manifest["total_samples"] == rows
    assert source["num_shards"] == len(source["shards"]) == len(manifest["shards"]) == 2
    assert sum(s["samples_count"] for s in source["shards"]) == rows
    assert ds.digest == source["digest"]


def test_python_and_jvm_give_the_same_source(spark, tracking_server, written):
    import mlflow

    path, _ = written
    with mlflow.start_run() as run:
        log_dataset(str(path), name="same")
    python_side = json.loads(logged_source(run.info.run_id).source)
    jvm = spark._jvm.io.github.semyonsinchenko.safetensors.dataset.mlflow.SafetensorsDatasetSource
    jvm_side = json.loads(jvm.fromPath(str(path), spark._jsc.hadoopConfiguration()).toJson())
    assert python_side.keys() == jvm_side.keys()
    for key in jvm_side:
        assert python_side[key] == jvm_side[key], key


def test_run_id_without_an_active_run(tracking_server, written):
    import mlflow

    path, _ = written
    run = mlflow.MlflowClient().create_run(mlflow.get_experiment_by_name("safetensors-lineage").experiment_id)
    assert mlflow.active_run() is None
    log_dataset(str(path), run_id=run.info.run_id, name="explicit")
    assert logged_source(run.info.run_id).name == "explicit"


def test_no_active_run_and_no_run_id_is_a_clear_error(tracking_server, written):
    import mlflow

    assert mlflow.active_run() is None
    # The original connector's wording, which its users (and its suite) match on.
    with pytest.raises(RuntimeError, match="No active MLflow run"):
        log_dataset(str(written[0]))


@pytest.mark.parametrize("kind", ["pyarrow", "fsspec"])
def test_a_pyarrow_or_fsspec_filesystem_logs_the_same_source(tracking_server, written, kind):
    """The original connector takes pyarrow file systems (log_dataset(..., filesystem=LocalFileSystem())),
    this package fsspec ones too; either logs what the path alone logs."""
    import fsspec
    import mlflow
    import pyarrow.fs

    path, _ = written
    fs = pyarrow.fs.LocalFileSystem() if kind == "pyarrow" else fsspec.filesystem("file")
    with mlflow.start_run() as plain:
        log_dataset(str(path), name="plain")
    with mlflow.start_run() as run:
        log_dataset(str(path), name="with-fs", filesystem=fs)
    assert json.loads(logged_source(run.info.run_id).source) == json.loads(logged_source(plain.info.run_id).source)


def test_missing_manifest_is_file_not_found(tracking_server, tmp_path):
    import mlflow

    with mlflow.start_run():
        with pytest.raises(FileNotFoundError, match="dataset_manifest.json"):
            log_dataset(str(tmp_path))

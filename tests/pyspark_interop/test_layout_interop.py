"""The on-disk layout is the original Scala connector's: datasets written by this connector are
opened with the Hugging Face safetensors library (tensor keys are the column names in batch mode
and <key>__<column> in kv mode), and the tensor index with spark.read.parquet and pyarrow."""

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from safetensors import safe_open
from safetensors.numpy import load_file


def manifest(root: Path):
    return json.loads((root / "dataset_manifest.json").read_text())


def shard_paths(root: Path):
    return [root / s["shard_path"] for s in manifest(root)["shards"]]


def test_batch_mode_writes_one_file_per_batch_keyed_by_column(spark, tmp_path):
    out = tmp_path / "batch"
    spark.sql("select id, array(cast(id as float), cast(id * 2 as float)) as x, array(id) as y from range(10)") \
        .coalesce(1).orderBy("id").select("x", "y") \
        .write.format("safetensors").option("batch_size", 4).save(str(out))
    m = manifest(out)
    assert (m["format_version"], m["safetensors_version"]) == ("1.0", "1.0")
    assert [s["samples_count"] for s in m["shards"]] == [4, 4, 2]
    start = 0
    for path in shard_paths(out):
        tensors = load_file(str(path))
        assert sorted(tensors) == ["x", "y"]
        n = tensors["x"].shape[0]
        ids = np.arange(start, start + n)
        np.testing.assert_array_equal(tensors["x"], np.stack([ids, ids * 2], axis=1).astype(np.float32))
        np.testing.assert_array_equal(tensors["y"], ids.reshape(n, 1).astype(np.int64))
        start += n
    assert start == 10


@pytest.mark.parametrize("sep", [None, "::"])
def test_kv_mode_keys_are_key_separator_column(spark, tmp_path, sep):
    out = tmp_path / f"kv{sep is not None}"
    writer = spark.sql("select concat('k', id) as key, array(cast(id as float)) as a, "
                       "sequence(0, cast(id as int)) as b from range(6)") \
        .write.format("safetensors").option("name_col", "key").option("generate_index", "true")
    if sep is not None:
        writer = writer.option("kv_separator", sep)
    writer.save(str(out))
    s = sep or "__"
    got = {}
    for path in shard_paths(out):
        with safe_open(str(path), framework="np") as f:
            assert f.metadata()["kv_separator"] == s
            for k in f.keys():
                got[k] = f.get_tensor(k)
    assert sorted(got) == sorted(f"k{i}{s}{c}" for i in range(6) for c in "ab")
    for i in range(6):
        np.testing.assert_array_equal(got[f"k{i}{s}a"], np.array([i], dtype=np.float32))
        # rows of one column may differ in shape: each is its own tensor
        np.testing.assert_array_equal(got[f"k{i}{s}b"], np.arange(i + 1, dtype=np.int32))
    assert manifest(out)["kv_separator"] == s

    # The index: Spark's reader by the directory's name, and pyarrow.
    rows = spark.read.parquet(str(out) + "/_tensor_index.parquet").collect()
    table = pq.read_table(out / "_tensor_index.parquet")
    assert {"tensor_key", "file_name", "shape", "dtype"} <= set(table.column_names)
    assert table.num_rows == len(rows) == 12
    assert sorted(r.tensor_name for r in rows) == sorted(got)
    for r in rows:
        with safe_open(str(out / r.file_name), framework="np") as f:
            t = f.get_slice(r.tensor_name)
            assert (t.get_dtype(), list(t.get_shape())) == (r.dtype, list(r.shape))
        assert r.tensor_name == f"{r.tensor_key}{s}{r.column}"
    assert sorted(table.column("tensor_key").to_pylist()) == sorted(r.tensor_key for r in rows)


def test_batch_index_is_readable_by_spark_and_pyarrow(spark, tmp_path):
    out = tmp_path / "batch-index"
    spark.sql("select array(cast(id as float)) as x from range(9)").coalesce(1) \
        .write.format("safetensors").option("batch_size", 4).option("generate_index", "true").save(str(out))
    rows = spark.read.parquet(str(out) + "/_tensor_index.parquet").collect()
    assert sorted((r.tensor_key, r.file_name) for r in rows) == sorted(("x", p.name) for p in shard_paths(out))
    assert sorted(list(r.shape) for r in rows) == [[1, 1], [4, 1], [4, 1]]
    assert pq.read_table(out / "_tensor_index.parquet").num_rows == 3

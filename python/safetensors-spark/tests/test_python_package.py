"""The package on datasets written by the connector (and on hand-written ones)."""

import json
import pickle
import shutil
import subprocess
import sys

import fsspec
import numpy as np
import pytest

from safetensors_spark import DistributedSafetensorsDataset, ShardInfo

ROWS = 60
UUID = "0f8fad5b-d9cb-469f-a165-70867728950e"  # in shard names as writers give them (the schema checks them)


@pytest.fixture(scope="module")
def kv_dataset(spark, tmp_path_factory):
    """kv mode, two columns (F32 vector, BF16 matrix), index, 3 partitions."""
    out = tmp_path_factory.mktemp("pkg") / "kv"
    (spark.range(0, ROWS, 1, 3)
     .selectExpr("concat('k', id) key", "array(cast(id as float), cast(id * 2 as float)) vec",
                 "array(array(cast(id as float), 0.5f), array(1.0f, -2.0f)) mat")
     .write.format("safetensors").option("name_col", "key").option("generate_index", "true")
     .option("dtype", "F32").save(str(out)))
    return out


@pytest.fixture(scope="module")
def batch_dataset(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("pkg") / "batch"
    (spark.range(0, ROWS, 1, 2)
     .selectExpr("array(cast(id as float), 1.0f) x", "cast(id as int) * 3 as y_scalar")
     .selectExpr("x", "array(y_scalar) y")
     .write.format("safetensors").option("batch_size", "8").save(str(out)))
    return out


def test_the_package_needs_no_spark():
    code = ("import sys, safetensors_spark, safetensors_spark.dataset, safetensors_spark._manifest; "
            "assert 'pyspark' not in sys.modules and 'py4j' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_metadata_of_a_kv_dataset(kv_dataset):
    ds = DistributedSafetensorsDataset.from_path(str(kv_dataset))
    manifest = json.loads((kv_dataset / "dataset_manifest.json").read_text())
    shards = ds.list_shards()
    assert [s.shard_path for s in shards] == [s.get("file", s.get("shard_path")) for s in manifest["shards"]]
    assert sum(s.num_samples for s in shards) == ROWS
    assert sum(s.bytes for s in shards) == manifest["total_bytes"]
    assert set(ds.get_schema()) == {"vec", "mat"}
    index = ds.get_index()
    assert index is not None and index.num_rows == 2 * ROWS
    assert sum(s.num_tensors for s in shards) == 2 * ROWS
    assert all(v for v in ds.validate().values()), ds.validate()
    text = ds.describe()
    assert f"Shards: {len(shards)}" in text and f"Total samples: {ROWS}" in text and "vec: F32" in text


def test_iterating_every_rank_gives_every_row_once(kv_dataset):
    ds = DistributedSafetensorsDataset.from_path(kv_dataset)
    seen = {}
    for rank in range(2):
        for sample in ds.iter_worker(rank, 2):
            assert sample["__key__"] not in seen
            seen[sample["__key__"]] = sample
    assert len(seen) == ROWS
    for i in range(ROWS):
        s = seen[f"k{i}"]
        np.testing.assert_array_equal(s["vec"], np.array([i, 2 * i], dtype=np.float32))
        np.testing.assert_array_equal(s["mat"], np.array([[i, 0.5], [1, -2]], dtype=np.float32))
        assert s["vec"].dtype == np.float32


def test_local_arrays_are_memory_mapped_views(kv_dataset):
    ds = DistributedSafetensorsDataset.from_path(kv_dataset)
    sample = next(ds.iter_worker(0, 1))
    arr = sample["vec"]
    assert not arr.flags.writeable
    base = arr
    while base.base is not None and not isinstance(base, np.memmap):
        base = base.base
    assert isinstance(base, np.memmap), type(base)


def test_batch_dataset_yields_batches(batch_dataset):
    ds = DistributedSafetensorsDataset.from_path(batch_dataset)
    batches = list(ds.iter_worker(0, 1))
    assert sum(b["x"].shape[0] for b in batches) == ROWS
    xs = np.concatenate([b["x"] for b in batches])
    ys = np.concatenate([b["y"] for b in batches])
    assert sorted(xs[:, 0].tolist()) == [float(i) for i in range(ROWS)]
    np.testing.assert_array_equal(ys[:, 0], (xs[:, 0] * 3).astype(ys.dtype))


def test_assign_shards_round_robin_and_balance(kv_dataset):
    ds = DistributedSafetensorsDataset.from_path(kv_dataset)
    shards = ds.list_shards()
    rr = ds.assign_shards(2)
    assert rr[0] == shards[0::2] and rr[1] == shards[1::2]
    for n in (1, 2, 5):
        balanced = ds.assign_shards(n, strategy="balance")
        assert sorted(s.shard_path for w in balanced.values() for s in w) == sorted(s.shard_path for s in shards)
        loads = [sum(s.bytes for s in w) for w in balanced.values()]
        assert max(loads) - min(loads) <= max(s.bytes for s in shards)
    with pytest.raises(ValueError, match="strategy"):
        ds.assign_shards(2, strategy="random")
    with pytest.raises(ValueError, match="num_workers"):
        ds.assign_shards(0)


def test_balance_evens_out_bytes():
    from safetensors_spark._manifest import Location, parse_manifest

    doc = {"format_version": "1.0", "safetensors_version": "1.0", "total_samples": 6, "total_bytes": 1000,
           "write_mode": "kv", "kv_separator": "__", "schema": {"v": {"dtype": "F32"}},
           "shards": [{"shard_path": f"part-{i:05d}-0000-0f8fad5b-d9cb-469f-a165-70867728950e.safetensors", "samples_count": 1, "bytes": b}
                      for i, b in enumerate([500, 100, 100, 100, 100, 100])]}
    m = parse_manifest(json.dumps(doc).encode(), "test")
    ds = DistributedSafetensorsDataset(Location(fsspec.filesystem("memory"), "/x", "memory://x", False), m)
    loads = sorted(sum(s.bytes for s in w) for w in ds.assign_shards(2, "balance").values())
    assert loads == [500, 500]
    rr = sorted(sum(s.bytes for s in w) for w in ds.assign_shards(2).values())
    assert rr == [300, 700]


def test_pickle_round_trip(kv_dataset):
    ds = DistributedSafetensorsDataset.from_path(kv_dataset)
    copy = pickle.loads(pickle.dumps(ds))
    assert copy.list_shards() == ds.list_shards()
    assert [s["__key__"] for s in copy.iter_worker(1, 3)] == [s["__key__"] for s in ds.iter_worker(1, 3)]


def test_fsspec_filesystem_gives_the_same_samples(kv_dataset):
    mem = fsspec.filesystem("memory")
    for f in kv_dataset.iterdir():
        if f.is_file():
            mem.pipe(f"/copy/{f.name}", f.read_bytes())
    remote = DistributedSafetensorsDataset.from_path("memory://copy")
    local = DistributedSafetensorsDataset.from_path(kv_dataset)
    assert remote.uri == "memory://copy"
    assert remote.validate() == local.validate()
    a = {s["__key__"]: s["mat"] for s in local.iter_worker(0, 1)}
    b = {s["__key__"]: s["mat"] for s in remote.iter_worker(0, 1)}
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])


def test_missing_manifest_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="dataset_manifest.json"):
        DistributedSafetensorsDataset.from_path(tmp_path)


def test_validate_finds_a_truncated_shard_and_a_missing_one(kv_dataset, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(kv_dataset, copy)
    ds = DistributedSafetensorsDataset.from_path(copy)
    shards = ds.list_shards()
    (copy / shards[0].shard_path).write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{}")
    checks = ds.validate()
    assert checks["sizes_match"] is False and checks["shards_exist"] is True
    (copy / shards[1].shard_path).unlink()
    assert ds.validate()["shards_exist"] is False


def test_original_connector_manifest_fields(kv_dataset, tmp_path):
    copy = tmp_path / "orig"
    shutil.copytree(kv_dataset, copy)
    m = json.loads((copy / "dataset_manifest.json").read_text())
    for s in m["shards"]:
        if "file" in s:
            s["shard_path"] = s.pop("file")
    m["format_version"] = "1.0"
    m["safetensors_version"] = "1.0"
    (copy / "dataset_manifest.json").write_text(json.dumps(m))
    ds = DistributedSafetensorsDataset.from_path(copy)
    assert [s.shard_path for s in ds.list_shards()] == [s["shard_path"] for s in m["shards"]]
    assert sum(1 for _ in ds.iter_worker(0, 1)) == ROWS
    assert isinstance(ds.list_shards()[0], ShardInfo)


def _hand_written(tmp_path, files, manifest_extra, shard_field="shard_path", fmt="1.0"):
    """A dataset directory from {file name: {tensor: array}} and manifest fields (no Spark)."""
    from safetensors.numpy import save_file

    tmp_path.mkdir(parents=True, exist_ok=True)
    shards = []
    for name, tensors in files.items():
        save_file(tensors, str(tmp_path / name))
        shards.append({shard_field: name, "samples_count": 1, "bytes": (tmp_path / name).stat().st_size})
    doc = {"format_version": fmt, "safetensors_version": fmt, "total_samples": len(shards),
           "total_bytes": sum(s["bytes"] for s in shards), "shards": shards, **manifest_extra}
    (tmp_path / "dataset_manifest.json").write_text(json.dumps(doc))
    return DistributedSafetensorsDataset.from_path(tmp_path)


def test_iter_worker_follows_every_tensor_naming(tmp_path):
    a, b = np.arange(2, dtype=np.float32), np.arange(3, dtype=np.int64)
    schema = {"a": {"dtype": "F32"}, "b": {"dtype": "I64"}}
    # kv with a recorded separator (a key may itself contain the separator)
    ds = _hand_written(tmp_path / "kv", {f"part-00000-0000-{UUID}.safetensors": {"u__1--a": a, "u__1--b": b}},
                       {"write_mode": "kv", "kv_separator": "--", "schema": schema})
    [s] = list(ds.iter_worker(0, 1))
    assert s["__key__"] == "u__1"
    np.testing.assert_array_equal(s["a"], a)
    np.testing.assert_array_equal(s["b"], b)
    # kv of an earlier version: <key>/<column>, shard "file", format "1"
    ds = _hand_written(tmp_path / "old-kv", {f"part-00000-{UUID}.safetensors": {"u/a": a, "u/b": b}},
                       {"write_mode": "kv", "schema": schema}, shard_field="file", fmt="1")
    [s] = list(ds.iter_worker(0, 1))
    assert (s["__key__"], sorted(s)) == ("u", ["__key__", "a", "b"])
    # batch: a file per batch named after the columns, and packed <column>/<batch>
    x = np.ones((4, 2), dtype=np.float32)
    ds = _hand_written(tmp_path / "batch", {f"part-00000-0000-{UUID}.safetensors": {"x": x},
                                            f"part-00000-0001-{UUID}.safetensors": {"x": x[:1]}},
                       {"write_mode": "batch", "schema": {"x": {"dtype": "F32", "shape": [2]}}})
    assert [b["x"].shape for b in ds.iter_worker(0, 1)] == [(4, 2), (1, 2)]
    ds = _hand_written(tmp_path / "packed", {f"part-00000-{UUID}.safetensors": {"x/000000": x, "x/000001": x[:1]}},
                       {"write_mode": "batch", "schema": {"x": {"dtype": "F32", "shape": [2]}}}, shard_field="file")
    assert sorted((b["__key__"], b["x"].shape) for b in ds.iter_worker(0, 1)) == [("000000", (4, 2)),
                                                                                   ("000001", (1, 2))]


# ---------------------------------------------------------------- the original connector's users
# Regression tests for what the original connector's PySpark suite (tests/pyspark_interop at its
# commit 4b55429, run by hand against this package) found missing.


def test_a_pyarrow_filesystem_reads_like_a_path(kv_dataset):
    import pyarrow.fs

    from safetensors_spark._manifest import locate, source_dict

    local = DistributedSafetensorsDataset.from_path(str(kv_dataset))
    arrow = DistributedSafetensorsDataset.from_path(str(kv_dataset), filesystem=pyarrow.fs.LocalFileSystem())
    assert arrow.uri == local.uri and arrow.list_shards() == local.list_shards()
    assert arrow.validate() == local.validate()
    a = {s["__key__"]: s["vec"] for s in arrow.iter_worker(0, 1)}
    b = {s["__key__"]: s["vec"] for s in local.iter_worker(0, 1)}
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    # log_dataset's source document (safetensors_spark.mlflow) is built from the same location
    loc = locate(str(kv_dataset), pyarrow.fs.LocalFileSystem())
    assert source_dict(loc, local._manifest) == source_dict(locate(str(kv_dataset)), local._manifest)
    assert pickle.loads(pickle.dumps(arrow)).list_shards() == local.list_shards()
    with pytest.raises(TypeError, match="fsspec or a pyarrow file system"):
        DistributedSafetensorsDataset.from_path(str(kv_dataset), filesystem=object())


def test_path_attribute_and_pickle_round_trip_of_the_original(batch_dataset):
    ds = DistributedSafetensorsDataset.from_path(str(batch_dataset))
    assert ds._path == str(batch_dataset)  # the original's users read _path: the path as given
    copy = pickle.loads(pickle.dumps(ds))
    assert copy._path == ds._path and copy.list_shards() == ds.list_shards()
    # A state pickled by the original connector's package: {"path", "manifest" (dict), "index_table"}.
    manifest = json.loads((batch_dataset / "dataset_manifest.json").read_text())
    old = DistributedSafetensorsDataset.__new__(DistributedSafetensorsDataset)
    old.__setstate__({"path": str(batch_dataset), "manifest": manifest, "index_table": None})
    assert old._path == str(batch_dataset) and old.list_shards() == ds.list_shards()
    assert sum(b["x"].shape[0] for b in old.iter_worker(0, 1)) == ROWS


def test_num_tensors_is_an_integer_with_or_without_an_index(kv_dataset, batch_dataset, tmp_path):
    from safetensors import safe_open

    # Each source of the count: the index; the layout (kv without its index, batch a file per
    # batch); the headers (a manifest that does not say whether batches are packed).
    kv_no_index, batch_unknown = tmp_path / "kv", tmp_path / "batch"
    for src, dst, drop in ((kv_dataset, kv_no_index, "index"), (batch_dataset, batch_unknown, "pack_batches")):
        shutil.copytree(src, dst)
        m = json.loads((dst / "dataset_manifest.json").read_text())
        del m[drop]
        (dst / "dataset_manifest.json").write_text(json.dumps(m))
        shutil.rmtree(dst / "_tensor_index.parquet", ignore_errors=True)
    for root, has_index in ((kv_dataset, True), (batch_dataset, False), (kv_no_index, False), (batch_unknown, False)):
        ds = DistributedSafetensorsDataset.from_path(root)
        assert (ds.get_index() is not None) == has_index
        for s in ds.list_shards():
            with safe_open(str(root / s.shard_path), "numpy") as f:
                assert s.num_tensors == len(f.keys()), s
        text = ds.describe()
        assert f"Tensors: {sum(s.num_tensors for s in ds.list_shards())}" in text, text


def test_a_manifest_that_breaks_the_format_names_the_rule(kv_dataset, tmp_path):
    from safetensors_spark._manifest import DatasetError

    copy = tmp_path / "hostile"
    shutil.copytree(kv_dataset, copy)
    m = json.loads((copy / "dataset_manifest.json").read_text())
    m["shards"].append(dict(m["shards"][0]))
    (copy / "dataset_manifest.json").write_text(json.dumps(m))
    with pytest.raises(DatasetError) as e:
        DistributedSafetensorsDataset.from_path(copy)
    assert e.value.rule == "DUPLICATE_SHARD" and "dataset_manifest.json" in str(e.value)
    m["shards"].pop()
    m["total_samples"] += 5  # recorded totals are not trusted: they are the shards' sums, validate() compares
    (copy / "dataset_manifest.json").write_text(json.dumps(m))
    ds = DistributedSafetensorsDataset.from_path(copy)
    assert ds.validate()["totals_match"] is False
    assert f"Total samples: {ROWS}" in ds.describe()
    m["shards"].append(dict(m["shards"][0]))
    m["shards"][-1][next(k for k in ("shard_path", "file") if k in m["shards"][-1])] = "../elsewhere.safetensors"
    (copy / "dataset_manifest.json").write_text(json.dumps(m))
    with pytest.raises(DatasetError) as e:
        DistributedSafetensorsDataset.from_path(copy)
    assert e.value.rule == "PATH_OUTSIDE_ROOT"


def test_a_shard_that_breaks_the_format_names_file_tensor_and_rule(kv_dataset, tmp_path):
    from safetensors_spark._header import HeaderError

    copy = tmp_path / "bad-shard"
    shutil.copytree(kv_dataset, copy)
    ds = DistributedSafetensorsDataset.from_path(copy)
    shard = ds.list_shards()[0].shard_path
    with open(copy / shard, "ab") as f:
        f.write(b"\0")  # a byte after the data section
    with pytest.raises(HeaderError) as e:
        list(ds.iter_shard(shard))
    assert e.value.violation == "TRAILING_BYTES" and e.value.file.endswith(shard)
    assert ds.validate()["headers_valid"] is False

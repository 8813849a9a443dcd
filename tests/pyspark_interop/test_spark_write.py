"""Spark -> Python: datasets written by df.write.format("safetensors") read back with the
Hugging Face safetensors library, bit for bit."""

import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import jsonschema
import ml_dtypes
import numpy as np
import pytest
from safetensors import safe_open

from conftest import ROOT

NP = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "BF16": ml_dtypes.bfloat16,
      "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8,
      "U64": np.uint64, "U32": np.uint32, "U16": np.uint16, "U8": np.uint8}


def shard_files(root: Path):
    return sorted(p for p in root.iterdir() if p.name.endswith(".safetensors"))


def read_raw(path: Path):
    """name -> (dtype, shape, raw bytes), from the header directly (numpy has no BF16)."""
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    out = {}
    for name, info in header.items():
        b, e = info["data_offsets"]
        out[name] = (info["dtype"], info["shape"], data[8 + n + b:8 + n + e])
    return out


def read_dataset(root: Path):
    """Every tensor of every shard, opened with safe_open (keys, dtypes, shapes) and compared
    with the raw header view; returns {(file, name): numpy array}."""
    out = {}
    for p in shard_files(root):
        raw = read_raw(p)
        with safe_open(str(p), framework="np") as f:
            assert sorted(f.keys()) == sorted(raw)
            for k in f.keys():
                dtype, shape, data = raw[k]
                sl = f.get_slice(k)
                assert sl.get_dtype() == dtype and list(sl.get_shape()) == shape
                arr = np.frombuffer(data, dtype=np.dtype(NP[dtype]).newbyteorder("<")).reshape(shape)
                if dtype != "BF16":
                    np.testing.assert_array_equal(f.get_tensor(k).view(np.uint8), arr.view(np.uint8))
                out[(p.name, k)] = arr
    return out


def by_name(tensors):
    out = {}
    for (_, name), arr in tensors.items():
        assert name not in out, f"{name} twice"
        out[name] = arr
    return out


def manifest(root: Path):
    return json.loads((root / "dataset_manifest.json").read_text())


def check_manifest(root: Path):
    m = manifest(root)
    schema = json.loads((ROOT / "format" / "dataset_manifest.schema.json").read_text())
    jsonschema.validate(m, schema)
    total = 0
    for s in m["shards"]:
        assert re.fullmatch(r"part-\d{5}-\d{4}-[0-9a-f-]{36}\.safetensors", s["shard_path"]), s
        size = (root / s["shard_path"]).stat().st_size
        assert size == s["bytes"]
        total += size
    assert total == m["total_bytes"]
    assert (m["format_version"], m["safetensors_version"]) == ("1.0", "1.0")
    listed = {s["shard_path"] for s in m["shards"]}
    on_disk = {p.name for p in shard_files(root)}
    assert listed <= on_disk
    # Any other shard is the previous version's, kept for its readers (retain_versions=1).
    previous = set()
    for h in (root / "_manifests").glob("*.json"):
        hm = json.loads(h.read_text())
        if hm.get("version") == m["version"] - 1:
            previous = {s["shard_path"] for s in hm["shards"]}
    assert on_disk - listed <= previous, on_disk - listed
    assert not (root / "_staging").exists()
    return m


def bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


# ---------------------------------------------------------------------------------------------


SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 1e-7, 70000.0, 65519.0, 65520.0, 3.3895314e38, 1.0 + 2.0 ** -8]


def float_rows(n=24, width=10, seed=0):
    rng = np.random.default_rng(seed)
    vals = (rng.standard_normal((n, width)) * 1000).astype(np.float32)
    k = min(width, len(SPECIALS))
    vals[0, :k] = np.array(SPECIALS[:k], dtype=np.float32)
    return vals


@pytest.mark.parametrize("dtype", ["F32", "F64", "F16", "BF16"])
def test_kv_float_arrays_match_numpy_bit_for_bit(spark, tmp_path, dtype):
    vals = float_rows()
    df = spark.createDataFrame([(f"k{i}", [float(x) for x in row]) for i, row in enumerate(vals)],
                               "key string, v array<float>")
    out = tmp_path / dtype
    df.write.format("safetensors").option("name_col", "key").option("dtype", dtype).save(str(out))
    m = check_manifest(out)
    assert m["write_mode"] == "kv" and m["total_samples"] == len(vals)
    assert m["schema"] == {"v": {"dtype": dtype, "shape": [vals.shape[1]]}}
    got = by_name(read_dataset(out))
    assert len(got) == len(vals)
    for i, row in enumerate(vals):
        np.testing.assert_array_equal(bits(got[f"k{i}__v"]), bits(row.astype(NP[dtype])))


@pytest.mark.parametrize("dtype", ["I8", "I16", "I32", "I64", "U8", "U16", "U32", "U64", "F32", "F64", "BF16"])
def test_integer_arrays_are_exact(spark, tmp_path, dtype):
    info = np.iinfo(NP[dtype]) if dtype[0] in "IU" else None
    lo, hi = (max(int(info.min), -2**31), min(int(info.max), 2**31 - 1)) if info else (-2**31, 2**31 - 1)
    rng = np.random.default_rng(1)
    vals = rng.integers(lo, hi, size=(10, 6), endpoint=True, dtype=np.int64)
    vals[0, :2] = [lo, hi]
    df = spark.createDataFrame([(f"k{i}", [int(x) for x in row]) for i, row in enumerate(vals)],
                               "key string, v array<bigint>")
    out = tmp_path / dtype
    df.write.format("safetensors").option("name_col", "key").option("dtype", dtype).save(str(out))
    got = by_name(read_dataset(out))
    for i, row in enumerate(vals):
        np.testing.assert_array_equal(bits(got[f"k{i}__v"]), bits(row.astype(NP[dtype])))


def test_tensor_struct_is_written_verbatim_and_converted(spark, tmp_path):
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(6)]
    rows = [(f"t{i}", (bytearray(a.tobytes()), [2, 3], "F32")) for i, a in enumerate(arrays)]
    df = spark.createDataFrame(rows, "key string, t struct<data: binary, shape: array<int>, dtype: string>")
    out = tmp_path / "struct"
    df.write.format("safetensors").option("name_col", "key").save(str(out))
    got = by_name(read_dataset(out))
    for i, a in enumerate(arrays):
        np.testing.assert_array_equal(bits(got[f"t{i}__t"]), bits(a))
    for target in ["F16", "BF16"]:
        conv = tmp_path / target
        df.write.format("safetensors").option("name_col", "key").option("dtype", target).save(str(conv))
        got = by_name(read_dataset(conv))
        for i, a in enumerate(arrays):
            np.testing.assert_array_equal(bits(got[f"t{i}__t"]), bits(a.astype(NP[target])))


def test_several_columns_and_nested_arrays(spark, tmp_path):
    df = spark.sql("select concat('r', id) as key, array(array(id, id + 1), array(id + 2, id + 3)) as m, "
                   "array(cast(id as double)) as d from range(5)")
    out = tmp_path / "multi"
    df.write.format("safetensors").option("name_col", "key").save(str(out))
    got = by_name(read_dataset(out))
    assert len(got) == 10
    np.testing.assert_array_equal(got["r3__m"], np.array([[3, 4], [5, 6]], dtype=np.int64))
    np.testing.assert_array_equal(got["r3__d"], np.array([3.0]))
    assert check_manifest(out)["schema"] == {"m": {"dtype": "I64", "shape": [2, 2]},
                                             "d": {"dtype": "F64", "shape": [1]}}


@pytest.mark.parametrize("tail", ["write", "drop", "pad"])
def test_batch_mode_tail_strategies(spark, tmp_path, tail):
    vals = float_rows(n=10, width=3, seed=3)
    df = spark.createDataFrame([(i, [float(x) for x in row]) for i, row in enumerate(vals)],
                               "id long, v array<float>").coalesce(1).orderBy("id").select("v")
    out = tmp_path / tail
    df.write.format("safetensors").option("batch_size", 4).option("tail_strategy", tail) \
        .option("dtype", "BF16").save(str(out))
    m = check_manifest(out)
    # One standalone file per batch, its tensor named after the column (the original's layout).
    tensors = read_dataset(out)
    files = [s["shard_path"] for s in m["shards"]]
    assert sorted(files) == files and all(name == "v" for (_, name) in tensors)
    got = [tensors[(f, "v")] for f in files]
    expected = vals.astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(bits(got[0]), bits(expected[0:4]))
    np.testing.assert_array_equal(bits(got[1]), bits(expected[4:8]))
    if tail == "write":
        np.testing.assert_array_equal(bits(got[2]), bits(expected[8:10]))
        assert m["total_samples"] == 10
    elif tail == "drop":
        assert len(got) == 2
        assert m["total_samples"] == 8
    else:
        padded = np.concatenate([expected[8:10], np.zeros((2, 3), dtype=ml_dtypes.bfloat16)])
        np.testing.assert_array_equal(bits(got[2]), bits(padded))
        assert m["total_samples"] == 10
        assert [s["samples_count"] for s in m["shards"]] == [4, 4, 2]  # padding is not counted
    with safe_open(str(shard_files(out)[0]), framework="np") as f:
        assert f.metadata()["tail_strategy"] == tail and f.metadata()["batch_size"] == "4"


def test_batch_rows_of_different_shapes_are_batched_apart(spark, tmp_path):
    """The original connector's test_skewed_data_distribution: 10 rows of [10] and 100 of [1000] as
    Tensor Structs, repartitioned, batch_size 10, tail write. Every row is written once, every file
    is one the Hugging Face library reads, and every batch holds rows of one shape."""
    from pyspark.sql import Row

    from safetensors_spark import DistributedSafetensorsDataset

    rows = [Row(t=Row(data=np.full(n, i, dtype="<f4").tobytes(), shape=[n], dtype="F32"))
            for i, n in enumerate([10] * 10 + [1000] * 100)]
    df = spark.createDataFrame(rows, "t struct<data: binary, shape: array<int>, dtype: string>").repartition(3)
    out = tmp_path / "skewed"
    df.write.format("safetensors").option("batch_size", "10").option("tail_strategy", "write").save(str(out))
    m = check_manifest(out)
    assert m["total_samples"] == 110 and "shape" not in m["schema"]["t"]
    seen = {}
    for (_, name), batch in read_dataset(out).items():
        assert name == "t" and batch.ndim == 2 and batch.shape[1] in (10, 1000) and batch.shape[0] <= 10
        for sample in batch:
            i = int(sample[0])
            assert i not in seen and (sample == i).all()
            seen[i] = sample.size
    assert seen == {i: 10 if i < 10 else 1000 for i in range(110)}
    # The Python package reads the same batches.
    batches = list(DistributedSafetensorsDataset.from_path(out).iter_worker(0, 1))
    assert sum(b["t"].shape[0] for b in batches) == 110


def read_index(spark, root: Path, tmp_path: Path):
    # A directory holding one part file, as Spark writes Parquet: Spark reads it by its name.
    return spark.read.parquet(str(root) + "/_tensor_index.parquet").collect()


def test_index_routes_every_key_to_its_file(spark, tmp_path):
    out = tmp_path / "indexed"
    spark.sql("select concat('k', id) as key, array(cast(id as float), 0.5f) as v from range(0, 40, 1, 2)") \
        .write.format("safetensors").option("name_col", "key").option("generate_index", "true").save(str(out))
    m = check_manifest(out)
    # The version's own index (named by the manifest, with its hash and row count) and its copy where
    # tools read the index by the directory's name.
    own = out / m["index"]["file"]
    assert m["index"]["file"].startswith("_index/") and m["index"]["commit_id"] == m["commit_id"]
    assert m["index"]["sha256"] == hashlib.sha256(own.read_bytes()).hexdigest() and m["index"]["rows"] == 40
    assert (out / "_tensor_index.parquet" / "part-00000.parquet").read_bytes() == own.read_bytes()
    rows = read_index(spark, out, tmp_path)
    assert sorted(r.tensor_key for r in rows) == sorted(f"k{i}" for i in range(40))
    for r in rows:
        raw = read_raw(out / r.file_name)
        dtype, shape, data = raw[r.tensor_name]
        assert (dtype, shape) == (r.dtype, list(r.shape))
        assert (out / r.file_name).read_bytes()[r.begin:r.end] == data
        with safe_open(str(out / r.file_name), framework="np") as f:
            assert r.tensor_name in f.keys()


def test_shard_sizes_within_20_percent_of_the_target(spark, tmp_path):
    out = tmp_path / "sized"
    spark.sql("select concat('k', id) as key, array_repeat(cast(id as float), 262144) as v "
              "from range(0, 240, 1, 2)") \
        .write.format("safetensors").option("name_col", "key").option("target_shard_size_mb", 50).save(str(out))
    m = check_manifest(out)
    target = 50 << 20
    per_task = {}
    for s in m["shards"]:
        per_task.setdefault(s["shard_path"][:10], []).append(s["bytes"])
    assert len(per_task) == 2
    for sizes in per_task.values():
        # every shard but the task's last within 20% of the target
        assert sum(1 for b in sizes if 0.8 * target <= b <= 1.2 * target) >= len(sizes) - 1, sizes
        assert len(sizes) >= 2
    got = read_dataset(out)
    assert len(got) == 240


def test_duplicates_strategies(spark, tmp_path):
    df = spark.createDataFrame([("a", [1.0]), ("b", [5.0]), ("a", [2.0])], "key string, v array<float>").coalesce(1)
    with pytest.raises(Exception, match="duplicate key 'a'"):
        df.write.format("safetensors").option("name_col", "key").save(str(tmp_path / "fail"))
    assert not (tmp_path / "fail" / "dataset_manifest.json").exists()
    out = tmp_path / "last"
    df.write.format("safetensors").option("name_col", "key").option("duplicatesStrategy", "lastWin").save(str(out))
    got = by_name(read_dataset(out))
    assert sorted(got) == ["a__v", "b__v"]
    np.testing.assert_array_equal(got["a__v"], np.array([2.0], dtype=np.float32))
    assert check_manifest(out)["total_samples"] == 2


def test_save_modes(spark, tmp_path):
    out = str(tmp_path / "modes")
    df = spark.sql("select concat('k', id) as key, array(cast(id as float)) as v from range(4)")
    df.write.format("safetensors").option("name_col", "key").save(out)
    with pytest.raises(Exception, match="already holds a safetensors dataset"):
        df.write.format("safetensors").option("name_col", "key").save(out)
    df.write.format("safetensors").mode("ignore").option("name_col", "key").save(out)
    assert manifest(Path(out))["total_samples"] == 4
    spark.sql("select concat('x', id) as key, array(cast(id as float)) as v from range(3)") \
        .write.format("safetensors").mode("append").option("name_col", "key").save(out)
    assert check_manifest(Path(out))["total_samples"] == 7
    df.limit(1).write.format("safetensors").mode("overwrite").option("name_col", "key").save(out)
    assert check_manifest(Path(out))["total_samples"] == 1


CLUSTER_SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    from conftest import session_builder
    spark = session_builder("local-cluster[2,1,1024]").getOrCreate()
    try:
        ids = spark.sparkContext.parallelize(range(4), 4).map(
            lambda _: __import__("os").getpid()).distinct().count()
        assert ids == 2, f"expected two executor JVMs, saw {ids}"
        spark.sql("select concat('k', id) as key, array(cast(id as float), cast(id * 2 as float)) as v "
                  "from range(0, 400, 1, 4)") \\
            .write.format("safetensors").option("name_col", "key").option("generate_index", "true") \\
            .save(sys.argv[2])
    finally:
        spark.stop()
""")


def test_local_cluster_two_executor_jvms(tmp_path):
    """A separate Python process: one SparkContext per process, and the suite's session is local."""
    out = tmp_path / "cluster"
    env = dict(os.environ)
    proc = subprocess.run([sys.executable, "-c", CLUSTER_SCRIPT, str(Path(__file__).parent), str(out)],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    m = check_manifest(out)
    assert m["total_samples"] == 400
    assert len({s["shard_path"][:10] for s in m["shards"]}) == 4
    got = by_name(read_dataset(out))
    assert len(got) == 400
    for i in range(400):
        np.testing.assert_array_equal(got[f"k{i}__v"], np.array([i, 2 * i], dtype=np.float32))

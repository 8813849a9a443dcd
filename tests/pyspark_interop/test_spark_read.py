"""Python -> Spark: files written by the Hugging Face safetensors library, read with format("safetensors").

Every tensor arrives as struct<data: binary, shape: array<int>, dtype: string>; decoding data with
numpy (ml_dtypes for BF16) must give back exactly the arrays that were saved.
"""
import ml_dtypes
import numpy as np
import pytest
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, BinaryType, IntegerType, StringType, StructType
from safetensors.numpy import save_file

NUMPY_DTYPE = {
    "F64": np.dtype("<f8"), "F32": np.dtype("<f4"), "F16": np.dtype("<f2"), "BF16": np.dtype(ml_dtypes.bfloat16),
    "I64": np.dtype("<i8"), "I32": np.dtype("<i4"), "I16": np.dtype("<i2"), "I8": np.dtype("i1"),
    "U64": np.dtype("<u8"), "U32": np.dtype("<u4"), "U16": np.dtype("<u2"), "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}


def decode(tensor):
    """A Spark Tensor Struct row -> numpy array."""
    return np.frombuffer(bytes(tensor["data"]), dtype=NUMPY_DTYPE[tensor["dtype"]]).reshape(tensor["shape"])


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def model_tensors(seed):
    rng = np.random.default_rng(seed)
    return {
        "embed.weight": rng.standard_normal((8, 4)).astype(np.float32),
        "norm.weight": rng.standard_normal(4).astype(ml_dtypes.bfloat16),
        "lm_head.weight": rng.standard_normal((3, 4)).astype(np.float16),
        "position_ids": np.arange(6, dtype=np.int64).reshape(1, 6) + seed,
        "mask": rng.random(5) > 0.5,
        "quant": rng.integers(-128, 127, size=(2, 3), dtype=np.int8),
        "counts": rng.integers(0, 2**31, size=3, dtype=np.uint32),
        "scale": np.array(0.125, dtype=np.float64),
        "empty": np.zeros((0, 3), dtype=np.float32),
    }


@pytest.fixture(scope="module")
def hf_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("hf")
    a = model_tensors(1)
    b = {k: v for k, v in model_tensors(2).items() if k != "norm.weight"}
    save_file(a, str(d / "shard-a.safetensors"), metadata={"format": "pt"})
    save_file(b, str(d / "shard-b.safetensors"))
    return d, {"shard-a.safetensors": a, "shard-b.safetensors": b}


TENSOR_STRUCT = StructType().add("data", BinaryType(), False) \
    .add("shape", ArrayType(IntegerType(), False), False).add("dtype", StringType(), False)


def test_schema_is_one_tensor_struct_per_tensor(spark, hf_dir):
    d, expected = hf_dir
    df = spark.read.format("safetensors").option("inferSchema", "true").load(str(d / "shard-a.safetensors"))
    assert sorted(df.columns) == sorted(expected["shard-a.safetensors"])
    for field in df.schema.fields:
        assert field.dataType == TENSOR_STRUCT, field
        assert field.nullable


def test_wide_values_match_numpy_exactly(spark, hf_dir):
    d, expected = hf_dir
    df = spark.read.format("safetensors").option("inferSchema", "true").load(str(d)) \
        .withColumn("file", F.input_file_name())
    rows = df.collect()
    assert len(rows) == 2
    by_file = {}
    for r in rows:
        # input_file_name is empty for V2 sources; tell the files apart by a tensor that differs
        key = "shard-a.safetensors" if r["norm.weight"] is not None else "shard-b.safetensors"
        by_file[key] = r
    assert set(by_file) == set(expected)
    for name, tensors in expected.items():
        row = by_file[name]
        for col, arr in tensors.items():
            got = decode(row[col])
            assert same(got, arr), (name, col)
    assert by_file["shard-b.safetensors"]["norm.weight"] is None


def test_kv_layout_gives_one_row_per_tensor(spark, hf_dir):
    d, expected = hf_dir
    df = spark.read.format("safetensors").option("inferSchema", "true").option("layout", "kv").load(str(d))
    assert df.columns == ["tensor_key", "tensor"]
    rows = df.collect()
    assert len(rows) == sum(len(t) for t in expected.values())
    for name, tensors in expected.items():
        for col, arr in tensors.items():
            matches = [r for r in rows if r["tensor_key"] == col and same(decode(r["tensor"]), arr)]
            assert len(matches) >= 1, (name, col)  # "empty" is the same (0, 3) array in both files


def test_bf16_decodes_through_ml_dtypes(spark, hf_dir):
    d, expected = hf_dir
    row = spark.read.format("safetensors").option("inferSchema", "true").load(str(d / "shard-a.safetensors")) \
        .select("`norm.weight`").first()[0]
    assert row["dtype"] == "BF16"
    got = decode(row)
    want = expected["shard-a.safetensors"]["norm.weight"]
    assert got.dtype == ml_dtypes.bfloat16
    assert np.array_equal(got.astype(np.float32), want.astype(np.float32))


def test_shape_only_projection_and_pushdown(spark, hf_dir):
    d, _ = hf_dir
    df = spark.read.format("safetensors").option("inferSchema", "true").option("layout", "kv").load(str(d))
    shapes = {r["tensor_key"]: r["shape"] for r in df.select("tensor_key", "tensor.shape").collect()}
    assert shapes["embed.weight"] == [8, 4]
    assert shapes["scale"] == []
    assert shapes["empty"] == [0, 3]
    picked = df.where(F.col("tensor_key") == "lm_head.weight").where(F.col("tensor.dtype") == "F16")
    plan = picked._jdf.queryExecution().executedPlan().toString()
    assert "PushedFilters" in plan and "tensor_key = 'lm_head.weight'" in plan
    assert picked.count() == 2


def _tensor_df(spark, n):
    rows = []
    for i in range(n):
        img = (np.arange(6, dtype=np.float32) + i).reshape(2, 3)
        rows.append((f"k{i}", (bytearray(img.tobytes()), [2, 3], "F32"),
                     (bytearray(np.array(i * 10, dtype=np.int64).tobytes()), [], "I64")))
    schema = StructType().add("key", StringType(), False).add("image", TENSOR_STRUCT, False) \
        .add("label", TENSOR_STRUCT, False)
    return spark.createDataFrame(rows, schema)


def test_round_trip_kv(spark, tmp_path):
    src = _tensor_df(spark, 7)
    out = str(tmp_path / "kv")
    src.write.format("safetensors").option("name_col", "key").mode("overwrite").save(out)
    back = spark.read.format("safetensors").option("inferSchema", "true").load(out)
    assert back.columns == ["tensor_key", "image", "label"]
    assert back.count() == 7
    got = {r["tensor_key"]: r for r in back.collect()}
    for r in src.collect():
        assert bytes(got[r["key"]]["image"]["data"]) == bytes(r["image"]["data"])
        assert got[r["key"]]["image"]["shape"] == [2, 3]
        assert bytes(got[r["key"]]["label"]["data"]) == bytes(r["label"]["data"])


def test_round_trip_batch_unbatch(spark, tmp_path):
    src = _tensor_df(spark, 7).drop("key")
    out = str(tmp_path / "batch")
    src.write.format("safetensors").option("batch_size", "3").mode("overwrite").save(out)
    back = spark.read.format("safetensors").option("inferSchema", "true").option("unbatch", "true").load(out)
    assert back.count() == 7
    want = sorted((bytes(r["image"]["data"]), bytes(r["label"]["data"])) for r in src.collect())
    got = sorted((bytes(r["image"]["data"]), bytes(r["label"]["data"])) for r in back.collect())
    assert got == want
    for r in back.collect():
        assert r["image"]["shape"] == [2, 3] and r["label"]["shape"] == []

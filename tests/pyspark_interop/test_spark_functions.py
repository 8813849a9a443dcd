"""The SQL tensor functions from PySpark against numpy and ml_dtypes (spec 4.1: values via st_to_array).

The session (conftest) enables io.github.semyonsinchenko.safetensors.SafetensorsExtensions.
"""
import ml_dtypes
import numpy as np
import pytest
from pyspark.sql import functions as F
from pyspark.errors import AnalysisException
from safetensors.numpy import save_file

NUMPY = {"F32": np.float32, "F16": np.float16, "BF16": ml_dtypes.bfloat16, "F64": np.float64, "I16": np.int16}


@pytest.fixture(scope="module")
def hf_file(tmp_path_factory):
    rng = np.random.default_rng(5)
    base = rng.standard_normal((16, 32)).astype(np.float32)
    tensors = {name: base.astype(NUMPY[name]) for name in ("F32", "F16", "BF16", "F64")}
    tensors["I16"] = rng.integers(-3000, 3000, size=(4, 8), dtype=np.int16)
    d = tmp_path_factory.mktemp("fn")
    save_file(tensors, str(d / "t.safetensors"))
    return d / "t.safetensors", tensors


def test_st_to_array_matches_numpy_astype_float32(spark, hf_file):
    path, tensors = hf_file
    rows = {r["tensor_key"]: r["a"] for r in spark.read.format("safetensors").option("layout", "kv")
            .option("inferSchema", "true").load(str(path)).selectExpr("tensor_key", "st_to_array(tensor) a").collect()}
    for name, arr in tensors.items():
        expected = arr.astype(np.float32).ravel()
        assert np.array_equal(np.array(rows[name], dtype=np.float32), expected), name


@pytest.mark.parametrize("dtype", ["BF16", "F16"])
def test_arr_to_st_is_bit_identical_to_ml_dtypes_and_numpy(spark, dtype):
    rng = np.random.default_rng(11)
    # Random floats plus exact ties, so round-to-nearest-even is really exercised.
    values = np.concatenate([rng.standard_normal(2000).astype(np.float32) * 100,
                             np.array([1.01171875, 1 + 3 / 2048, -1.01171875, 65520.0, 1e-8], dtype=np.float32)])
    df = spark.createDataFrame([(values.tolist(),)], "v array<float>")
    row = df.selectExpr(f"arr_to_st(v, array({len(values)}), '{dtype}') t").first()["t"]
    assert row["dtype"] == dtype and list(row["shape"]) == [len(values)]
    assert bytes(row["data"]) == values.astype(NUMPY[dtype]).tobytes()


def test_st_convert_and_call_function(spark):
    df = spark.createDataFrame([([1.5, -2.25, 3.0],)], "v array<float>")
    t = F.call_function("arr_to_st", F.col("v"), F.expr("array(3)"), F.lit("F32"))
    out = df.select(F.call_function("st_convert", t, F.lit("F16")).alias("h")).first()["h"]
    assert bytes(out["data"]) == np.array([1.5, -2.25, 3.0], dtype=np.float16).tobytes()


def test_unknown_dtype_is_an_analysis_error(spark):
    df = spark.createDataFrame([([1.0],)], "v array<float>")
    with pytest.raises(AnalysisException, match="dtype 'Q4' is not supported"):
        df.selectExpr("arr_to_st(v, array(1), 'Q4')").collect()

"""st_to_array and arr_to_st against the same conversion in a pandas UDF (numpy + ml_dtypes).

One PySpark session (local[2]) with the connector jar and SafetensorsExtensions. The input is one
dataset of BF16 tensors and one of F16 tensors written by the connector (half of the size each).
Every measured query ends in the "noop" sink, so the whole result is computed and nothing is
written. Each variant runs `repeats` times after a small value check; the median is reported.

  st_to_array: read dataset -> st_to_array(t)                 vs  read -> pandas UDF(bytes -> float32)
  arr_to_st:   read dataset -> st_to_array(t) -> arr_to_st(..) vs  read -> st_to_array(t) -> pandas UDF(float32 -> 16 bit)
  (the input pipeline of arr_to_st, read -> st_to_array, is also timed alone: "arr_to_st input")

Usage: bench_functions.py JAR WORKDIR GIB REPEATS OUT_DIR
"""

import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import ml_dtypes
import numpy as np
import pandas as pd
from pyspark.sql import SparkSession
from pyspark.sql.functions import pandas_udf
from pyspark.sql.types import ArrayType, BinaryType, FloatType, IntegerType, StringType, StructField, StructType

ELEMENTS = 4096  # per tensor: 8 KiB of BF16/F16
NUMPY_DTYPE = {"BF16": ml_dtypes.bfloat16, "F16": np.float16}
# What a pandas UDF can return: Arrow gives nullable struct fields.
TENSOR = StructType([
    StructField("data", BinaryType()),
    StructField("shape", ArrayType(IntegerType(), False)),
    StructField("dtype", StringType()),
])


@pandas_udf(ArrayType(FloatType()))
def udf_to_array(t: pd.DataFrame) -> pd.Series:
    """Tensor Struct -> flat float32 array: one vectorized astype per batch and dtype."""
    out = [None] * len(t)
    for dtype, idx in t.groupby("dtype").indices.items():
        blobs = t["data"].iloc[idx]
        flat = np.frombuffer(b"".join(blobs), dtype=NUMPY_DTYPE[dtype]).astype(np.float32)
        ends = np.cumsum([len(b) // 2 for b in blobs])
        for i, arr in zip(idx, np.split(flat, ends[:-1])):
            out[i] = arr
    return pd.Series(out)


def udf_to_tensor(dtype: str):
    np_dtype = NUMPY_DTYPE[dtype]

    @pandas_udf(TENSOR)
    def to_tensor(arrays: pd.Series) -> pd.DataFrame:
        """Flat float arrays -> Tensor Struct in dtype (ml_dtypes/numpy round to nearest even)."""
        lengths = [len(a) for a in arrays]
        flat = np.concatenate(arrays.to_numpy()).astype(np.float32).astype(np_dtype)
        raw = flat.tobytes()
        data, pos = [], 0
        for n in lengths:
            data.append(raw[pos:pos + 2 * n])
            pos += 2 * n
        return pd.DataFrame({"data": data, "shape": [[n] for n in lengths], "dtype": dtype})

    return to_tensor


def timed(df, repeats):
    # No separate warm-up pass over the full input: the value check below has already run every
    # variant once (code generation, Python workers), and one pass over a GiB dwarfs JIT warm-up.
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        df.write.format("noop").mode("overwrite").save()
        times.append(time.perf_counter() - start)
    return times


def main():
    jar, work, gib, repeats, out_dir = sys.argv[1], Path(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), Path(sys.argv[5])
    load_before = os.getloadavg()
    opts = "--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow"
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("safetensors-functions-bench")
        .config("spark.jars", jar)
        .config("spark.sql.extensions", "io.github.semyonsinchenko.safetensors.SafetensorsExtensions")
        .config("spark.driver.extraJavaOptions", opts)
        .config("spark.driver.memory", "3g")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "1024")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("WARN")
    rows = int(gib * 2**30 / 2 / (ELEMENTS * 2))  # per dtype: half of the bytes
    inputs = {}
    for dtype in ("BF16", "F16"):
        path = work / f"input-{dtype}"
        if not (path / "dataset_manifest.json").exists():
            (spark.range(0, rows, 1, 8)
             .selectExpr("concat('t', id) key",
                         f"arr_to_st(transform(sequence(0, {ELEMENTS - 1}), j -> cast(sin(id * 7 + j) * 100 as float)),"
                         f" array({ELEMENTS}), '{dtype}') t")
             .write.format("safetensors").option("name_col", "key").mode("overwrite").save(str(path)))
        inputs[dtype] = spark.read.format("safetensors").option("inferSchema", "true").load(str(path))

    tensor_bytes = 2 * rows * ELEMENTS * 2
    results = {}

    def union(make):
        dfs = [make(dtype, df) for dtype, df in inputs.items()]
        return dfs[0].unionByName(dfs[1])

    variants = {
        ("st_to_array", "connector"): lambda d, df: df.selectExpr("st_to_array(t) a"),
        ("st_to_array", "pandas UDF"): lambda d, df: df.select(udf_to_array("t").alias("a")),
        ("arr_to_st", "input only"): lambda d, df: df.selectExpr("st_to_array(t) a"),
        ("arr_to_st", "connector"): lambda d, df: df.selectExpr(f"arr_to_st(st_to_array(t), array({ELEMENTS}), '{d}') s"),
        ("arr_to_st", "pandas UDF"): lambda d, df: df.selectExpr("st_to_array(t) a").select(udf_to_tensor(d)("a").alias("s")),
    }
    # Check once that both sides compute the same values before timing anything.
    for dtype, df in inputs.items():
        ours = df.selectExpr("st_to_array(t) a").limit(64).collect()
        theirs = df.select(udf_to_array("t").alias("a")).limit(64).collect()
        assert [r.a for r in ours] == [r.a for r in theirs], "st_to_array differs from numpy"
        a = df.selectExpr(f"arr_to_st(st_to_array(t), array({ELEMENTS}), '{dtype}').data d").limit(64).collect()
        b = (df.selectExpr("st_to_array(t) a").select(udf_to_tensor(dtype)("a").alias("s"))
             .selectExpr("s.data d").limit(64).collect())
        assert [bytes(r.d) for r in a] == [bytes(r.d) for r in b], "arr_to_st differs from ml_dtypes/numpy"

    for (fn, who), make in variants.items():
        times = timed(union(make), repeats)
        results[f"{fn} / {who}"] = {"seconds": times, "median": statistics.median(times)}
        print(f"{fn:12s} {who:12s} median {statistics.median(times):7.2f} s  {times}", flush=True)
    spark.stop()
    load_after = os.getloadavg()

    gb = tensor_bytes / 1e9
    med = {k: v["median"] for k, v in results.items()}
    ratio_to = med["st_to_array / pandas UDF"] / med["st_to_array / connector"]
    ratio_from = med["arr_to_st / pandas UDF"] / med["arr_to_st / connector"]
    run = {
        "tensor_bytes": tensor_bytes, "rows": 2 * rows, "elements_per_tensor": ELEMENTS, "repeats": repeats,
        "results": results, "ratio_st_to_array": ratio_to, "ratio_arr_to_st": ratio_from,
"load_before": load_before, "load_after": load_after,
        "cpus": os.cpu_count(), "python": platform.python_version(), "machine": platform.machine(),
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "raw").mkdir(exist_ok=True)
    (out_dir / "raw" / "spark-functions.json").write_text(json.dumps(run, indent=2))
    write_report(run, out_dir, gb)


def shared_machine_note(run):
    """Numbers from a loaded machine are noisy: say so, with the spread and the ratio net of the shared input."""
    res = run["results"]
    med = {k: v["median"] for k, v in res.items()}
    lines = []
    inp, ours, theirs = med["arr_to_st / input only"], med["arr_to_st / connector"], med["arr_to_st / pandas UDF"]
    if ours > inp:
        lines += [f"Net of the shared input pipeline, `arr_to_st` itself took {ours - inp:.2f} s against "
                  f"{theirs - inp:.2f} s for the pandas UDF: {(theirs - inp) / (ours - inp):.1f}x.", ""]
    # The load after the run includes the run's own Spark workers; only the load before it says
    # whether other work shared the machine.
    if run["load_before"][0] > run["cpus"]:
        spread = "; ".join(f"{k}: {min(v['seconds']):.1f}-{max(v['seconds']):.1f} s" for k, v in res.items())
        lines += [f"**Measured on a shared, overloaded machine** (load average above the {run['cpus']} CPUs, "
                  f"other builds and benchmarks running): single runs varied widely ({spread}). Repeat the run on "
                  "an idle machine before relying on the ratios.", ""]
    return lines


def report_from_raw(raw_json, out_dir):
    """Rewrites the report and plot from raw/spark-functions.json without measuring again."""
    run = json.loads(Path(raw_json).read_text())
    write_report(run, Path(out_dir), run["tensor_bytes"] / 1e9)


def write_report(run, out_dir, gb):
    med = {k: v["median"] for k, v in run["results"].items()}
    lines = [
        "# Spark SQL tensor functions vs a pandas UDF (numpy + ml_dtypes)",
        "",
        f"Command: `bench/spark-functions/run.sh {gb * 1e9 / 2**30:g} {run['repeats']}`. Input: {run['rows']} tensors of "
        f"{run['elements_per_tensor']} elements, half BF16 and half F16, {run['tensor_bytes'] / 2**30:.2f} GiB of 16-bit "
        "tensor bytes, written by the connector and read back with `format(\"safetensors\")` in every query. "
        "PySpark 4.2.0, `local[2]`, results consumed by the `noop` sink; median of "
        f"{run['repeats']} run(s). Both sides were checked to give identical values first.",
        "",
        "| query | connector (s) | pandas UDF (s) | ratio |",
        "|---|---:|---:|---:|",
        f"| read + `st_to_array(t)` | {med['st_to_array / connector']:.2f} | {med['st_to_array / pandas UDF']:.2f} | "
        f"**{run['ratio_st_to_array']:.1f}x** |",
        f"| read + `st_to_array(t)` + `arr_to_st(..., dtype)` | {med['arr_to_st / connector']:.2f} | "
        f"{med['arr_to_st / pandas UDF']:.2f} | **{run['ratio_arr_to_st']:.1f}x** |",
        "",
        f"The input pipeline of the `arr_to_st` row alone (read + `st_to_array`, the same query as the first row's "
        f"connector column) took {med['arr_to_st / input only']:.2f} s in the same run.",
        "",
        f"Target: at least 5x the pandas UDF. st_to_array: {'MET' if run['ratio_st_to_array'] >= 5 else 'NOT MET'} "
        f"({run['ratio_st_to_array']:.1f}x); arr_to_st: {'MET' if run['ratio_arr_to_st'] >= 5 else 'NOT MET'} "
        f"({run['ratio_arr_to_st']:.1f}x end to end).",
        "",
        *shared_machine_note(run),
        f"Machine: {run['cpus']} CPUs, {run['machine']}, Python {run['python']}. Load average (1/5/15 min) before: "
        f"{' / '.join(f'{x:.2f}' for x in run['load_before'])}, after: {' / '.join(f'{x:.2f}' for x in run['load_after'])}.",
        "",
        "![throughput](spark-functions.png)",
        "",
        "Raw timings: `raw/spark-functions.json`.",
    ]
    (out_dir / "spark-functions.md").write_text("\n".join(lines) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(7, 3.6))
    labels = ["st_to_array", "arr_to_st"]
    ours = [gb / med["st_to_array / connector"], gb / med["arr_to_st / connector"]]
    theirs = [gb / med["st_to_array / pandas UDF"], gb / med["arr_to_st / pandas UDF"]]
    x = np.arange(len(labels))
    ax.bar(x - 0.2, ours, 0.4, label="connector (Catalyst, kernels)")
    ax.bar(x + 0.2, theirs, 0.4, label="pandas UDF (numpy + ml_dtypes)")
    ax.set_xticks(x, labels)
    ax.set_ylabel("GB of 16-bit tensors / s")
    ax.set_title(f"{run['tensor_bytes'] / 2**30:.2f} GiB BF16+F16, local[2], load {run['load_before'][0]:.1f}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out_dir / "spark-functions.png", dpi=120)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--report":
        report_from_raw(sys.argv[2], sys.argv[3])
    else:
        main()

"""Times the numpy / ml_dtypes counterparts of the safetensors-jvm kernels on this machine.

Same sizes as the JMH benchmarks (``size`` = SOURCE bytes: 4 KiB in cache, 64 MiB memory-bound;
the widenings from integers and F64 at 64 MiB only), same gather shape (a 1 GiB float16 table
[V, 256], 65,536 uniformly random row indices), and a same-byte ``np.copyto`` baseline in the same
run. Each operation is timed best-of-N with ``time.perf_counter`` (small sizes loop ``number``
times per sample so a sample lasts a few milliseconds); the median is recorded too.

Variants:
  * ``astype``   -- ``src.astype(dst_dtype)``: what users write; allocates the result each call
                    (fresh pages for 64 MiB outputs, so page faults are part of the cost).
  * ``into``     -- ``np.copyto(dst, src, casting="unsafe")`` into a preallocated array: the same
                    conversion without the allocation, the fair kernel-to-kernel comparison.
  * ``take`` / ``take_out`` -- ``np.take(table, idx, axis=0)`` allocating / with ``out=``.
  * ``take_astype`` -- ``np.take(table, idx, axis=0).astype(np.float32)``: the gather-and-convert peer.
  * ``copyto``   -- ``np.copyto(dst, src)`` of uint8 arrays, the same-byte baseline.

Writes one JSON file (``--out``); progress goes to stderr. ``--only take`` times the gathers alone:
run-kernels.sh runs that between the rounds of the native gather benchmarks, so both sides of the
gather ratio are measured minutes apart at most (this KVM machine's speed drifts over half an hour).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time

import ml_dtypes
import numpy as np

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

BF16 = np.dtype(ml_dtypes.bfloat16)

# name (as the Java Conversion enum) -> (source dtype, target dtype)
CONVERSIONS_16 = {
    "BF16_TO_F32": (BF16, np.dtype(np.float32)),
    "F16_TO_F32": (np.dtype(np.float16), np.dtype(np.float32)),
    "F32_TO_BF16_RNE": (np.dtype(np.float32), BF16),
    "F32_TO_F16_RNE": (np.dtype(np.float32), np.dtype(np.float16)),
    "F16_TO_BF16": (np.dtype(np.float16), BF16),
    "BF16_TO_F16": (BF16, np.dtype(np.float16)),
}
CONVERSIONS_WIDEN = {
    "I8_TO_F32": np.dtype(np.int8),
    "U8_TO_F32": np.dtype(np.uint8),
    "I16_TO_F32": np.dtype(np.int16),
    "U16_TO_F32": np.dtype(np.uint16),
    "I32_TO_F32": np.dtype(np.int32),
    "U32_TO_F32": np.dtype(np.uint32),
    "I64_TO_F32": np.dtype(np.int64),
    "U64_TO_F32": np.dtype(np.uint64),
    "F64_TO_F32": np.dtype(np.float64),
}
SIZES = [4 * KIB, 64 * MIB]
WIDEN_SIZE = 64 * MIB
# Every byte count a kernel reads or writes (as the JMH CopyBench).
COPY_SIZES = [2 * KIB, 4 * KIB, 8 * KIB, 32 * MIB, 64 * MIB, 128 * MIB, 256 * MIB]
ROW_ELEMS = 256


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def values_f32(rng: np.random.Generator, n: int) -> np.ndarray:
    """Finite float32 of random sign and mantissa, magnitude in [2^-12, 2^12) (as the Java fill)."""
    bits = rng.integers(0, 2**32, size=n, dtype=np.uint32)
    exp = rng.integers(127 - 12, 127 + 12, size=n, dtype=np.uint32)
    return ((bits & np.uint32(0x807FFFFF)) | (exp << np.uint32(23))).view(np.float32)


def source(rng: np.random.Generator, dtype: np.dtype, nbytes: int) -> np.ndarray:
    n = nbytes // dtype.itemsize
    if dtype == np.float32:
        return values_f32(rng, n)
    if dtype in (np.dtype(np.float16), BF16):
        return values_f32(rng, n).astype(dtype)
    if dtype == np.float64:
        return values_f32(rng, n).astype(np.float64)
    return np.frombuffer(rng.bytes(nbytes), dtype=dtype).copy()


def timeit(fn, repeats: int, min_sample_s: float) -> dict:
    fn()  # warm up (and first-touch anything fn keeps)
    t0 = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t0, 1e-9)
    number = max(1, int(min_sample_s / once))
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number)
    return {
        "best_s": min(samples),
        "median_s": statistics.median(samples),
        "mean_s": statistics.fmean(samples),
        "stdev_s": statistics.stdev(samples) if len(samples) > 1 else 0.0,
        "repeats": repeats,
        "number": number,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="JSON file to write")
    ap.add_argument("--quick", action="store_true", help="few repeats: a smoke run, not a measurement")
    ap.add_argument("--table-bytes", type=int, default=GIB, help="gather table size (default 1 GiB)")
    ap.add_argument("--indices", type=int, default=65536, help="gather index count (default 65536)")
    ap.add_argument("--only", choices=("all", "take"), default="all", help="take: the gathers alone")
    args = ap.parse_args()

    repeats_big, repeats_small, min_sample = (3, 3, 0.002) if args.quick else (15, 25, 0.01)
    rng = np.random.default_rng(42)
    results: list[dict] = []

    def record(kind: str, name: str, variant: str, src_bytes: int, dst_bytes: int, fn, **extra) -> None:
        repeats = repeats_big if max(src_bytes, dst_bytes) >= MIB else repeats_small
        r = timeit(fn, repeats, min_sample)
        r.update(kind=kind, name=name, variant=variant, size=src_bytes, src_bytes=src_bytes, dst_bytes=dst_bytes,
                 **extra)
        results.append(r)
        gbs = dst_bytes / r["best_s"] / 1e9
        log(f"  {kind:<8} {name:<16} {variant:<12} size={src_bytes:>10}  best {r['best_s'] * 1e6:12.1f} us"
            f"  {gbs:7.2f} GB/s written")

    if args.only == "all":
        log("==> numpy same-byte copy baseline (np.copyto)")
        for nbytes in COPY_SIZES:
            s = np.frombuffer(rng.bytes(nbytes), dtype=np.uint8).copy()
            d = np.ones(nbytes, dtype=np.uint8)
            record("copy", f"COPY_{nbytes}", "copyto", nbytes, nbytes, lambda s=s, d=d: np.copyto(d, s))
            del s, d

        log("==> numpy / ml_dtypes conversions")
        jobs = [(name, sd, td, size) for size in SIZES for name, (sd, td) in CONVERSIONS_16.items()]
        jobs += [(name, sd, np.dtype(np.float32), WIDEN_SIZE) for name, sd in CONVERSIONS_WIDEN.items()]
        for name, sd, td, size in jobs:
            src = source(rng, sd, size)
            dst_bytes = src.size * td.itemsize
            record("convert", name, "astype", size, dst_bytes, lambda src=src, td=td: src.astype(td))
            dst = np.empty(src.size, dtype=td)
            record("convert", name, "into", size, dst_bytes,
                   lambda src=src, dst=dst: np.copyto(dst, src, casting="unsafe"))
            del src, dst

    log(f"==> numpy.take from a {args.table_bytes / GIB:.2f} GiB float16 table [V, {ROW_ELEMS}],"
        f" {args.indices} random rows")
    rows = args.table_bytes // (ROW_ELEMS * 2)
    rng = np.random.default_rng(43)  # its own seed: the same table and rows with --only take
    raw = rng.integers(0, 2**64, size=args.table_bytes // 8, dtype=np.uint64, endpoint=False)
    raw &= np.uint64(0xBFFFBFFFBFFFBFFF)  # every float16 finite, as the Java table
    table = raw.view(np.float16).reshape(rows, ROW_ELEMS)
    picks = rng.integers(0, rows, size=args.indices, dtype=np.int64)
    for index, idx in (("i64", picks), ("u32", picks.astype(np.uint32))):
        out_bytes = args.indices * ROW_ELEMS * 2
        record("take", "GATHER", "take", idx.nbytes, out_bytes,
               lambda idx=idx: np.take(table, idx, axis=0), index=index)
        out = np.empty((args.indices, ROW_ELEMS), dtype=np.float16)
        record("take", "GATHER", "take_out", idx.nbytes, out_bytes,
               lambda idx=idx, out=out: np.take(table, idx, axis=0, out=out), index=index)
        record("take", "GATHER_F16_TO_F32", "take_astype", idx.nbytes, out_bytes * 2,
               lambda idx=idx: np.take(table, idx, axis=0).astype(np.float32), index=index)
        del out

    try:
        from numpy._core._multiarray_umath import __cpu_baseline__, __cpu_dispatch__, __cpu_features__

        simd = {
            "baseline": list(__cpu_baseline__),
            "dispatch_available": [f for f in __cpu_dispatch__ if __cpu_features__.get(f)],
        }
    except Exception:  # numpy internals move; the versions are enough without this
        simd = {}
    try:
        hugepage = bool(np._core.multiarray._get_madvise_hugepage())
    except Exception:  # private API; None = unknown
        hugepage = None
    meta = {
        "numpy_madvise_hugepage": hugepage,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "ml_dtypes": ml_dtypes.__version__,
        "numpy_simd": simd,
        "quick": args.quick,
        "table_bytes": args.table_bytes,
        "indices": args.indices,
        "only": args.only,
        "row_elems": ROW_ELEMS,
        "timer": "time.perf_counter, best of N samples (median and mean also kept)",
    }
    with open(args.out, "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1)
    log(f"==> wrote {len(results)} timings")


if __name__ == "__main__":
    main()

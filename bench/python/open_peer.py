"""Open of a many-tensor file: the Python peer of OpenBench, and the report that sets them side by side.

    open_peer.py make FILE [--tensors N]     write the file (safetensors.numpy.save_file)
    open_peer.py time FILE --out JSON        time safe_open + keys() + get_slice metadata, steady state
    open_peer.py report --jmh J --peer P [--peer P2 ...] --machine M --out MD

The timed operation matches OpenBench.openAndReadEveryTensorsMetadata: open the file, read every
tensor's name, dtype and shape, close.
"""

import argparse
import json
import os
import statistics
import time

import numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file

KINDS = ["self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj",
         "mlp.up_proj", "mlp.down_proj", "input_layernorm", "post_attention_layernorm", "bias"]
DTYPES = [np.float32, np.float16, np.int64, np.int8]


def make(path, tensors):
    data = {}
    for i in range(tensors):
        name = f"model.layers.{i // len(KINDS)}.{KINDS[i % len(KINDS)]}.weight"
        data[name] = np.zeros((4, 8), dtype=DTYPES[i % len(DTYPES)])
    save_file(data, path, metadata={"format": "pt"})


def open_all(path):
    total = 0
    with safe_open(path, framework="numpy") as f:
        for name in f.keys():
            s = f.get_slice(name)
            total += len(name) + len(s.get_shape()) + len(s.get_dtype())
    return total


def time_open(path, warmup, runs):
    for _ in range(warmup):
        open_all(path)
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        open_all(path)
        samples.append((time.perf_counter_ns() - t0) / 1000.0)
    import safetensors
    return {
        "file": os.path.basename(path), "bytes": os.path.getsize(path), "warmup": warmup, "runs": runs,
        "median_us": statistics.median(samples), "mean_us": statistics.fmean(samples), "min_us": min(samples),
        "p90_us": statistics.quantiles(samples, n=10)[-1],
        "stdev_us": statistics.stdev(samples), "safetensors": safetensors.__version__, "numpy": np.__version__,
        "loadavg": list(os.getloadavg()),
    }


def report(jmh_path, peer_paths, machine, out):
    with open(jmh_path) as f:
        jmh = json.load(f)
    peers = []
    for p in peer_paths:
        with open(p) as f:
            peers.append(json.load(f))
    java = {}
    for r in jmh:
        name = r["benchmark"].rsplit(".", 1)[1]
        java[(name, r["params"]["sharing"])] = r["primaryMetric"]
    py = statistics.median(p["median_us"] for p in peers)
    py_best = min(p["min_us"] for p in peers)
    lines = [
        "# Opening a 10,000-tensor file: safetensors-jvm vs Python safetensors",
        "",
        f"File: {peers[0]['file']} ({peers[0]['bytes']:,} bytes), 10,000 tensors of shape [4, 8] in F32/F16/I64/I8, "
        "written by `safetensors.numpy.save_file`; both sides open the same file, warm page cache.",
        "",
        "- **Java**: `SafetensorsFile.open(path, sharing)` (read + validate the header, map the file, build the "
        "tensor views), then every tensor's name, dtype, shape and byte size, then `close()`. JMH sample mode "
        f"({jmh[0]['forks']} forks x {jmh[0]['measurementIterations']} iterations of "
        f"{jmh[0]['measurementTime']} after {jmh[0]['warmupIterations']} warm-up iterations).",
        "- **Python**: `safe_open(path, framework=\"numpy\")`, `keys()`, `get_slice(k).get_shape()` and "
        f"`.get_dtype()` for every key, close; safetensors {peers[0]['safetensors']}, numpy {peers[0]['numpy']}. "
        f"Steady state: {peers[0]['warmup']} warm-up calls, then {peers[0]['runs']} timed calls, "
        f"in {len(peers)} separate runs, one before and one after JMH (the ratios use the median of their "
        "medians and the smallest min).",
        f"- Machine: {machine}. The machine was shared with other work while measuring; load averages are below.",
        "",
        "Both sides are timed call by call (JMH sample mode; `time.perf_counter_ns` around each Python call), so "
        "the ratios compare like with like: **median / median** (steady state) and **min / min** (the least "
        "disturbed call on each side).",
        "",
        "| what | median (µs) | min (µs) | p90 (µs) | calls | median / Python median | min / Python min |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for (name, sharing), m in sorted(java.items()):
        pc = m["scorePercentiles"]
        calls = sum(int(c) for fork in m["rawDataHistogram"] for it in fork for _, c in it)
        lines.append(f"| Java `{name}` ({sharing} arena) | {pc['50.0']:.0f} | {pc['0.0']:.0f} | {pc['90.0']:.0f} | "
                     f"{calls:,} | {pc['50.0'] / py:.2f}x | {pc['0.0'] / py_best:.2f}x |")
    for i, p in enumerate(peers, 1):
        lines.append(f"| Python run {i} | {p['median_us']:.0f} | {p['min_us']:.0f} | {p['p90_us']:.0f} | "
                     f"{p['runs']} | | |")
    target = java.get(("openAndReadEveryTensorsMetadata", "shared"))
    ratio = target["scorePercentiles"]["50.0"] / py
    best_ratio = target["scorePercentiles"]["0.0"] / py_best
    lines += [
        "",
        f"**Target ≤ 0.5x Python's time: {'MET' if ratio <= 0.5 else 'NOT MET'}** "
        f"(default `open(path)`, shared arena, median / median: {ratio:.2f}x; confined: "
        f"{java[('openAndReadEveryTensorsMetadata', 'confined')]['scorePercentiles']['50.0'] / py:.2f}x; "
        f"min / min, shared: {best_ratio:.2f}x{'' if best_ratio <= 0.5 else ', above the target'}).",
        "",
        "Load average (1, 5, 15 min) at each Python run: "
        + "; ".join(", ".join(f"{x:.2f}" for x in p["loadavg"]) for p in peers) + ".",
        "",
        "Regenerate: `bench/run-open.sh`.",
        "",
    ]
    with open(out, "w") as f:
        f.write("\n".join(lines))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("file")
    m.add_argument("--tensors", type=int, default=10_000)
    t = sub.add_parser("time")
    t.add_argument("file")
    t.add_argument("--out", required=True)
    t.add_argument("--warmup", type=int, default=30)
    t.add_argument("--runs", type=int, default=200)
    r = sub.add_parser("report")
    r.add_argument("--jmh", required=True)
    r.add_argument("--peer", action="append", required=True)
    r.add_argument("--machine", required=True)
    r.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.cmd == "make":
        make(a.file, a.tensors)
    elif a.cmd == "time":
        with open(a.out, "w") as f:
            json.dump(time_open(a.file, a.warmup, a.runs), f, indent=1)
    else:
        report(a.jmh, a.peer, a.machine, a.out)


if __name__ == "__main__":
    main()

"""Turns one benchmark run into bench/results/kernels.md and kernels.png.

Inputs (all in the run's raw directory, written by bench/run-kernels.sh):
  jmh.json      JMH results (-rf json): ns/op per benchmark and parameters, plus -prof gc metrics.
  peer.json     numpy / ml_dtypes timings from kernels_peer.py.
  java.json     the Java side: JDK, default kernel path, native ISA level, Vector API width (BenchInfo).
  machine.json  CPU, cores, memory, kernel, load average (written by `report.py machine`).
  run.json      how the run was made: mode (full or quick), JMH arguments, start and end.

Conventions (repeated in the report):
  * size = SOURCE bytes of a conversion (4 KiB in cache, 64 MiB memory-bound); a kernel writes
    size / source_width * target_width bytes.
  * GB/s = bytes WRITTEN per second (10^9 bytes). For a copy, read = written.
  * "x copy" = time of MemorySegment.copy of as many bytes as the kernel WRITES (same run, same
    memory kind) / kernel time; > 1 means faster than that copy. "x copy(read)" uses the bytes
    the kernel READS instead.
  * "x astype" = numpy / ml_dtypes astype time (best of N) / kernel time (JMH mean): > 1 means
    faster than numpy. "x into" = the same against np.copyto into a preallocated array.
  * "x jdk" = time of the plain Float.float16ToFloat / floatToFloat16 loop / kernel time.

Usage:
  report.py machine --out RAW/machine.json
  report.py report --raw RAW --out-dir DIR
  report.py pool --out OUT.json RUN1.json RUN2.json ...
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

WIDTH = {"BF16": 2, "F16": 2, "F32": 4, "F64": 8, "I8": 1, "U8": 1, "I16": 2, "U16": 2, "I32": 4, "U32": 4,
         "I64": 8, "U64": 8}
MAIN_CONVERSIONS = ["BF16_TO_F32", "F16_TO_F32", "F32_TO_BF16_RNE", "F32_TO_F16_RNE", "F16_TO_BF16",
                    "BF16_TO_F16"]
OTHER_CONVERSIONS = ["F32_TO_BF16_TRUNC", "F32_TO_F16_TRUNC", "I8_TO_F32", "U8_TO_F32", "I16_TO_F32",
                     "U16_TO_F32", "I32_TO_F32", "U32_TO_F32", "I64_TO_F32", "U64_TO_F32", "F64_TO_F32"]
PATHS = ["scalar", "vector", "native", "jdk"]
ROW_BYTES = 512
ROW_ELEMS = 256


# ---------------------------------------------------------------------------- machine description

def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def collect_machine() -> dict:
    cpuinfo = _read("/proc/cpuinfo")
    model = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.M)
    flags = re.search(r"^flags\s*:\s*(.+)$", cpuinfo, re.M)
    simd = []
    if flags:
        have = set(flags.group(1).split())
        simd = [f for f in ("sse4_2", "avx", "f16c", "fma", "avx2", "avx512f", "avx512bw", "avx512vl",
                            "avx512_fp16", "avx512_bf16") if f in have]
    mem = re.search(r"^MemTotal:\s*(\d+) kB", _read("/proc/meminfo"), re.M)
    lscpu = {}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        for line in out.splitlines():
            if ":" in line:
                k, v = line.split(":", 1)
                lscpu[k.strip()] = v.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    thp = _read("/sys/kernel/mm/transparent_hugepage/enabled").strip()
    return {
        "cpu_model": model.group(1).strip() if model else platform.processor(),
        "cpu_family": lscpu.get("CPU family", ""),
        "cpu_model_number": lscpu.get("Model", ""),
        "hypervisor": lscpu.get("Hypervisor vendor", ""),
        "logical_cpus": os.cpu_count(),
        "l2": lscpu.get("L2 cache", ""),
        "l3": lscpu.get("L3 cache", ""),
        "simd_flags": simd,
        "mem_total_gib": round(int(mem.group(1)) / 1024 / 1024, 1) if mem else None,
        "kernel": platform.release(),
        "transparent_hugepages": thp,
        "loadavg": _read("/proc/loadavg").split()[:3],
        "collected_at": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


# ---------------------------------------------------------------------------- loading

def conv_bytes(conversion: str, size: int) -> tuple[int, int]:
    src, dst = conversion.split("_TO_")
    dst = dst.split("_")[0]
    n = size // WIDTH[src]
    return size, n * WIDTH[dst]


def load_jmh(path: Path) -> list[dict]:
    """One dict per JMH result: op, kind, path, memory, size, src/dst bytes, ns, error, alloc."""
    rows = []
    for r in json.loads(path.read_text()):
        bench = r["benchmark"].rsplit(".", 2)
        cls, method = bench[-2], bench[-1]
        p = r.get("params", {})
        pm = r["primaryMetric"]
        unit = pm["scoreUnit"]
        scale = {"ns/op": 1.0, "us/op": 1e3, "ms/op": 1e6, "s/op": 1e9}.get(unit)
        if scale is None:
            raise SystemExit(f"unexpected JMH unit {unit} in {r['benchmark']} (use -bm avgt)")
        ns = pm["score"] * scale
        err = pm.get("scoreError")
        err = err * scale if isinstance(err, (int, float)) and not math.isnan(err) else None
        alloc = r.get("secondaryMetrics", {}).get("gc.alloc.rate.norm", {}).get("score")
        row = {"ns": ns, "err_ns": err, "alloc_b_op": alloc, "memory": p.get("memory"),
               "raw_samples": len(pm.get("rawData", [[]])[0]) if pm.get("rawData") else None,
               "fork_count": len(pm.get("rawData") or [])}
        if cls in ("ConvertBench", "ConvertOtherBench"):
            size = int(p["size"])
            src, dst = conv_bytes(p["conversion"], size)
            row.update(kind="convert", op=p["conversion"], path=p["path"], size=size, src_bytes=src,
                       dst_bytes=dst)
        elif cls == "JdkF16Bench":
            size = int(p["size"])
            src, dst = conv_bytes(p["conversion"], size)
            row.update(kind="convert", op=p["conversion"], path="jdk", size=size, src_bytes=src, dst_bytes=dst)
        elif cls in ("GatherBench", "GatherThpBench"):
            n = int(p["indices"])
            conv = method == "gatherF16ToF32"
            idx_w = 4 if p["index"] == "u32" else 8
            row.update(kind="gather", op=("GATHER_F16_TO_F32" if conv else "GATHER") + "_" + p["index"].upper(),
                       index=p["index"], size=int(p["tableBytes"]),
                       # the parallel gather is its own path: "native-2t" is two threads
                       path=p["path"] if int(p.get("threads", "1")) == 1 else f'{p["path"]}-{p["threads"]}t',
                       src_bytes=n * ROW_BYTES + n * idx_w, dst_bytes=n * ROW_BYTES * (2 if conv else 1),
                       table_bytes=int(p["tableBytes"]), indices=n)
        elif cls == "FaultGuardBench":
            size = int(p["size"])
            src, dst = conv_bytes(p["conversion"], size)
            # per fork, per iteration: (ns per call with the guard on, with it off), from the Sides counters
            sm = r.get("secondaryMetrics", {})
            if "onNanos" not in sm:
                raise SystemExit(f"{path}: FaultGuardBench results without the onNanos/offNanos counters (from before"
                                 " the guard was paired by blocks of calls): re-run bench/run-kernels.sh")
            per_call = [[(on / calls, off / calls) for on, off, calls in zip(*forks)]
                        for forks in zip(*(sm[k]["rawData"] for k in ("onNanos", "offNanos", "callsPerSide")))]
            row.update(kind="guard", op=p["conversion"], path="native", memory="offheap", size=size, src_bytes=src,
                       dst_bytes=dst, forks=per_call)
        elif cls == "CopyBench":
            b = int(p["bytes"])
            row.update(kind="copy", op="COPY", path="copy", size=b, src_bytes=b, dst_bytes=b)
        else:
            print(f"report: ignoring unknown benchmark {r['benchmark']}", file=sys.stderr)
            continue
        rows.append(row)
    return rows


def load_json(path: Path) -> dict | None:
    return json.loads(path.read_text()) if path.exists() else None


# ---------------------------------------------------------------------------- helpers

def fmt_time(ns: float | None) -> str:
    if ns is None:
        return "—"
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns / 1e6:.2f} ms"


def fmt_ratio(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}×"


def fmt_gbs(b: int, ns: float | None) -> str:
    return "—" if not ns else f"{b / ns:.2f}"


def fmt_size(b: int) -> str:
    if b >= GIB and b % GIB == 0:
        return f"{b // GIB} GiB"
    if b >= MIB and b % MIB == 0:
        return f"{b // MIB} MiB"
    if b >= KIB and b % KIB == 0:
        return f"{b // KIB} KiB"
    return f"{b} B"


def ratio(num: float | None, den: float | None) -> float | None:
    return num / den if num and den else None


class Data:
    def __init__(self, raw: Path):
        self.raw = raw
        self.jmh = load_jmh(raw / "jmh.json") if (raw / "jmh.json").exists() else []
        self.peer = load_json(raw / "peer.json") or {"meta": {}, "results": []}
        self.java = load_json(raw / "java.json") or {}
        self.machine = load_json(raw / "machine.json") or {}
        self.run = load_json(raw / "run.json") or {}
        self.copy = {(r["memory"], r["size"]): r["ns"] for r in self.jmh if r["kind"] == "copy"}
        self.kernel = {}
        for r in self.jmh:
            if r["kind"] == "convert":
                self.kernel[(r["op"], r["path"], r["memory"], r["size"])] = r
            elif r["kind"] == "gather":
                self.kernel[(r["op"], r["path"], r["memory"], "gather")] = r
        # The fault guard's cost: FaultGuardBench times blocks of calls with the guard on and off in
        # turn; its counters give each iteration's two sides.
        guard_path = raw / "jmh-guard.json"
        self.guard = {(r["op"], r["size"]): guard_cost(r["forks"])
                      for r in (load_jmh(guard_path) if guard_path.exists() else []) if r["kind"] == "guard"}
        self.np = {}
        for r in self.peer["results"]:
            if r["kind"] == "convert":
                self.np[(r["name"], r["variant"], r["size"])] = r
            elif r["kind"] == "copy":
                self.np[("COPY", "copyto", r["size"])] = r
            elif r["kind"] == "take":
                self.np[(r["name"] + "_" + r["index"].upper(), r["variant"], "gather")] = r
        # numpy.take timed between the rounds of the native gathers (run-kernels.sh), pooled by
        # `report.py pool-peer`: when present, these are the gathers' baseline, not the later peer run's.
        self.take_rounds = 0
        rounds = load_json(raw / "peer-take.json")
        if rounds:
            self.take_rounds = rounds["meta"].get("rounds", 1)
            for r in rounds["results"]:
                if r["kind"] == "take":
                    self.np[(r["name"] + "_" + r["index"].upper(), r["variant"], "gather")] = r

    def np_mean_err(self, op: str, variant: str, size) -> float | None:
        """The half-width of the 99.9% interval of numpy's mean (as JMH's error), as a share of it."""
        r = self.np.get((op, variant, size))
        if not r or not r.get("stdev_s") or not r.get("mean_s") or r["repeats"] < 2:
            return None
        return t_quantile(0.9995, r["repeats"] - 1) * r["stdev_s"] / math.sqrt(r["repeats"]) / r["mean_s"]

    def np_ns(self, op: str, variant: str, size, stat: str = "best_s") -> float | None:
        """numpy's time per call: its best sample (the tables), or with stat "mean_s" its mean."""
        r = self.np.get((op, variant, size))
        return r[stat] * 1e9 if r and r.get(stat) else None

    def copy_ns(self, memory: str, nbytes: int) -> float | None:
        return self.copy.get((memory, nbytes))

    def k(self, op, path, memory, size) -> dict | None:
        return self.kernel.get((op, path, memory, size))


# ---------------------------------------------------------------------------- markdown

def machine_section(d: Data) -> list[str]:
    m, j, pm = d.machine, d.java, d.peer.get("meta", {})
    simd = pm.get("numpy_simd", {})
    lines = [
        "## Machine",
        "",
        f"- CPU: {m.get('cpu_model', '?')} (family {m.get('cpu_family', '?')}, model "
        f"{m.get('cpu_model_number', '?')}){', ' + m['hypervisor'] + ' guest' if m.get('hypervisor') else ''};"
        f" {m.get('logical_cpus', '?')} logical CPUs; L2 {m.get('l2', '?')}, L3 {m.get('l3', '?')}",
        f"- SIMD flags: {', '.join(m.get('simd_flags', [])) or '?'}",
        f"- Memory: {m.get('mem_total_gib', '?')} GiB; Linux {m.get('kernel', '?')}; transparent huge pages:"
        f" `{m.get('transparent_hugepages', '?')}`",
        f"- Load average at start: {' '.join(m.get('loadavg', [])) or '?'}; at end:"
        f" {' '.join(d.run.get('loadavg_end', [])) or '?'} (a quiet machine shows < 0.3 before the run)",
        f"- JDK: {j.get('java_vm', '?')} ({j.get('java_vendor', '?')}), Java {j.get('java_version', '?')}",
        f"- Native kernels: libsafetensors_native {j.get('native_version', '?') or 'not loaded'}, ISA level"
        f" chosen: **{j.get('native_isa', '?') or 'none'}**"
        + (f" (forced by SAFETENSORS_NATIVE_ISA={j['native_isa_env']})" if j.get("native_isa_env") else
           " (cpuid dispatch)"),
        f"- Vector API preferred width: {j.get('vector_bits', '?')} bits",
        f"- Python {pm.get('python', '?')}, numpy {pm.get('numpy', '?')}, ml_dtypes {pm.get('ml_dtypes', '?')};"
        f" numpy SIMD baseline {', '.join(simd.get('baseline', [])) or '?'}, dispatch up to"
        f" {(simd.get('dispatch_available') or ['?'])[-1]}",
        f"- Run: {d.run.get('mode', '?')} mode, started {d.run.get('started', '?')}, ended"
        f" {d.run.get('ended', '?')}; JMH `{d.run.get('jmh_args', '?')}`",
        "",
    ]
    return lines


def conventions() -> list[str]:
    return [
        "## How to read the tables",
        "",
        "- **size** is the number of SOURCE bytes of a conversion (the tensor as stored). A conversion writes"
        " `size / source width × target width` bytes; a gather writes 65,536 rows × 512 bytes = 32 MiB"
        " (64 MiB as F32) and reads as many table bytes plus the indices.",
        "- **GB/s** = bytes WRITTEN per second (10⁹ bytes). A copy reads and writes the same bytes.",
        "- **× copy** = time of `MemorySegment.copy` of as many bytes as the kernel WRITES, in the same JMH"
        " run and the same memory kind, divided by the kernel's time (> 1: faster than that copy)."
        " **× copy(rd)** uses the bytes the kernel READS instead. For BF16→F32 the first is the"
        " \"produce the F32 array\" yardstick (copy 128 MiB), the second the \"touch the BF16 tensor\" one"
        " (copy 64 MiB).",
        "- **× astype** = numpy/ml_dtypes `astype` time ÷ kernel time (> 1: the kernel is faster). `astype`"
        " allocates its result; **× into** compares with `np.copyto(dst, src, casting=\"unsafe\")` into a"
        " preallocated array. Gathers compare with `numpy.take(table, idx, axis=0)` (allocating) and, for"
        " gather-and-convert, `numpy.take(...).astype(float32)`. numpy numbers are best-of-N; JMH numbers"
        " are means, so the ratios lean against the kernels.",
        "- **× jdk** = time of the plain `Float.float16ToFloat` / `Float.floatToFloat16` loop ÷ kernel time.",
        "- **alloc** = bytes allocated on the Java heap per call (JMH `-prof gc`, gc.alloc.rate.norm); a"
        " few hundred bytes is JMH's own noise, more means the path allocates per call.",
        "- heap = Java arrays of the element type (`MemorySegment.ofArray`); offheap = `Arena` memory.",
        "",
    ]


def conversion_table(d: Data, ops: list[str], sizes: list[int], memories: list[str]) -> list[str]:
    out = ["| conversion | size | memory | path | time/op | ± | GB/s | × copy | × copy(rd) | × astype |"
           " × into | × jdk | alloc B/op |",
           "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for op in ops:
        for size in sizes:
            src, dst = conv_bytes(op, size)
            for memory in memories:
                jdk = d.k(op, "jdk", memory, size)
                for path in PATHS:
                    r = d.k(op, path, memory, size)
                    if r is None:
                        continue
                    t = r["ns"]
                    alloc = "—" if r["alloc_b_op"] is None else f"{r['alloc_b_op']:.0f}"
                    err = fmt_time(r["err_ns"]) if r["err_ns"] else "—"
                    vs_jdk = ratio(jdk["ns"], t) if jdk and path != "jdk" else None
                    out.append(
                        f"| {op} | {fmt_size(size)} | {memory} | {path} | {fmt_time(t)} | {err} |"
                        f" {fmt_gbs(dst, t)} | {fmt_ratio(ratio(d.copy_ns(memory, dst), t))} |"
                        f" {fmt_ratio(ratio(d.copy_ns(memory, src), t))} |"
                        f" {fmt_ratio(ratio(d.np_ns(op, 'astype', size), t))} |"
                        f" {fmt_ratio(ratio(d.np_ns(op, 'into', size), t))} | {fmt_ratio(vs_jdk)} | {alloc} |")
                for variant in ("astype", "into"):
                    t = d.np_ns(op, variant, size)
                    if t and memory == memories[-1]:
                        out.append(f"| {op} | {fmt_size(size)} | numpy | {variant} | {fmt_time(t)} | — |"
                                   f" {fmt_gbs(dst, t)} | {fmt_ratio(ratio(d.np_ns('COPY', 'copyto', dst), t))}"
                                   f" (np) | {fmt_ratio(ratio(d.np_ns('COPY', 'copyto', src), t))} (np) | — | — |"
                                   f" — | — |")
    return out


def gather_table(d: Data) -> list[str]:
    out = ["| gather | memory | path | time/op | ± | GB/s | × copy | × numpy | alloc B/op |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    ops = [f"{base}_{idx}" for base in ("GATHER", "GATHER_F16_TO_F32") for idx in ("U32", "I64")]
    for op in ops:
        np_variant = "take_astype" if op.startswith("GATHER_F16_TO_F32") else "take"
        for memory in ("heap", "offheap", "offheap-thp"):
            for path in ("scalar", "vector", "native", "native-2t"):
                r = d.k(op, path, memory, "gather")
                if r is None:
                    continue
                t = r["ns"]
                alloc = "—" if r["alloc_b_op"] is None else f"{r['alloc_b_op']:.0f}"
                copy_memory = "offheap" if memory == "offheap-thp" else memory
                e = rel_err(r)
                out.append(f"| {op} | {memory} | {path} | {fmt_time(t)} |"
                           f" {fmt_time(r['err_ns']) + f' ({100 * e:.0f}%)' if e is not None else '—'} |"
                           f" {fmt_gbs(r['dst_bytes'], t)} |"
                           f" {fmt_ratio(ratio(d.copy_ns(copy_memory, r['dst_bytes']), t))} |"
                           f" {fmt_ratio(ratio(d.np_ns(op, np_variant, 'gather'), t))} | {alloc} |")
        dst = 65536 * ROW_BYTES * (2 if op.startswith("GATHER_F16_TO_F32") else 1)
        for variant in ((np_variant,) if np_variant == "take_astype" else ("take", "take_out")):
            t = d.np_ns(op, variant, "gather")
            if t:
                out.append(f"| {op} | numpy | {variant} | {fmt_time(t)} | — | {fmt_gbs(dst, t)} |"
                           f" {fmt_ratio(ratio(d.np_ns('COPY', 'copyto', dst), t))} (np) | — | — |")
    return out


def guard_table(d: Data) -> list[str]:
    out = ["| conversion | size | guard on | ± | guard off | ± | cost (paired) | ± | iterations (forks) |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for (op, size), g in sorted(d.guard.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        out.append(f"| {op} | {fmt_size(size)} | {fmt_time(g['on'])} | {fmt_time(g['on_err'])} |"
                   f" {fmt_time(g['off'])} | {fmt_time(g['off_err'])} | {100 * g['cost']:+.2f}% |"
                   f" {100 * g['cost_err']:.2f}% | {g['iterations']} ({g['forks']}) |")
    return out


def copy_table(d: Data) -> list[str]:
    out = ["| bytes | heap GB/s | offheap GB/s | numpy copyto GB/s |", "|---|---:|---:|---:|"]
    for b in sorted({s for (_, s) in d.copy}):
        out.append(f"| {fmt_size(b)} | {fmt_gbs(b, d.copy_ns('heap', b))} | {fmt_gbs(b, d.copy_ns('offheap', b))} |"
                   f" {fmt_gbs(b, d.np_ns('COPY', 'copyto', b))} |")
    return out


def rel_err(r: dict | None) -> float | None:
    """JMH's error (half-width of its 99.9% interval) as a share of the mean."""
    if not r or not r.get("err_ns") or not r.get("ns"):
        return None
    return r["err_ns"] / r["ns"]


class Check:
    """One line of the target table: a measured value against what the target needs.

    kind "min": value >= need (a ratio, shown as 1.23×); "max": value <= need (a share, shown as 4%);
    "noise": the guard's cost: MET when its paired cost is no larger than the cell's JMH error
    (guard_verdict).
    """

    def __init__(self, what: str, value: float | None, need: float, kind: str = "min", shown: str | None = None):
        self.what, self.value, self.need, self.kind, self.shown = what, value, need, kind, shown

    def met(self) -> bool | None:
        if self.kind == "info":
            return True  # shown beside the target, not part of it
        if self.value is None:
            return None
        return self.value <= self.need if self.kind in ("max", "noise") else self.value >= self.need

    def measured(self) -> str:
        if self.shown is not None:
            return self.shown
        if self.value is None:
            return "—"
        return f"{100 * self.value:.1f}%" if self.kind == "max" else fmt_ratio(self.value)

    def needed(self) -> str:
        if self.kind == "max":
            return f"≤ {100 * self.need:.0f}%"
        if self.kind == "noise":
            return "within the noise (< 10%)"
        if self.kind == "info":
            return f"({self.need:g}×)"
        return f"{self.need:g}×"


def mean_err(xs: list[float]) -> tuple[float, float]:
    """Mean and the half-width of its 99.9% interval (Student's t), as JMH reports a score."""
    n = len(xs)
    mean = sum(xs) / n
    if n < 2:
        return mean, float("nan")
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    return mean, t_quantile(0.9995, n - 1) * sd / math.sqrt(n)


def guard_cost(forks: list[list[tuple[float, float]]]) -> dict:
    """The guard's cost from FaultGuardBench's forks of (on, off) ns per call, one pair per iteration,
    each summed over thousands of on, off, off, on groups of blocks tens of microseconds apart. The
    cost is the mean over all iterations of on / off - 1, with its 99.9% interval; each side's mean
    and error are over its per-iteration times, as a JMH score."""
    pairs = [p for fork in forks for p in fork]
    on_ns, on_err = mean_err([on for on, _ in pairs])
    off_ns, off_err = mean_err([off for _, off in pairs])
    cost, cost_err = mean_err([on / off - 1 for on, off in pairs])
    return {"on": on_ns, "on_err": on_err, "off": off_ns, "off_err": off_err, "cost": cost, "cost_err": cost_err,
            "iterations": len(pairs), "forks": len(forks)}


def guard_verdict(g: dict) -> tuple[float | None, str]:
    """(|cost| / noise, text): at most 1 when the guard's paired cost is within the noise of the cell,
    the larger relative JMH error of its two sides (what one kernel benchmark of this report can
    tell apart). No value when that noise exceeds 10% (then anything would be "within noise"), nor
    when the cost's own interval is wider than the noise (then the pairing cannot tell)."""
    noise = max(g["on_err"] / g["on"], g["off_err"] / g["off"])
    text = (f"{100 * g['cost']:+.2f}% ± {100 * g['cost_err']:.2f}% ({g['iterations']} iterations;"
            f" noise ±{100 * noise:.1f}%)")
    if math.isnan(noise) or noise > 0.10:
        return None, text + ", too noisy to tell"
    if math.isnan(g["cost_err"]) or g["cost_err"] > noise:
        return None, text + ", the cost's interval is wider than the noise"
    return abs(g["cost"]) / noise, text


def targets(d: Data) -> list[tuple[str, list[Check]]]:
    """(target, checks); MET when every check is met."""
    size = 64 * MIB
    res = []
    checks = []
    for op in ("BF16_TO_F32", "F16_TO_F32"):
        r = d.k(op, "native", "offheap", size)
        _, dst = conv_bytes(op, size)
        checks.append(Check(f"{op} native offheap vs copy of the {fmt_size(dst)} it writes",
                            ratio(d.copy_ns("offheap", dst), r["ns"] if r else None), 0.8))
    res.append(("64 MiB BF16→F32 and F16→F32 native ≥ 0.8× the same-byte copy", checks))
    checks = []
    for op, who in (("BF16_TO_F32", "ml_dtypes"), ("F16_TO_F32", "numpy")):
        r = d.k(op, "native", "offheap", size)
        checks.append(Check(f"{op} native offheap vs {who} astype", ratio(d.np_ns(op, "astype", size),
                                                                         r["ns"] if r else None), 3.0))
    res.append(("64 MiB BF16→F32 and F16→F32 native ≥ 3× ml_dtypes/numpy astype", checks))
    checks = []
    for memory in ("offheap", "heap"):
        r = d.k("F16_TO_F32", "native", memory, size)
        j = d.k("F16_TO_F32", "jdk", memory, size)
        checks.append(Check(f"F16_TO_F32 native vs JDK Float.float16ToFloat loop, {memory}",
                            ratio(j["ns"] if j else None, r["ns"] if r else None), 1.5))
    res.append(("64 MiB native F16→F32 ≥ 1.5× the JDK Float.float16ToFloat loop", checks))
    checks = []
    for op in ("F32_TO_BF16_RNE", "F32_TO_F16_RNE"):
        r = d.k(op, "native", "offheap", size)
        src, _ = conv_bytes(op, size)
        checks.append(Check(f"{op} native offheap vs copy of the {fmt_size(src)} it reads",
                            ratio(d.copy_ns("offheap", src), r["ns"] if r else None), 0.8))
    res.append(("64 MiB F32→BF16 and F32→F16 (RNE) native ≥ 0.8× a copy of the bytes they read", checks))
    checks = []
    for idx in ("I64", "U32"):
        r = d.k(f"GATHER_{idx}", "native-2t", "offheap-thp", "gather")
        np_err = d.np_mean_err(f"GATHER_{idx}", "take", "gather")
        np_mean = d.np_ns(f"GATHER_{idx}", "take", "gather", "mean_s")
        np_text = "" if np_err is None else f" (numpy's mean {fmt_time(np_mean)} ± {100 * np_err:.0f}%)"
        checks.append(Check(f"gather split over 2 threads (Kernels.gather with an executor), table in library huge"
                            f" pages (HugePages.allocate), {idx.lower()} indices, vs numpy.take (one thread):"
                            f" mean ÷ mean over the same rounds{np_text}",
                            ratio(d.np_ns(f"GATHER_{idx}", "take", "gather", "mean_s"), r["ns"] if r else None), 3.0))
        checks.append(Check(f"the same gather's JMH error, as a share of its mean", rel_err(r), 0.10, "max"))
        checks.append(Check(f"(stricter, the form of earlier reports) numpy's best sample ÷ the same mean",
                            ratio(d.np_ns(f"GATHER_{idx}", "take", "gather"), r["ns"] if r else None), 3.0, "info"))
        r1 = d.k(f"GATHER_{idx}", "native", "offheap-thp", "gather")
        e1 = rel_err(r1)
        checks.append(Check(f"(for comparison, not the target's form) the single-threaded gather, same table,"
                            f" {idx.lower()}{'' if e1 is None else f' (JMH error ±{100 * e1:.0f}%)'}",
                            ratio(d.np_ns(f"GATHER_{idx}", "take", "gather", "mean_s"), r1["ns"] if r1 else None),
                            3.0, "info"))
    res.append(("gather (1 GiB F16 table [V,256], 65,536 random rows) ≥ 3× numpy.take, JMH error < 10%; read on"
                " the parallel gather (2 threads, this machine's cores), the single-threaded ratio beside it",
                checks))
    if d.guard:
        checks = []
        for (op, size), g in sorted(d.guard.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            v, text = guard_verdict(g)
            checks.append(Check(f"{op} native offheap {fmt_size(size)}: guard on vs off", v, 1.0, "noise", text))
        res.append(("native fault guard (SIGBUS/SIGSEGV handler) costs the conversions nothing beyond noise",
                    checks))
    info = []
    for idx in ("I64", "U32"):
        for path, form in (("native", "one thread"), ("native-2t", "2 threads")):
            r = d.k(f"GATHER_{idx}", path, "offheap", "gather")
            e = rel_err(r)
            info.append(Check(f"gather native ({form}), table in 4 KiB pages (Arena.allocate), {idx.lower()} indices,"
                              f" vs numpy.take{'' if e is None else f' (JMH error ±{100 * e:.0f}%)'}",
                              ratio(d.np_ns(f"GATHER_{idx}", "take", "gather", "mean_s"), r["ns"] if r else None),
                              3.0))
    res.append(("(info, not the target) the same with the table in ordinary 4 KiB pages", info))
    return res


def target_forks(d: Data) -> str:
    """The text " (the target: 10 forks × 20 iterations)", from the target gather's raw data."""
    r = d.k("GATHER_I64", "native-2t", "offheap-thp", "gather")
    if not r or not r["fork_count"]:
        return ""
    return f" (the target: {r['fork_count']} fork{'s' if r['fork_count'] != 1 else ''} × {r['raw_samples']} iterations)"


def write_markdown(d: Data, out: Path, png_name: str) -> None:
    quick = d.run.get("mode") == "quick"
    lines = ["# Kernel benchmarks: conversions and gathers", ""]
    if quick:
        lines += ["> **SMOKE RUN (`--quick`): a few short iterations on whatever else the machine was doing."
                  " These numbers only show that the harness works; they are not measurements.**", ""]
    lines += [f"Regenerate with `bench/run-kernels.sh` (see `bench/README.md`). Plot: [{png_name}]({png_name}).",
              ""]
    lines += machine_section(d)
    lines += ["## Targets", "", "| target | check | measured | needed | verdict |", "|---|---|---:|---:|---|"]
    for name, checks in targets(d):
        if name.startswith("(info"):
            for c in checks:
                verdict = {True: "would meet", False: "would not meet", None: "no data"}[c.met()]
                lines.append(f"| {name} | {c.what} | {c.measured()} | {c.needed()} | {verdict} |")
                name = ""
            continue
        results = [c.met() for c in checks if c.kind != "info"]
        overall = "NO DATA" if None in results else "MET" if all(results) else "NOT MET"
        for i, c in enumerate(checks):
            verdict = {True: "MET", False: "NOT MET", None: "no data"}[c.met()]
            if c.kind == "info":
                verdict = "(info) " + {True: "would meet", False: "would not meet", None: "no data"}[
                    c.value >= c.need if c.value is not None else None]
            lines.append(f"| {name if i == 0 else ''} | {c.what} | {c.measured()} | {c.needed()} | {verdict} |")
        lines.append(f"| | **overall** | | | **{overall}** |")
    lines += ["", "The targets are read at 64 MiB (memory-bound), on off-heap memory (an mmap'd file is"
              " off-heap); the F16 loop target is checked on both memory kinds. The tables below have the"
              " in-cache and heap numbers too. numpy puts every array of 4 MiB or more in transparent huge"
              f" pages (here: {d.peer.get('meta', {}).get('numpy_madvise_hugepage', '?')}); Java's Arena and"
              " heap memory are in 4 KiB pages, which matters most for the random rows of a gather: the"
              " gather target is read on the library's own huge-page memory (HugePages.allocate, what a"
              " loader uses for such a table) with the parallel gather on 2 threads (numpy.take has one;"
              " the single-threaded ratio is the line below it), and the info rows show the same gather on 4 KiB pages. A"
              " gather's JMH error is the half-width of its 99.9% interval over all its forks' iterations"
              f"{target_forks(d)}; over 10% of the mean, the ratio cannot be told from its neighbours."
              + (f" The target gathers ran as {d.take_rounds} round{'s' if d.take_rounds != 1 else ''} of one fork"
                 " each (their info rows in the first rounds only), every round after a"
                 " numpy.take run, so both sides of the ratio come from the same minutes (this machine's"
                 " speed drifts between a report's first and last benchmark). The gather target compares like"
                 " with like: numpy's mean over all its samples of those runs against JMH's mean over all the"
                 " rounds' iterations (both a mean time per call); numpy's best sample against our mean, the"
                 " form of earlier reports and of the tables below, is shown beside it." if d.take_rounds else "")
              + " The narrowing"
              " target compares with a copy of the bytes READ (64 MiB): a narrowing reads 64 MiB and writes"
              " 32 MiB, the copy reads and writes 64 MiB; the × copy column of the tables (the 32 MiB it"
              " writes) is the stricter yardstick. The guard target passes when the guard's paired cost (see"
              " its section) is no larger than the cell's noise, the larger JMH error of its two sides, that"
              " noise is under 10% of the mean (with more the run cannot tell), and the cost's own interval"
              " is no wider than the noise (else the pairing cannot tell).", ""]
    lines += conventions()
    lines += ["## Same-byte copy baselines (`MemorySegment.copy`)", ""] + copy_table(d) + [""]
    lines += ["## 16/32-bit float conversions", ""]
    lines += conversion_table(d, MAIN_CONVERSIONS, [64 * MIB, 4 * KIB], ["offheap", "heap"]) + [""]
    lines += ["## Other conversions (64 MiB, off-heap)", ""]
    lines += conversion_table(d, OTHER_CONVERSIONS, [64 * MIB], ["offheap"]) + [""]
    lines += ["## Gathers (1 GiB F16 table [V, 256], 65,536 random row indices per call)", ""]
    lines += gather_table(d) + [""]
    if d.guard:
        lines += ["## Fault guard cost (native, off-heap)", "",
                  "The native library's SIGBUS/SIGSEGV guard costs each call a few stores (with GCC on x86-64,"
                  " `__builtin_setjmp`: stack pointer, frame pointer, resume address; elsewhere one `sigsetjmp`"
                  " without the signal mask, no syscall) and the set and clear of a thread-local pointer."
                  " `FaultGuardBench` times blocks of native conversion calls (about 1 MiB of source a block: 256"
                  " calls of 4 KiB, one of 64 MiB) with the guard switched on and off in turn"
                  " (`Kernels.nativeFaultGuard`; off, a call skips the setjmp as with"
                  " `SAFETENSORS_NATIVE_FAULT_GUARD=0`), in the order on, off, off, on, repeated, and adds up"
                  " each side's time per JMH iteration. Both sides share the JVM, the compiled code and the"
                  " buffers, and blocks tens of microseconds apart see the same machine: this machine's speed"
                  " moves by tens of percent between 100 ms intervals, which swamped a pairing by whole"
                  " iterations. **cost** is the mean over all iterations of on ÷ off − 1, with its 99.9% interval"
                  " (±); the side columns are each side's mean time per call and JMH-style error over the"
                  " iterations.", ""]
        lines += guard_table(d) + [""]
    out.write_text("\n".join(lines) + "\n")


# ---------------------------------------------------------------------------- plot

def write_plot(d: Data, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {"scalar": "#9e9e9e", "vector": "#42a5f5", "native": "#1565c0", "jdk": "#ef6c00",
              "numpy": "#66bb6a", "native-thp": "#7e57c2"}
    panels = [
        ("16/32-bit conversions, 64 MiB source, off-heap", MAIN_CONVERSIONS, 64 * MIB, "offheap"),
        ("16/32-bit conversions, 64 MiB source, heap arrays", MAIN_CONVERSIONS, 64 * MIB, "heap"),
        ("16/32-bit conversions, 4 KiB source (in cache), off-heap", MAIN_CONVERSIONS, 4 * KIB, "offheap"),
        ("other conversions, 64 MiB source, off-heap", OTHER_CONVERSIONS, 64 * MIB, "offheap"),
        ("gathers, 1 GiB F16 table, 65,536 rows, off-heap", ["GATHER_U32", "GATHER_I64", "GATHER_F16_TO_F32_U32",
                                                             "GATHER_F16_TO_F32_I64"], "gather", "offheap"),
    ]
    fig, axes = plt.subplots(len(panels), 1, figsize=(15, 4.2 * len(panels)))
    for ax, (title, ops, size, memory) in zip(axes, panels):
        series = ["scalar", "vector", "native", "jdk", "numpy"] if size != "gather" else \
            ["scalar", "vector", "native", "native-thp", "numpy"]
        width = 0.8 / len(series)
        top = 0.0
        for gi, op in enumerate(ops):
            if size == "gather":
                dst = 65536 * ROW_BYTES * (2 if "F16_TO_F32" in op else 1)
            else:
                dst = conv_bytes(op, size)[1]
            for si, s in enumerate(series):
                if s == "numpy":
                    variant = "take" if size == "gather" else "astype"
                    if size == "gather" and "F16_TO_F32" in op:
                        variant = "take_astype"
                    t = d.np_ns(op, variant, size)
                elif s == "native-thp":
                    r = d.k(op, "native", "offheap-thp", size)
                    t = r["ns"] if r else None
                else:
                    r = d.k(op, s, memory, size)
                    t = r["ns"] if r else None
                if not t:
                    continue
                x = gi - 0.4 + width * (si + 0.5)
                label = {"numpy": "numpy/ml_dtypes (astype, take)", "jdk": "JDK Float.float16 loop",
                         "native-thp": "native, table in huge pages"}.get(s, s)
                ax.bar(x, dst / t, width, color=colors[s], label=label)
                top = max(top, dst / t)
            c = d.copy_ns(memory, dst)
            if c:
                top = max(top, dst / c)
                ax.hlines(dst / c, gi - 0.45, gi + 0.45, colors="black", linestyles="--", linewidth=1.5,
                          label=None)
        ax.set_xticks(range(len(ops)))
        ax.set_xticklabels([o.replace("_TO_", "→").replace("GATHER_F16→F32", "GATHER→F32") for o in ops],
                           rotation=0 if len(ops) <= 6 else 20, fontsize=9)
        ax.set_ylabel("GB/s written")
        ax.set_ylim(0, top * 1.35 if top else 1)  # room for the legend above the bars
        ax.set_title(title)
        ax.grid(axis="y", alpha=0.3)
        handles, labels = ax.get_legend_handles_labels()
        seen = {}
        for h, lab in zip(handles, labels):
            if lab and not lab.startswith("_") and lab not in seen:
                seen[lab] = h
        from matplotlib.lines import Line2D

        seen["MemorySegment.copy, same bytes written"] = Line2D([0], [0], color="black", linestyle="--")
        ax.legend(seen.values(), seen.keys(), fontsize=8, loc="upper right", ncol=3)
    title = "safetensors-jvm kernels: GB/s written (higher is better); dashed = same-byte copy"
    if d.run.get("mode") == "quick":
        title += "  [SMOKE RUN, not a measurement]"
    fig.suptitle(title, fontsize=13)
    fig.tight_layout(rect=(0, 0, 1, 0.98))
    fig.savefig(out, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------------------- main

def t_quantile(p: float, df: int) -> float:
    """Student's t quantile (what JMH uses for its error), by bisection on the CDF integrated with
    Simpson's rule: no scipy in this project, and a few digits are all a report shows."""
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)

    def cdf(x: float) -> float:
        steps = 2000
        h = x / steps
        f = [c * (1 + (i * h) ** 2 / df) ** (-(df + 1) / 2) for i in range(steps + 1)]
        return 0.5 + h / 3 * (f[0] + f[-1] + 4 * sum(f[1:-1:2]) + 2 * sum(f[2:-1:2]))

    lo, hi = 0.0, 1000.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < p else (lo, mid)
    return (lo + hi) / 2


def pool_jmh(inputs: list[Path], out: Path) -> None:
    """Several JMH runs of the same benchmarks (one fork each) as one result per benchmark and
    parameters: all their iterations together, the mean and JMH's error (half-width of the 99.9%
    interval, Student's t) recomputed over them, as JMH does over the forks of one run."""
    pooled: dict[tuple, dict] = {}
    for path in inputs:
        for r in json.loads(path.read_text()):
            key = (r["benchmark"], json.dumps(r.get("params", {}), sort_keys=True))
            if key not in pooled:
                pooled[key] = json.loads(json.dumps(r))  # a copy: the first run's metadata
                pooled[key]["primaryMetric"]["rawData"] = []
            pooled[key]["primaryMetric"]["rawData"] += r["primaryMetric"].get("rawData", [])
    for r in pooled.values():
        pm = r["primaryMetric"]
        pm["score"], pm["scoreError"] = mean_err([x for fork in pm["rawData"] for x in fork])
        pm["scoreConfidence"] = [pm["score"] - pm["scoreError"], pm["score"] + pm["scoreError"]]
        r["forks"] = len(pm["rawData"])
        r.pop("secondaryMetrics", None)  # per-run -prof gc numbers do not pool; the report does not use them here
    out.write_text(json.dumps(list(pooled.values()), indent=1) + "\n")


def pool_peer(inputs: list[Path], out: Path) -> None:
    """Several kernels_peer.py runs of the same operations as one: per operation the best sample of
    all runs, the median of their medians, the mean of all their samples, and the runs' count in
    meta.rounds."""
    pooled: dict[tuple, list[dict]] = {}
    meta = {}
    for path in inputs:
        data = json.loads(path.read_text())
        meta = meta or data["meta"]
        for r in data["results"]:
            key = (r["kind"], r["name"], r["variant"], r["size"], r.get("index"))
            pooled.setdefault(key, []).append(r)
    results = []
    for runs in pooled.values():
        r = dict(runs[0])
        r["best_s"] = min(x["best_s"] for x in runs)
        r["median_s"] = statistics.median(x["median_s"] for x in runs)
        r["repeats"] = sum(x["repeats"] for x in runs)
        n = r["repeats"]
        r["mean_s"] = sum(x["mean_s"] * x["repeats"] for x in runs) / n
        # All samples' standard deviation, from each run's mean and deviation (within plus between runs).
        if all("stdev_s" in x for x in runs) and n > 1:
            ss = sum((x["repeats"] - 1) * x["stdev_s"] ** 2 + x["repeats"] * (x["mean_s"] - r["mean_s"]) ** 2
                     for x in runs)
            r["stdev_s"] = math.sqrt(ss / (n - 1))
        results.append(r)
    out.write_text(json.dumps({"meta": dict(meta, rounds=len(inputs)), "results": results}, indent=1) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("machine", help="write the machine description JSON")
    m.add_argument("--out", required=True)
    r = sub.add_parser("report", help="write kernels.md and kernels.png from a run's raw directory")
    r.add_argument("--raw", required=True)
    r.add_argument("--out-dir", required=True)
    p = sub.add_parser("pool", help="pool single-fork JMH runs of the same benchmarks into one JMH JSON")
    p.add_argument("--out", required=True)
    p.add_argument("inputs", nargs="+")
    pp = sub.add_parser("pool-peer", help="pool kernels_peer.py runs of the same operations into one peer JSON")
    pp.add_argument("--out", required=True)
    pp.add_argument("inputs", nargs="+")
    args = ap.parse_args()
    if args.cmd == "machine":
        Path(args.out).write_text(json.dumps(collect_machine(), indent=1) + "\n")
        return
    if args.cmd == "pool":
        pool_jmh([Path(i) for i in args.inputs], Path(args.out))
        return
    if args.cmd == "pool-peer":
        pool_peer([Path(i) for i in args.inputs], Path(args.out))
        return
    d = Data(Path(args.raw))
    if not d.jmh:
        raise SystemExit(f"report: no JMH results in {args.raw}/jmh.json")
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_markdown(d, out / "kernels.md", "kernels.png")
    write_plot(d, out / "kernels.png")
    print(f"report: wrote {out / 'kernels.md'} and {out / 'kernels.png'}", file=sys.stderr)


if __name__ == "__main__":
    main()

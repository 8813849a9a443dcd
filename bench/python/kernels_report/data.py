"""Loading a run's raw directory: JMH results, the numpy peer's timings, the Java and machine descriptions."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from kernels_report.stats import guard_cost, t_quantile

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

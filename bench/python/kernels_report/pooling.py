"""Several runs of the same benchmarks pooled into one result (rounds of one fork each)."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

from kernels_report.stats import mean_err


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

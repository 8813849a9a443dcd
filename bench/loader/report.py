"""Turns bench/loader's raw JSON into bench/results/loader.md and loader.png (medians and spread over repeats)."""
import argparse
import json
import statistics
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def median_of(runs, key):
    values = [r[key] for r in runs if key in r]
    return statistics.median(values) if values else None


def cpu(v):
    return "n/a" if v is None else f"{v:.2f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--load-before", default="?")
    ap.add_argument("--load-after", default="?")
    ap.add_argument("--capped", help="raw JSON of the run under a tc tbf bandwidth cap")
    ap.add_argument("--cap-mbit", type=float)
    a = ap.parse_args()
    raw = json.loads(Path(a.raw).read_text())
    setup = raw["setup"]
    runs = raw["java_runs"] + raw.get("python_runs", [])
    variants = list(dict.fromkeys(r["variant"] for r in runs))
    rows = []
    for v in variants:
        rs = [r for r in runs if r["variant"] == v]
        rows.append({
            "variant": v,
            "seconds": statistics.median(r["seconds"] for r in rs),
            "gets": statistics.median(r["gets"] for r in rs),
            "heads": rs[0].get("heads", "n/a"),
            "mb_per_s": statistics.median(r["mb_per_s"] for r in rs),
            "all": [round(r["seconds"], 2) for r in rs],
            "min": min(r["seconds"] for r in rs),
            "max": max(r["seconds"] for r in rs),
            # where the time goes: CPU seconds of the loading JVM and of s3proxy (Java variants only)
            "client_cpu": median_of(rs, "client_cpu_s"),
            "server_cpu": median_of(rs, "server_cpu_s"),
        })
    legacy = next(r for r in rows if r["variant"].startswith("legacy"))
    try:
        busy = float(a.load_before.split()[0]) > setup["cores"]
    except (ValueError, IndexError):
        busy = True
    gib = setup["file_bytes"] / 2**30
    out = [
        "# Loader benchmark: chunked vs per-tensor reads from S3 (s3proxy)",
        "",
        f"A {gib:.2f} GiB checkpoint ({setup['shards']} shards, {setup['tensors']} tensors: 60% of 4-64 KiB,"
        f" 30% of 256 KiB-2 MiB, 10% large) on s3proxy 4.1.0 (filesystem backend, loopback) with"
        f" {setup['latency_ms']} ms added to every request (s3proxy's latency setting), read through S3A"
        " (classic input stream) by `SafetensorsLoader`, resolved from the `model.safetensors.index.json`."
        " Request counts are S3A's own IOStatistics (`action_http_get_request`, `action_http_head_request`);"
        " every load's digest was checked against the local files, every Python load byte for byte.",
        "",
        f"Machine: {setup['cores']} cores, JDK {setup['jdk']}; "
        + ("**shared with other jobs** while measuring" if busy else "no other job running")
        + f" (load average before: {a.load_before}, after: {a.load_after})"
        + (", so absolute seconds are noisy; the ratios come from the same run." if busy else ".")
        + f" Median of {setup['repeats']} repeats, alternated (each repeat starts with another variant);"
        " spread = slowest / fastest repeat; all runs in the last column. CPU columns: median CPU seconds of"
        " the loading JVM (client) and of the s3proxy JVM per load; the Python peers report none.",
        "",
        "| variant | GET requests | HEAD | seconds (median) | spread | MB/s | × faster than legacy | client CPU s"
        " | s3proxy CPU s | runs (s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        out.append(f"| {r['variant']} | {r['gets']:.0f} | {r['heads']} | {r['seconds']:.2f} |"
                   f" {r['max'] / r['min']:.2f}× | {r['mb_per_s']:.1f} | {legacy['seconds'] / r['seconds']:.1f} |"
                   f" {cpu(r['client_cpu'])} | {cpu(r['server_cpu'])} | {', '.join(map(str, r['all']))} |")
    chunked = next(r for r in rows if r["variant"] == "chunked")
    ratio = legacy["seconds"] / chunked["seconds"]
    split = next((r for r in rows if r["variant"] == "chunked, one request per chunk"), None)
    if busy:
        why = (" The request count falls about 200-fold, but the machine was loaded beyond its cores while"
               " measuring (see the load average), which makes every request and every byte slow and the"
               " times noisy (compare the legacy repeats); rerun on an idle machine before reading the"
               " ratio as the loader's.")
    else:
        why = (f" The request count falls about 200-fold; the defaults read at {chunked['mb_per_s']:.0f} MB/s.")
        if split:
            why += (f" {split['variant']}: {legacy['seconds'] / split['seconds']:.1f}× faster than legacy.")
    out += [
        "",
        f"**Target: chunked ≥ 10× faster than legacy per-tensor reads: {'MET' if ratio >= 10 else 'NOT MET'}"
        f" on this run ({ratio:.1f}×, {legacy['gets']:.0f} vs {chunked['gets']:.0f} GETs).**"
        + ("" if ratio >= 10 else why),
        "",
        "- *chunked*: the defaults (chunks up to 2,000,000,000 bytes, read on an object store in concurrent"
        " 64 MiB sub-range GETs, plus one GET per header, into memory mapped on demand); *one request per"
        " chunk*: the same chunks in one GET each; *16/32/256 MiB requests*: other sub-range sizes"
        " (`requestBytes`); *huge pages*: the defaults with `hugePages=true` (chunks in transparent huge"
        " pages, whose first touch can stall on the kernel's compaction); *legacy*: the loader's per-tensor path (`legacy=true`), one GET per"
        " non-empty tensor with the same prefetch and concurrency settings.",
        "- Python rows count requests by construction (s3fs does not count them): s3fs's whole-file `cat_file`"
        " asks for the size (one HEAD per shard) and then fetches 50 MiB blocks concurrently; the per-tensor"
        " loop is two header reads per shard plus one GET per non-empty tensor, one after another as a plain"
        " loop does. The whole-file variant holds every shard in memory twice (bytes, then tensors).",
    ]
    capped_rows = []
    if a.capped:
        capped = json.loads(Path(a.capped).read_text())
        for v in dict.fromkeys(r["variant"] for r in capped["java_runs"]):
            rs = [r for r in capped["java_runs"] if r["variant"] == v]
            secs = statistics.median(r["seconds"] for r in rs)
            capped_rows.append((v, statistics.median(r["gets"] for r in rs), secs))
        ideal = capped["setup"]["file_bytes"] * 8 / (a.cap_mbit * 1e6)
        out += [
            "",
            f"## Under a bandwidth cap ({a.cap_mbit:.0f} Mbit/s, `tc tbf` on loopback in a private network namespace)",
            "",
            f"Same checkpoint and latency, one repeat of the `--cap-mbit` run (which may be older than the table"
            f" above: `--cap-only` reruns only this part); bytes / cap = {ideal:.2f} s.",
            "",
            "| variant | GET requests | seconds | seconds / (bytes / cap) |",
            "|---|---:|---:|---:|",
        ]
        for v, g, s in capped_rows:
            out.append(f"| {v} | {g:.0f} | {s:.2f} | {s / ideal:.2f} |")
        best = min(s for v, g, s in capped_rows if v.startswith("chunked")) / ideal
        out += ["", f"**Target: chunked seconds ≤ 1.3 × bytes / cap: {'MET' if best <= 1.3 else 'NOT MET'}"
                    f" ({best:.2f}×; one repeat).**"]
    Path(a.out_dir, "loader.md").write_text("\n".join(out) + "\n")

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    names = [r["variant"] for r in rows]
    medians = [r["seconds"] for r in rows]
    spread = [[m - r["min"] for m, r in zip(medians, rows)], [r["max"] - m for m, r in zip(medians, rows)]]
    axes[0].barh(names, medians, xerr=spread, color="#4a7ab5", ecolor="#333333", capsize=3)
    axes[0].set_xlabel("seconds (median, bars: fastest-slowest repeat; lower is better)")
    axes[0].invert_yaxis()
    axes[1].barh(names, [r["gets"] for r in rows], color="#c0504d")
    axes[1].set_xscale("log")
    axes[1].set_xlabel("GET requests (log scale)")
    axes[1].invert_yaxis()
    axes[1].set_yticklabels([])
    fig.suptitle(f"Loading a {gib:.2f} GiB, {setup['tensors']}-tensor checkpoint from s3proxy,"
                 f" {setup['latency_ms']} ms per request (shared 2-core machine)")
    fig.tight_layout()
    fig.savefig(Path(a.out_dir, "loader.png"), dpi=110)


if __name__ == "__main__":
    main()

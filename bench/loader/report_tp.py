"""Turns bench/loader/run-tp.sh's raw JSON into bench/results/loader-tp.md.

Per checkpoint and variant: the median seconds of each rank over the rounds, the median and the
slowest of those, the bytes each rank read against its share (what it was handed out), and the
speedup of a tensor-parallel rank over a rank loading the whole tensors. The load average before
every load is in the raw table; rounds that start above the core count are not headline numbers.
"""
import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path

TARGET_RATIO = 1.1
TARGET_SPEEDUP_W4 = 3.0


def threads_label(setup: dict) -> str:
    if setup["default_threads"] == 0:  # chosen by file system: the object-store default here
        return f"{setup.get('object_store_threads', '?')} worker threads, the object-store default"
    return f"{setup['default_threads']} worker threads"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    raw = json.loads(Path(a.raw).read_text())
    setup = raw["setup"]
    runs = raw["java_runs"] + (json.loads(raw["python_runs"]) if isinstance(raw.get("python_runs"), str)
                               else raw.get("python_runs", []))
    by = defaultdict(list)
    for r in runs:
        how = r["how"] + ("" if r.get("gap_bytes", setup["default_gap"]) == setup["default_gap"]
                          else f", gapBytes {r['gap_bytes'] // 1024} KiB") + (
            "" if r.get("worker_threads", setup["default_threads"]) == setup["default_threads"]
            else f", {r['worker_threads']} threads")
        r["how"] = how
        by[(r["checkpoint"], how, r["world"], r["rank"])].append(r)
    loads = [float(r["load_avg"].split()[0]) for r in runs]
    out = [
        "# Tensor-parallel loads from S3 (s3proxy): each rank its block vs whole tensors vs Python",
        "",
        f"s3proxy on loopback with {setup['latency_ms']} ms per request, S3A classic stream, the loader's defaults"
        f" (gapBytes {setup['default_gap'] // 1024} KiB, {threads_label(setup)}); {setup['rounds']} rounds, every variant once per round in an order rotated per round;"
        f" {setup['cores']} cores, JDK {setup['jdk']}. Checkpoints: the loader benchmark's"
        f" {setup['gib_bytes'] / 2**30:.2f} GiB one (1,000 1-D tensors, so its rule splits 1-D tensors along"
        f" dimension 0), and a transformer of {setup['llm_bytes'] / 2**30:.2f} GiB in BF16 (8 layers, hidden 2048,"
        " MLP 5632, vocabulary 32000: every 2-D weight split along dimension 0, the column-parallel block;"
        " norms whole on every rank).",
        "",
        "A tensor-parallel rank is `SafetensorsLoader.open(config, TensorParallel.of(W, r).selection(), uri)`;"
        " whole tensors is the same load with every tensor whole (what each rank does without slices);"
        " Python is `bench/loader/tp_peer.py`: s3fs downloads each shard whole, then `safe_open(...).get_slice(name)"
        "[start:stop]` (rank 0 measured; every rank downloads the same bytes).",
        "",
        f"Load average (1 min) before the loads: {min(loads):.2f} to {max(loads):.2f}"
        f" (median {statistics.median(loads):.2f}) on {setup['cores']} cores."
        + (" **The machine was busy: not headline numbers.**" if max(loads) > setup["cores"] else ""),
        "",
        "| checkpoint | how | W | ranks | s per rank (median of rank medians) | slowest rank (s) | read / share (worst rank)"
        " | read per rank (MB) | requests per rank | speedup vs whole |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    verdicts = []
    groups = defaultdict(dict)
    for (ckpt, how, world, rank), rs in by.items():
        groups[(ckpt, how, world)][rank] = rs
    for ckpt in dict.fromkeys(k[0] for k in groups):
        whole = groups[(ckpt, "whole tensors", 1)]
        whole_s = statistics.median(r["seconds"] for r in whole[0])
        for key in [k for k in groups if k[0] == ckpt]:
            _, how, world = key
            ranks = groups[key]
            medians = {rk: statistics.median(r["seconds"] for r in rs) for rk, rs in ranks.items()}
            med = statistics.median(medians.values())
            slowest = max(medians.values())
            ratio = max(statistics.median(r["ratio"] for r in rs) for rs in ranks.values())
            read = statistics.median(r["read_bytes"] for rs in ranks.values() for r in rs) / 1e6
            reqs = [r["requests"] for rs in ranks.values() for r in rs if "requests" in r]
            reqs = f"{statistics.median(reqs):.0f}" if reqs else "n/a"
            speedup = whole_s / med
            out.append(f"| {ckpt} | {how} | {world} | {len(ranks)} | {med:.2f} | {slowest:.2f} | {ratio:.3f} |"
                       f" {read:.0f} | {reqs} | {speedup:.2f}x |")
            if how.startswith("tensor parallel"):
                verdicts.append(f"- {ckpt}, {how}, W = {world}: read/share {ratio:.3f}"
                                f" ({'MET' if ratio <= TARGET_RATIO else 'NOT MET'}, target <= {TARGET_RATIO})"
                                + (f"; per-rank speedup {speedup:.2f}x, slowest rank {whole_s / slowest:.2f}x"
                                   f" ({'MET' if speedup >= TARGET_SPEEDUP_W4 else 'NOT MET'}, target >="
                                   f" {TARGET_SPEEDUP_W4}x)" if world == 4 else ""))
    out += ["", "Targets (issue 31): each rank reads at most 1.1x its share (headers counted apart), and a W = 4 rank"
            " loads at least 3x faster than a rank loading whole tensors.", ""] + verdicts
    out += ["", "## Every load", "", "| round | checkpoint | how | W | rank | load avg | seconds | read MB | share MB |",
            "|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(runs, key=lambda r: (r["round"], r["checkpoint"], r["how"], r["world"], r["rank"])):
        out.append(f"| {r['round']} | {r['checkpoint']} | {r['how']} | {r['world']} | {r['rank']} | {r['load_avg']} |"
                   f" {r['seconds']:.2f} | {r['read_bytes'] / 1e6:.1f} | {r['share_bytes'] / 1e6:.1f} |")
    out += ["", "Regenerate: `bench/loader/run-tp.sh [latency ms=20] [rounds=3]` (one command; raw JSON in"
            " `bench/results/raw/loader-tp.json`).", ""]
    Path(a.out).write_text("\n".join(out))


if __name__ == "__main__":
    main()

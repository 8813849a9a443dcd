"""Report of bench/sampler.sh: a markdown table and a bar chart of samples/s."""
import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# headwater on a 2 M-row / 4.1 M-edge database, measured by the author (not in this run).
HEADWATER_PUBLISHED = "about 350-395 samples/s on 1 thread and 690-840 on 2 (B = 32 and 128, S = 1024)"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out-dir", required=True)
    args = ap.parse_args()
    raw = json.loads(Path(args.raw).read_text())
    out = Path(args.out_dir)
    java = [r for r in raw["results"] if r["impl"] == "java"]
    hw = {(r["batch"], r["threads"]): r for r in raw["results"] if r["impl"] == "headwater"}
    base = {r["batch"]: r for r in java if r["threads"] == 1}

    lines = [
        "# Sampler throughput",
        "",
        f"Database: {raw['database']['rows']:,} rows, {raw['database']['edges']:,} FK edges, "
        f"{raw['database']['tasks']} tasks (`SyntheticDatabase`, seed 1). JVM {raw['jvm']}, "
        f"{raw['cpus']} CPUs. Command: `bench/sampler.sh`; raw data: `results/raw/sampler.json`.",
        "",
        "| B | S | threads | samples/s | samples per CPU-s | vs 1 thread | headwater samples/s (same run) "
        "| headwater samples per CPU-s | alloc/batch | load avg (before, after) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in java:
        h = hw.get((r["batch"], r["threads"]))
        hcell = "absent" if h is None or h["samples_per_s"] is None else (
            f"{h['samples_per_s']:.0f} (ours / theirs {r['samples_per_s'] / h['samples_per_s']:.2f})")
        hcpu = "absent" if h is None or h.get("samples_per_cpu_s") is None else (
            f"{h['samples_per_cpu_s']:.0f} (ours / theirs {r['samples_per_cpu_s'] / h['samples_per_cpu_s']:.2f})")
        scale = r["samples_per_s"] / base[r["batch"]]["samples_per_s"]
        lines.append(
            f"| {r['batch']} | {r['seq']} | {r['threads']} | {r['samples_per_s']:.0f} | "
            f"{r['samples_per_cpu_s']:.0f} | {scale:.2f} | {hcell} | {hcpu} | "
            f"{r['alloc_bytes_per_batch'] / 1024:.1f} KiB | {r['load_before']:.1f}, {r['load_after']:.1f} |")
    lines += [
        "",
        "- *samples per CPU-s* divides by the CPU time of the whole process (JIT and GC threads included), "
        "so it is comparable across runs on a shared machine where wall-clock rates are not.",
        "- *alloc/batch*: heap bytes allocated by all threads per batch in steady state "
        "(`ThreadMXBean.getTotalThreadAllocatedBytes`); batch tensors live in pooled native memory.",
        "- load: the load average is recorded per row. Above about 2 (the CPU count) other work shared the "
        "machine, which depresses and scatters the wall-clock columns; the per-CPU-second columns and the "
        "same-run ratios are the numbers to compare.",
        "- headwater: " + ("run in the same job through `HEADWATER_BENCH_CMD` "
                           f"(`{raw['headwater']}`): headwater's `common.rs` and `sampler.rs` from mrdmnd/tributary "
                           "d9f4125, built outside this repository (release, thin LTO, target-cpu=native, mimalloc, "
                           "as its Cargo.toml sets), driven through its public `Sampler` API: train batches pulled "
                           "after a warm-up, on a rayon pool of `threads` threads, process CPU time from "
                           "/proc/self/stat. Its val producer runs too, as it always does; ours are timed on "
                           "`BatchBuilder.stream(TRAIN)` alone. The same database gives identical batches in both "
                           "(checked on the first two B=8 batches; `HeadwaterSynthDigestTest` keeps a smaller case)."
                           if raw["headwater"] else
                           "**not run** (`HEADWATER_BENCH_CMD` unset). For context only, not a same-run "
                           "baseline: " + HEADWATER_PUBLISHED + "."),
        "",
        "![samples/s](sampler.png)",
        "",
    ]
    (out / "sampler.md").write_text("\n".join(lines))

    fig, ax = plt.subplots(figsize=(7, 4))
    labels = [f"B={r['batch']}\n{r['threads']} thr" for r in java]
    xs = range(len(java))
    ax.bar([x - 0.2 for x in xs], [r["samples_per_s"] for r in java], width=0.4, label="samples/s (wall)")
    ax.bar([x + 0.2 for x in xs], [r["samples_per_cpu_s"] for r in java], width=0.4,
           label="samples per CPU-second")
    if hw:
        def of(r, key):
            return hw.get((r["batch"], r["threads"]), {}).get(key) or 0
        ax.scatter([x - 0.2 for x in xs], [of(r, "samples_per_s") for r in java], color="black", marker="_",
                   s=600, linewidths=3, label="headwater, same run (wall / per CPU-second)", zorder=3)
        ax.scatter([x + 0.2 for x in xs], [of(r, "samples_per_cpu_s") for r in java], color="black",
                   marker="_", s=600, linewidths=3, zorder=3)
    ax.set_xticks(list(xs), labels)
    ax.set_ylabel("samples/s, S = 1024")
    ax.set_title("safetensors-jvm sampler, 2 M-row synthetic database")
    ax.legend(loc="upper left", fontsize=8)
    ax.set_ylim(0, max(r["samples_per_cpu_s"] for r in java) * 1.3)
    fig.tight_layout()
    fig.savefig(out / "sampler.png", dpi=120)


if __name__ == "__main__":
    main()
